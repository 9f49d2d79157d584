package portfolio

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type answer struct {
	status int
	header http.Header
	body   []byte
}

// stalledUpload starts a chunked upload that sends its fields and the first 64 KiB of its file,
// then waits for gate before sending the rest. It answers once the server did. The same
// idemKey gives the same body (fixed boundary), so a second one is a retry of the first.
func stalledUpload(t *testing.T, base, key, idemKey string, gate <-chan struct{}) <-chan answer {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	if idemKey != "" {
		if err := mw.SetBoundary("boundary-" + idemKey); err != nil {
			t.Fatal(err)
		}
	}
	content := bytes.Repeat([]byte("0001"+strings.Repeat(" ", 252)+"\n"), 1024) // 257 KiB
	go func() {
		err := mw.WriteField("format", "gdv_vu_vermittler")
		var fw io.Writer
		if err == nil {
			fw, err = mw.CreateFormFile("file", "langsam.gdv")
		}
		if err == nil {
			_, err = fw.Write(content[:64<<10])
		}
		<-gate
		if err == nil {
			_, err = fw.Write(content[64<<10:])
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+app.V1Prefix+"/portfolio-transfers", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+key)
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			done <- answer{body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- answer{resp.StatusCode, resp.Header, b}
	}()
	return done
}

// companyBlobDir is the directory of the company's portfolio blobs in the file blob store.
func companyBlobDir(t *testing.T, env *apitest.Env, co *apitest.Company) string {
	t.Helper()
	dir, ok := strings.CutPrefix(env.Config.BlobURL, "file://")
	if !ok {
		t.Fatalf("BLOB_URL %q is not a directory", env.Config.BlobURL)
	}
	dir, _, _ = strings.Cut(dir, "?")
	return filepath.Join(filepath.FromSlash(dir), "portfolio", co.ID.String())
}

// TestPortfolio_SlowUploadsHoldNoConnection: uploads whose clients stall in the middle of the
// file hold no database connection or transaction (the route authenticates in a transaction
// of its own and records the transfer in another): with a request pool of 2 connections and 3
// uploads stalled inside the handler (their blobs being written), other requests of the same
// credential still answer. Released, the uploads finish (202); the one with an
// Idempotency-Key replays its answer. Before, each stalled upload held a pinned transaction and
// the third request waited for a connection until an upload ended.
func TestPortfolio_SlowUploadsHoldNoConnection(t *testing.T) {
	env := apitest.New(t, app.WithConfig(func(c *app.Config) { c.DBMaxConns = 2 }))
	co := env.NewCompany(t)
	base := env.Listen(t)
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	uploads := []<-chan answer{
		stalledUpload(t, base, co.Secret, "slow-1", gate),
		stalledUpload(t, base, co.Secret, "", gate),
		stalledUpload(t, base, co.Secret, "", gate),
	}
	// Each upload is inside the handler once its blob is being written (fileblob's .tmp file).
	// With the pool held by stalled uploads the third never gets there: a generous bound, not
	// a speed check.
	dir := companyBlobDir(t, env, co)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("not every stalled upload reached the handler: the others hold the pool of 2")
		}
		entries, _ := os.ReadDir(dir)
		n := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				n++
			}
		}
		if n == len(uploads) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A generous bound, not a speed check: with the pool held by the uploads this request
	// would wait until they end, which they do only after the gate opens.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, path := range []string{"/portfolio-transfers", "/me"} {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+app.V1Prefix+path, nil)
		req.Header.Set("Authorization", "Bearer "+co.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s while 3 uploads stall (pool of 2): %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s while 3 uploads stall: %d", path, resp.StatusCode)
		}
	}
	release()
	var first []byte
	for i, u := range uploads {
		r := <-u
		if r.status != 202 {
			t.Fatalf("upload %d: %d %s", i, r.status, r.body)
		}
		if i == 0 {
			first = r.body
		}
	}
	if n := blobs(t, env, co); n != 3 {
		t.Errorf("%d blobs, want 3", n)
	}
	// The same upload again with its Idempotency-Key: the stored answer, no fourth transfer.
	r := <-stalledUpload(t, base, co.Secret, "slow-1", gate)
	if r.status != 202 || r.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.body, first) {
		t.Errorf("replay: %d %v %s", r.status, r.header, r.body)
	}
	if n := blobs(t, env, co); n != 3 {
		t.Errorf("%d blobs after the replay, want 3", n)
	}
}

// TestPortfolio_FailedRecordLeavesNoBlob: when recording the transfer fails after its file was
// stored (here a trigger refusing the row), the blob is removed at once; a blob a crash left
// between storing and recording (simulated: a blob under the company's prefix, no row) is
// removed by the orphan sweep once older than documents.OrphanAge; the transfers' blobs stay.
// Not parallel: the sweep judges every blob of the bucket.
func TestPortfolio_FailedRecordLeavesNoBlob(t *testing.T) {
	env := apitest.New(t)
	co := env.NewCompany(t)
	base := env.Listen(t)
	for _, q := range []string{
		`CREATE FUNCTION test_fail_transfer() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'simulated failure' USING ERRCODE = 'P0001'; END $$`,
		`CREATE TRIGGER test_fail_transfer BEFORE INSERT ON portfolio_transfers FOR EACH ROW
		WHEN (NEW.filename = 'scheitert.gdv') EXECUTE FUNCTION test_fail_transfer()`,
	} {
		if _, err := env.OwnerDB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ok, _ := streamedUpload(t, base, co.Secret, map[string]string{"format": "gdv_vu_vermittler"}, strings.NewReader("0001 bleibt\n"), true)
	if ok != 202 {
		t.Fatalf("upload: %d", ok)
	}
	body, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler"}, "scheitert.gdv", []byte("0001 scheitert\n"))
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers", Key: co.Secret, Body: body,
		Header: map[string]string{"Content-Type": ct}})
	if r.Status != 500 {
		t.Fatalf("failed record: %d %s", r.Status, r.Body)
	}
	if n := blobs(t, env, co); n != 1 {
		t.Errorf("%d blobs after a failed record, want 1 (the recorded transfer's)", n)
	}

	ctx := context.Background()
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	orphan := blobstore.NewKey("portfolio", co.ID)
	if err := bucket.WriteAll(ctx, orphan, []byte("0001 verwaist\n"), nil); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, env.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	later := documents.NewSweeper(pool, bucket, func() time.Time { return time.Now().Add(documents.OrphanAge + time.Minute) }, zerolog.Nop())
	if _, err := later.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := bucket.Exists(ctx, orphan); ok {
		t.Errorf("the sweep left the orphan portfolio blob")
	}
	if n := blobs(t, env, co); n != 1 {
		t.Errorf("%d blobs after the sweep, want 1 (the recorded transfer's)", n)
	}
}
