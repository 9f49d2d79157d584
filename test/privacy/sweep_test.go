package privacy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/brokerdesk/brokerdesk/app/privacy"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSweep_EndsRetentionAndLinks: the periodic sweep deletes a retained record whose period
// ended, with its file, and keeps one whose period runs; it deletes the ZIP of an export whose
// link expired and keeps the request (without its file). Catches a sweep that never finds the
// companies (privacy_sweep_due), deletes by the wrong date, forgets the blobs, or deletes the
// request's record.
func TestSweep_EndsRetentionAndLinks(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	req := requestExport(t, env, co.Secret, ct)
	await(t, env, co.Secret, req)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()))
	blob := func(key string) string {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("aufbewahrt"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ended := "retained/" + co.ID.String() + "/" + req.ID + "/ended-0"
	running := "retained/" + co.ID.String() + "/" + req.ID + "/running-0"
	endedFile, runningFile := blob(ended), blob(running)
	insert := func(key string, until time.Time) uuid.UUID {
		id := uuid.Must(uuid.NewV7())
		if _, err := env.OwnerDB.ExecContext(ctx, `INSERT INTO retained_records (id, company_id, request_id, contact_id,
			record_type, record_id, basis, data, blob_keys, retain_until, created_at)
			VALUES ($1, $2, $3, $4, 'document', $5, 'HGB § 257', '{}', $6, $7, now())`,
			id, co.ID, req.ID, ct, uuid.New(), `["`+key+`"]`, until); err != nil {
			t.Fatal(err)
		}
		return id
	}
	endedID := insert(ended, time.Now().AddDate(0, 0, -2))
	runningID := insert(running, time.Now().AddDate(6, 0, 0))
	var zip string
	if err := env.OwnerDB.QueryRowContext(ctx, `UPDATE privacy_requests SET expires_at = now() - interval '1 hour'
		WHERE id = $1 RETURNING blob_key`, req.ID).Scan(&zip); err != nil {
		t.Fatal(err)
	}
	zipFile := filepath.Join(dir, filepath.FromSlash(zip))
	if _, err := os.Stat(zipFile); err != nil {
		t.Fatalf("the export's ZIP before the sweep: %v", err)
	}

	if state := runJob(t, env, privacy.SweepArgs{}); state != "completed" {
		t.Fatalf("sweep job %s", state)
	}
	left := map[uuid.UUID]bool{}
	rows, err := env.OwnerDB.QueryContext(ctx, `SELECT id FROM retained_records WHERE id = ANY($1::uuid[])`,
		[]string{endedID.String(), runningID.String()})
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		_ = rows.Scan(&id)
		left[id] = true
	}
	_ = rows.Close()
	if left[endedID] || !left[runningID] {
		t.Errorf("retained records left: ended %v (want false), running %v (want true)", left[endedID], left[runningID])
	}
	if _, err := os.Stat(endedFile); !os.IsNotExist(err) {
		t.Errorf("the ended record's file: %v, want gone", err)
	}
	if _, err := os.Stat(runningFile); err != nil {
		t.Errorf("the running record's file: %v", err)
	}
	if _, err := os.Stat(zipFile); !os.IsNotExist(err) {
		t.Errorf("the expired export's ZIP: %v, want gone", err)
	}
	got := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?contactId="+ct).Data
	if len(got) != 1 || got[0].Status != "completed" {
		t.Errorf("the export's request after the sweep: %+v", got)
	}
}

// runJob inserts a job for the server's workers and waits until it has ended (30 s at most);
// it returns the job's final state (completed, cancelled, discarded).
func runJob(t testing.TB, env *apitest.Env, args river.JobArgs) string {
	t.Helper()
	ctx := context.Background()
	rc, err := river.NewClient(riverdatabasesql.New(env.OwnerDB), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rc.Insert(ctx, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state string
		if err := env.OwnerDB.QueryRowContext(ctx, `SELECT state FROM river.river_job WHERE id = $1`, res.Job.ID).Scan(&state); err != nil {
			t.Fatal(err)
		}
		switch state {
		case "completed", "cancelled", "discarded":
			return state
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s after 30 s", args.Kind(), state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSweep_FinishesAfterACrash: a sweep that died after deleting an expired export's ZIP (or a
// retained record's file) but before its commit finds the request (the record) again; the next
// sweep clears the request's file and deletes the record although the files are gone already.
// Catches a sweep that takes an already deleted file for a failure and keeps the row (and a
// warning an hour) for ever, which deleting the files before the rows would bring.
func TestSweep_FinishesAfterACrash(t *testing.T) {
	t.Parallel()
	env := setup(t)
	ctx := context.Background()
	co := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	req := requestExport(t, env, co.Secret, ct)
	await(t, env, co.Secret, req)
	var zip string
	if err := env.OwnerDB.QueryRowContext(ctx, `UPDATE privacy_requests SET expires_at = now() - interval '1 hour'
		WHERE id = $1 RETURNING blob_key`, req.ID).Scan(&zip); err != nil {
		t.Fatal(err)
	}
	// The crash: files deleted, nothing committed.
	if err := os.Remove(blobFile(zip)); err != nil {
		t.Fatal(err)
	}
	record := uuid.Must(uuid.NewV7())
	if _, err := env.OwnerDB.ExecContext(ctx, `INSERT INTO retained_records (id, company_id, request_id, contact_id,
		record_type, record_id, basis, data, blob_keys, retain_until, created_at)
		VALUES ($1, $2, $3, $4, 'document', $5, 'HGB § 257', '{}', $6, now() - interval '2 days', now())`,
		record, co.ID, req.ID, ct, uuid.New(), `["retained/`+co.ID.String()+`/`+req.ID+`/gone-0"]`); err != nil {
		t.Fatal(err)
	}
	if err := eraser(t, env, nil, nil).Sweep(ctx); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if n := countRows(t, env, `SELECT count(*) FROM privacy_requests WHERE id = $1 AND blob_key IS NOT NULL`, req.ID); n != 0 {
		t.Error("the expired export keeps its blobKey after the sweep")
	}
	if n := countRows(t, env, `SELECT count(*) FROM retained_records WHERE id = $1`, record); n != 0 {
		t.Error("the ended record whose file was gone is kept")
	}
}
