package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

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
// files) and the ZIPs of exports whose link expired (the request stays, without its file). Each
// company is one transaction; the blobs go after it commits (a blob left by a crash is no row's:
// the next sweep does not see it, which leaves a file under retained/ or privacy/ that no
// operation reads; the deletes are retried once more in the log's sight).
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
	var drop []string
	now := m.now()
	err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		err := query(ctx, `DELETE FROM retained_records WHERE retain_until < $1::date RETURNING blob_keys::text`,
			[]any{now.Format(time.DateOnly)}, func(rows rowScanner) error {
				var raw []byte
				if err := rows.Scan(&raw); err != nil {
					return err
				}
				var keys []string
				if len(raw) > 0 && string(raw) != "null" {
					if err := json.Unmarshal(raw, &keys); err != nil {
						return err
					}
				}
				drop = append(drop, keys...)
				return nil
			})
		if err != nil {
			return err
		}
		return query(ctx, `UPDATE privacy_requests p SET blob_key = NULL, updated_at = $1
			FROM (SELECT id, blob_key FROM privacy_requests WHERE blob_key IS NOT NULL AND expires_at < $1 FOR UPDATE) old
			WHERE p.id = old.id RETURNING old.blob_key`, []any{now}, func(rows rowScanner) error {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			drop = append(drop, k)
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, k := range drop {
		if err := m.d.Bucket.Delete(context.WithoutCancel(ctx), k); err != nil {
			m.d.Log.Warn().Err(err).Str("company_id", company.String()).Msg("privacy sweep: delete blob")
		}
	}
	return nil
}

// PeriodicJobs are the area's periodic jobs: the sweep.
func (m *Module) periodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{maintenance.Every(SweepEvery, SweepArgs{})}
}
