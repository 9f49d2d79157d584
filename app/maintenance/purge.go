// Package maintenance runs the server's background jobs. They work across companies through
// SECURITY DEFINER functions (migrations/), never by loosening the app role.
package maintenance

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"
)

// Retention and cadence of the purge (spec: Limits).
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

// RunOnce purges if no replica did within every.
func (p *Purger) RunOnce(ctx context.Context, every time.Duration) (Result, error) {
	var r Result
	err := p.pool.QueryRow(ctx, "SELECT ran, events, idempotency_keys FROM maintenance_purge($1, $2)",
		every, EventRetention).Scan(&r.Ran, &r.Events, &r.IdempotencyKeys)
	return r, err
}

// Run checks every few minutes until ctx ends; the database makes sure that of all replicas
// one purges per PurgeEvery.
func (p *Purger) Run(ctx context.Context) {
	t := time.NewTicker(checkEvery)
	defer t.Stop()
	for {
		r, err := p.RunOnce(ctx, PurgeEvery)
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Error().Err(err).Msg("purge failed")
		case r.Ran:
			p.log.Info().Int64("events", r.Events).Int64("idempotency_keys", r.IdempotencyKeys).Msg("purged")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
