package documents

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/commissionstatement"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// blobDir is the directory of the test server's bucket (a file:// BLOB_URL).
func blobDir(t *testing.T, env *apitest.Env) string {
	t.Helper()
	u, err := url.Parse(env.Config.BlobURL)
	if err != nil || u.Scheme != "file" {
		t.Fatalf("BLOB_URL %q is not a directory", env.Config.BlobURL)
	}
	return filepath.FromSlash(u.Path)
}

func companyBlobDir(t *testing.T, env *apitest.Env, company string) string {
	return filepath.Join(blobDir(t, env), "documents", company)
}

// blobCount counts a company's document blobs (not fileblob's .attrs files).
func blobCount(t *testing.T, env *apitest.Env, company string) int {
	t.Helper()
	entries, _ := os.ReadDir(companyBlobDir(t, env, company))
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".attrs") {
			n++
		}
	}
	return n
}

func blobPath(t *testing.T, env *apitest.Env, d document) string {
	t.Helper()
	return filepath.Join(blobDir(t, env), filepath.FromSlash(blobKey(t, env, d.ID)))
}

// TestDocuments_Sweep: a blob written by an upload that crashed before its row (simulated: a
// blob under the company's prefix and no row) is removed by the sweep once it is older than
// documents.OrphanAge, never before; a document's blob is never removed. The same for a
// commission statement's file (the prefix commissions/). Not parallel: the
// sweep judges every blob of the bucket, and an upload of a parallel test between its blob and
// its commit would look like an orphan to a clock two hours ahead.
func TestDocuments_Sweep(t *testing.T) {
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	d := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "bleibt.pdf", pdf)

	ctx := context.Background()
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	orphan := blobstore.NewKey(documents.BlobPrefix, a.ID)
	if err := bucket.WriteAll(ctx, orphan, pdf, nil); err != nil {
		t.Fatal(err)
	}
	// A commission statement's file (app/commissions): one held by its row, one whose upload
	// crashed before the row.
	held, lost := blobstore.NewKey("commissions", a.ID), blobstore.NewKey("commissions", a.ID)
	for _, k := range []string{held, lost} {
		if err := bucket.WriteAll(ctx, k, []byte("Vertragsnummer;Betrag;Buchungsdatum\n"), nil); err != nil {
			t.Fatal(err)
		}
	}
	env.InCompany(t, a.ID, func(ctx context.Context, db *ent.Client) error {
		return db.CommissionStatement.Create().SetFormat(commissionstatement.FormatCsv).SetFilename("abrechnung.csv").
			SetSize(36).SetSha256(strings.Repeat("0", 64)).SetBlobKey(held).Exec(ctx)
	})
	pool, err := pgxpool.New(ctx, env.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	exists := func(key string) bool {
		ok, err := bucket.Exists(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	now := time.Now()
	young := documents.NewSweeper(pool, bucket, func() time.Time { return now }, zerolog.Nop())
	if _, err := young.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(orphan) {
		t.Fatalf("the sweep removed a blob younger than %s", documents.OrphanAge)
	}

	later := documents.NewSweeper(pool, bucket, func() time.Time { return now.Add(documents.OrphanAge + time.Minute) }, zerolog.Nop())
	r, err := later.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if exists(orphan) {
		t.Errorf("the orphan survived the sweep (%+v)", r)
	}
	if !exists(blobKey(t, env, d.ID)) {
		t.Errorf("the sweep removed a document's blob")
	}
	if exists(lost) || !exists(held) {
		t.Errorf("commission files after the sweep: orphan kept %v, statement's file kept %v", exists(lost), exists(held))
	}
	if r.Removed < 1 || r.Checked < 2 {
		t.Errorf("result %+v", r)
	}
	if got := env.Do(t, apitest.Request{Path: "/documents/" + d.ID + "/content", Key: a.Secret}); got.Status != 200 {
		t.Errorf("download after the sweep: %d", got.Status)
	}
}
