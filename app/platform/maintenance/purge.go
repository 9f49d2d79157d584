// Package maintenance holds the server's periodic maintenance jobs (river jobs, app/platform/jobs). They
// work across companies through SECURITY DEFINER functions (migrations/), never by loosening
// the app role.
package maintenance

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
)

// Retention and cadence of the purge (spec: Limits). maintenance_purge() holds them as
// constants of its own (migrations/20261124010000_hardening.sql), so that the role calling it
// cannot choose them; these document them for Go.
const (
	EventRetention = 30 * 24 * time.Hour
	PurgeEvery     = time.Hour
	checkEvery     = 5 * time.Minute
)

// Purger deletes events past retention and expired idempotency records.
type Purger struct {
	pool *pgxpool.Pool
	log  zerolog.Logger
}

// NewPurger returns a purger using pool (app role connections).
func NewPurger(pool *pgxpool.Pool, log zerolog.Logger) *Purger { return &Purger{pool: pool, log: log} }

// Result is what one purge did. Ran is false when another replica purged within PurgeEvery.
type Result struct {
	Ran             bool
	Events          int64
	IdempotencyKeys int64
}

// RunOnce purges if no replica did within PurgeEvery.
func (p *Purger) RunOnce(ctx context.Context) (Result, error) {
	var r Result
	err := p.pool.QueryRow(ctx, "SELECT ran, events, idempotency_keys FROM maintenance_purge()").
		Scan(&r.Ran, &r.Events, &r.IdempotencyKeys)
	return r, err
}

// PurgeArgs is the periodic purge job. River enqueues it every checkEvery on one process (its
// leader), and maintenance_purge itself lets it delete at most once per PurgeEvery, so however
// many replicas run, one purges.
type PurgeArgs struct{}

// Kind names the job.
func (PurgeArgs) Kind() string { return "maintenance_purge" }

// InsertOpts keep one purge queued per period.
func (PurgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: checkEvery}}
}

// work is the purge job: purge once, log what went.
func (p *Purger) work(ctx context.Context) error {
	r, err := p.RunOnce(ctx)
	if err != nil {
		return err
	}
	if r.Ran {
		p.log.Info().Int64("events", r.Events).Int64("idempotency_keys", r.IdempotencyKeys).Msg("purged")
	}
	return nil
}

// AddWorkers registers the purge worker.
func AddWorkers(w *river.Workers, p *Purger) { river.AddWorker(w, &Worker[PurgeArgs]{Run: p.work}) }

// PeriodicJobs is the purge, every checkEvery, also at start.
func PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{Every(checkEvery, PurgeArgs{})}
}
