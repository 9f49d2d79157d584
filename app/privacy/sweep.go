package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"gocloud.dev/gcerrors"

	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/maintenance"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// SweepEvery is the cadence of the privacy sweep: retention periods end on a day, export links
// to the second; an hour keeps an expired ZIP in the bucket at most that long past its link.
const SweepEvery = time.Hour

// SweepArgs name the periodic privacy sweep (on river's leader, as the other sweeps).
type SweepArgs struct{}

// Kind names the job.
func (SweepArgs) Kind() string { return "privacy_sweep" }

// InsertOpts: the maintenance queue. A sweep is idempotent (what it deletes is gone for the
// next), so two queued at once only repeat a read.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDefault, MaxAttempts: 3}
}

// dueSQL lists the companies with something to sweep (migrations/20261213120000_privacy_erasure.sql).
const dueSQL = `SELECT company_id FROM public.privacy_sweep_due()`

// Sweep deletes, company by company, the retained records whose period ended (with their
// files; also the files an erasure's commit left to delete, record type erasedFiles) and the
// ZIPs of exports whose link expired (the request stays, without its file). Each company is one
// transaction. A record goes (a request loses its blobKey) only once its files are deleted, so
// a sweep or erasure that dies halfway leaves the record for the next sweep.
func (m *Module) Sweep(ctx context.Context) error {
	rows, err := m.d.Pool.Query(ctx, dueSQL)
	if err != nil {
		return fmt.Errorf("privacy sweep: companies due: %w", err)
	}
	var due []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		due = append(due, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, company := range due {
		if err := m.sweepCompany(ctx, company); err != nil {
			return fmt.Errorf("privacy sweep of company %s: %w", company, err)
		}
	}
	return nil
}

func (m *Module) sweepCompany(ctx context.Context, company uuid.UUID) error {
	now := m.now()
	return tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		if _, err := m.dropRecords(ctx, `SELECT id, blob_keys::text FROM retained_records WHERE retain_until < $1::date`,
			now.Format(time.DateOnly)); err != nil {
			return err
		}
		// Expired exports: the ZIP first, then the request's blobKey, as the records above; a
		// sweep that dies in between finds the request again (its ZIP already gone counts).
		type export struct {
			id  uuid.UUID
			key string
		}
		var due []export
		if err := query(ctx, `SELECT id, blob_key FROM privacy_requests WHERE blob_key IS NOT NULL AND expires_at < $1
			FOR UPDATE`, []any{now}, func(rows rowScanner) error {
			var e export
			if err := rows.Scan(&e.id, &e.key); err != nil {
				return err
			}
			due = append(due, e)
			return nil
		}); err != nil {
			return err
		}
		var gone []uuid.UUID
		for _, e := range due {
			if err := m.d.Bucket.Delete(context.WithoutCancel(ctx), e.key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
				m.d.Log.Warn().Err(err).Str("privacy_request_id", e.id.String()).Msg("privacy sweep: delete export (the next sweep retries)")
				continue
			}
			gone = append(gone, e.id)
		}
		if len(gone) == 0 {
			return nil
		}
		_, err := tenancy.Client(ctx).ExecContext(ctx, `UPDATE privacy_requests SET blob_key = NULL, updated_at = $1
			WHERE id = ANY($2::uuid[])`, now, gone)
		return err
	})
}

// dropRecords deletes the retained records q selects (id, blob_keys as JSON text) in the
// transaction of ctx: first their files (one already gone counts as deleted), then each record
// whose files are all gone. A file the store fails to delete keeps its record for the next
// sweep. Unlocked (the job role holds no UPDATE on the table, which FOR UPDATE needs): a sweep
// and an erasure's retry on the same record both delete the same files and the record, which
// is what one of them alone would do.
func (m *Module) dropRecords(ctx context.Context, q string, args ...any) (int, error) {
	type record struct {
		id   uuid.UUID
		keys []string
	}
	var due []record
	err := query(ctx, q, args, func(rows rowScanner) error {
		var r record
		var raw []byte
		if err := rows.Scan(&r.id, &raw); err != nil {
			return err
		}
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &r.keys); err != nil {
				return err
			}
		}
		due = append(due, r)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("retained records due: %w", err)
	}
	var gone []uuid.UUID
	for _, r := range due {
		ok := true
		for _, k := range r.keys {
			if err := m.d.Bucket.Delete(context.WithoutCancel(ctx), k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
				m.d.Log.Warn().Err(err).Str("retained_record_id", r.id.String()).Msg("privacy: delete file (the sweep retries)")
				ok = false
			}
		}
		if ok {
			gone = append(gone, r.id)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	if _, err := tenancy.Client(ctx).ExecContext(ctx, `DELETE FROM retained_records WHERE id = ANY($1::uuid[])`, gone); err != nil {
		return 0, fmt.Errorf("delete retained records: %w", err)
	}
	return len(gone), nil
}

// PeriodicJobs are the area's periodic jobs: the sweep.
func (m *Module) periodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{maintenance.Every(SweepEvery, SweepArgs{})}
}
