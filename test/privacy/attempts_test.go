package privacy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/privacy"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// eraser builds a privacy module of its own over the package database, as the server builds
// it, with the erasure's hooks: the test runs the attempts (Module.Erase) of requests made by
// queueErasure, which inserts no job for the server's workers to take.
func eraser(t testing.TB, env *apitest.Env, before, after func(uuid.UUID) error) *privacy.Module {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, env.Config.JobsDatabaseURL)
	if err != nil {
		t.Fatalf("jobs pool: %v", err)
	}
	t.Cleanup(pool.Close)
	db := ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(pool))))
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatalf("blob: %v", err)
	}
	t.Cleanup(func() { _ = bucket.Close() })
	return privacy.New(privacy.Deps{Pool: pool, DB: db, Bucket: bucket,
		Contacts:          contacts.NewService(events.NewService(), env.Config.DataKeys, time.Now),
		BeforeEraseCommit: before, AfterEraseCommit: after})
}

// queueErasure records an erasure of contact ct as POST /contacts/{id}/privacy/erasure does,
// without its job.
func queueErasure(t testing.TB, env *apitest.Env, co *apitest.Company, ct string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	if _, err := env.OwnerDB.Exec(`INSERT INTO privacy_requests (id, company_id, created_at, updated_at, type, status,
		contact_id, requested_at) VALUES ($1, $2, now(), now(), 'erasure', 'queued', $3, now())`, id, co.ID, ct); err != nil {
		t.Fatalf("privacy request: %v", err)
	}
	return id
}

// blobFile is where the test server's bucket keeps key.
func blobFile(key string) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()), filepath.FromSlash(key))
}

func exists(t testing.TB, key string) bool {
	t.Helper()
	_, err := os.Stat(blobFile(key))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// blobsIn lists the blobs of the test server's bucket in dir (not the driver's .attrs files).
func blobsIn(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".attrs") {
			out = append(out, e.Name())
		}
	}
	return out
}

func requestState(t testing.TB, env *apitest.Env, id uuid.UUID) (status, msg string) {
	t.Helper()
	if err := env.OwnerDB.QueryRow(`SELECT status, error FROM privacy_requests WHERE id = $1`, id).Scan(&status, &msg); err != nil {
		t.Fatal(err)
	}
	return status, msg
}

func countRows(t testing.TB, env *apitest.Env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := env.OwnerDB.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestErasure_FilesOutliveACrash: an erasure that dies after its commit, before it deleted the
// files of the rows it deleted (a document of no retained type, the uploaded file of a finished
// import with the person's row), leaves a record of them; the next attempt of the job, or the
// hourly sweep, deletes the files and the record. Catches the files being named by no row after
// the commit (the import's file is under no orphan sweep's prefix), a retry that does nothing
// for a completed request, a sweep that does not see the record, and a record that outlives
// its files' deletion; and, the crash being the job's last attempt, the deletion of the retained
// copies that the completed request's records name (as if the erasure had failed).
func TestErasure_FilesOutliveACrash(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	crash := errors.New("the process died after the commit")
	for _, then := range []string{"retry", "sweep"} {
		t.Run(then, func(t *testing.T) {
			co := env.NewCompany(t)
			p := newPerson()
			ct := createContact(t, env, co.Secret, p, "")
			doc := uploadDoc(t, env, co.Secret, ct, "other", "notiz.pdf", []byte("%PDF-1.4\n% "+p.Last+"\n%%EOF\n"))
			var docKey string
			if err := env.OwnerDB.QueryRow(`SELECT blob_key FROM documents WHERE id = $1`, doc).Scan(&docKey); err != nil {
				t.Fatal(err)
			}
			importKey := seedImport(t, env, co, ct, p)
			uploadDoc(t, env, co.Secret, ct, "policy", "police.pdf", []byte("%PDF-1.4\n% "+p.Last+"\n%%EOF\n")) // retained: copied
			req := queueErasure(t, env, co, ct)
			copies := filepath.Dir(blobFile("retained/" + co.ID.String() + "/" + req.String() + "/x"))
			m := eraser(t, env, nil, func(id uuid.UUID) error {
				if id == req {
					return crash
				}
				return nil
			})
			if err := m.Erase(ctx, co.ID, req, 8, 8); !errors.Is(err, crash) {
				t.Fatalf("last attempt: %v, want the crash", err)
			}
			if st, _ := requestState(t, env, req); st != "completed" {
				t.Fatalf("after the commit: %s", st)
			}
			// The crash left the files (else this test proves nothing) and their record.
			if !exists(t, docKey) || !exists(t, importKey) {
				t.Fatalf("files after the crash: document %v, import %v; want both left", exists(t, docKey), exists(t, importKey))
			}
			pending := `SELECT count(*) FROM retained_records WHERE request_id = $1 AND record_type = 'erased_files'`
			if n := countRows(t, env, pending, req); n != 1 {
				t.Fatalf("records of the files to delete: %d, want 1", n)
			}
			if then == "retry" {
				if err := eraser(t, env, nil, nil).Erase(ctx, co.ID, req, 9, 9); err != nil {
					t.Fatalf("retry: %v", err)
				}
			} else if err := eraser(t, env, nil, nil).Sweep(ctx); err != nil {
				t.Fatalf("sweep: %v", err)
			}
			if exists(t, docKey) || exists(t, importKey) {
				t.Errorf("files after the %s: document %v, import %v; want both gone", then, exists(t, docKey), exists(t, importKey))
			}
			if n := countRows(t, env, pending, req); n != 0 {
				t.Errorf("records of the files to delete after the %s: %d, want 0", then, n)
			}
			if n := len(blobsIn(copies)); n != 1 {
				t.Errorf("retained copies after the %s: %d, want the policy's", then, n)
			}
		})
	}
}

// TestErasure_EveryAttemptFails: an erasure whose every attempt fails before its commit ends
// failed with a clear error, deletes the retained copies it made (no record names them), and
// leaves the contact and its files as they were. Catches copies under retained/ that no
// record and no sweep would ever reach, a request left processing for ever, and a failed run
// that deleted something.
func TestErasure_EveryAttemptFails(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	p := newPerson()
	ct := createContact(t, env, co.Secret, p, "")
	doc := uploadDoc(t, env, co.Secret, ct, "policy", "police.pdf", []byte("%PDF-1.4\n% "+p.Last+"\n%%EOF\n")) // retained: copied
	req := queueErasure(t, env, co, ct)
	broken := errors.New("the database went away")
	m := eraser(t, env, func(id uuid.UUID) error {
		if id == req {
			return broken
		}
		return nil
	}, nil)
	copies := filepath.Dir(blobFile("retained/" + co.ID.String() + "/" + req.String() + "/x"))
	if err := m.Erase(ctx, co.ID, req, 1, 2); !errors.Is(err, broken) {
		t.Fatalf("attempt 1: %v", err)
	}
	if len(blobsIn(copies)) == 0 {
		t.Fatal("no copy after the first attempt: the test proves nothing")
	}
	if st, _ := requestState(t, env, req); st != "processing" {
		t.Fatalf("after attempt 1 of 2: %s, want processing", st)
	}
	if err := m.Erase(ctx, co.ID, req, 2, 2); !errors.Is(err, broken) {
		t.Fatalf("attempt 2: %v", err)
	}
	if st, msg := requestState(t, env, req); st != "failed" || msg == "" {
		t.Errorf("after the last attempt: %s %q, want failed with an error", st, msg)
	}
	if n := len(blobsIn(copies)); n != 0 {
		t.Errorf("copies left under %s: %d", copies, n)
	}
	if n := countRows(t, env, `SELECT count(*) FROM retained_records WHERE request_id = $1`, req); n != 0 {
		t.Errorf("retained records of the failed erasure: %d", n)
	}
	if r := env.Do(t, apitest.Request{Path: "/contacts/" + ct, Key: co.Secret}); r.Status != 200 {
		t.Errorf("the contact after the failed erasure: %d", r.Status)
	}
	if r := env.Do(t, apitest.Request{Path: "/documents/" + doc + "/content", Key: co.Secret}); r.Status != 200 {
		t.Errorf("the document's file after the failed erasure: %d", r.Status)
	}
}

// TestErasure_WaitsForImports: while an import of the company is queued, being analysed or being
// committed, the erasure waits (ErrImportsRunning; the worker snoozes) and changes nothing; once
// the import is analysed, the erasure runs and deletes its file and the person's cells. Catches
// an erasure that runs beside an analysis (which may link the person's row afterwards, its file
// kept for ever) or a commit (which may write the person again), and an analysed import's file
// with the person's row that is kept.
func TestErasure_WaitsForImports(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	p := newPerson()
	ct := createContact(t, env, co.Secret, p, "")
	key := seedImport(t, env, co, ct, p)
	var imp uuid.UUID
	if err := env.OwnerDB.QueryRow(`SELECT id FROM contact_imports WHERE blob_key = $1`, key).Scan(&imp); err != nil {
		t.Fatal(err)
	}
	// Not committed yet: the row's analysis found the contact, no outcome.
	if _, err := env.OwnerDB.Exec(`UPDATE contact_import_rows SET outcome = NULL, analysis = 'duplicate' WHERE import_id = $1`, imp); err != nil {
		t.Fatal(err)
	}
	req := queueErasure(t, env, co, ct)
	m := eraser(t, env, nil, nil)
	for _, status := range []string{"queued", "analyzing", "running"} {
		if _, err := env.OwnerDB.Exec(`UPDATE contact_imports SET status = $2 WHERE id = $1`, imp, status); err != nil {
			t.Fatal(err)
		}
		if err := m.Erase(ctx, co.ID, req, 1, 8); !errors.Is(err, privacy.ErrImportsRunning) {
			t.Errorf("import %s: %v, want ErrImportsRunning", status, err)
		}
	}
	if r := env.Do(t, apitest.Request{Path: "/contacts/" + ct, Key: co.Secret}); r.Status != 200 || !exists(t, key) {
		t.Fatalf("while the import ran: contact %d, file %v; want both there", r.Status, exists(t, key))
	}
	if _, err := env.OwnerDB.Exec(`UPDATE contact_imports SET status = 'analyzed' WHERE id = $1`, imp); err != nil {
		t.Fatal(err)
	}
	if err := m.Erase(ctx, co.ID, req, 1, 8); err != nil {
		t.Fatalf("after the analysis: %v", err)
	}
	if st, _ := requestState(t, env, req); st != "completed" {
		t.Errorf("request: %s", st)
	}
	if exists(t, key) {
		t.Error("the analysed import's file is kept")
	}
	if n := countRows(t, env, `SELECT count(*) FROM contact_import_rows WHERE import_id = $1 AND cells <> '{}'`, imp); n != 0 {
		t.Errorf("import rows with cells: %d", n)
	}
	// The person's row, not committed yet, is one a commit skips.
	if n := countRows(t, env, `SELECT count(*) FROM contact_import_rows WHERE import_id = $1 AND analysis <> 'invalid'`, imp); n != 0 {
		t.Errorf("import rows a commit would write: %d", n)
	}
}
