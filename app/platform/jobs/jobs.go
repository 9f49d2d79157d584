// Package jobs configures the background job queue: river (github.com/riverqueue/river) on the
// application's PostgreSQL, its tables in the schema migrations.RiverSchema (outside tenant
// row-level security: job arguments are ids, never company data). Every `serve` process runs a
// client; river shares the work between them (FOR UPDATE SKIP LOCKED), wakes them with
// LISTEN/NOTIFY when jobs are inserted, rescues the jobs of a process that died, and runs each
// periodic job on one process only (its elected leader). Areas add their workers and periodic
// jobs; app.Server builds the client.
package jobs

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/migrations"
)

// Queues.
const (
	// QueueDefault runs maintenance (purges, the webhook sweep).
	QueueDefault = river.QueueDefault
	// QueueWebhooks runs webhook deliveries, apart so that slow receivers never delay
	// maintenance.
	QueueWebhooks = "webhooks"
	// QueuePortfolio runs portfolio transfers (validation, commit): long runs, two at a time
	// per process, apart from deliveries.
	QueuePortfolio = "portfolio"
	// QueueMail runs e-mail sends and mailbox syncs (app/emails): network-bound runs of up to
	// half a job timeout each, apart so that a slow mail server never delays maintenance and a
	// company's many mailboxes do not hold back its sends for long.
	QueueMail = "mail"
)

// Config is the queue's part of the server configuration.
type Config struct {
	// Workers is how many webhook deliveries one process makes at once (WEBHOOK_WORKERS). Zero:
	// the process only inserts jobs and works none (an API-only replica).
	Workers int
	// RescueAfter is how long a job may stay running before river takes it back from a process
	// that died (JOBS_RESCUE_AFTER); it must exceed JobTimeout.
	RescueAfter time.Duration
}

// JobTimeout bounds one job; a delivery attempt takes at most about 10 s plus its transactions.
const JobTimeout = 30 * time.Second

// Client is the river client of the job queue's pool, which logs in as the jobs role
// (migrations.RoleJobs, JOBS_DATABASE_URL): the only role with rights on river's tables. Jobs
// are inserted in transactions on that pool too, never in a request's (the request role may
// not reach the queue: job arguments name companies).
type Client = river.Client[pgx.Tx]

// NewClient builds the client. With cfg.Workers zero it only inserts.
func NewClient(pool *pgxpool.Pool, workers *river.Workers, periodic []*river.PeriodicJob, cfg Config, log zerolog.Logger) (*Client, error) {
	lvl := log.GetLevel()
	if lvl < zerolog.WarnLevel {
		lvl = zerolog.WarnLevel // river reports every job start and stop at info and debug
	}
	rc := &river.Config{
		Schema:  migrations.RiverSchema,
		Logger:  slog.New(zerolog.NewSlogHandler(log.With().Str("component", "jobs").Logger().Level(lvl))),
		Workers: workers,
		// REINDEX needs ownership of the tables, which the app role must not have; reindexing
		// river's tables is the operator's (owner's) business.
		ReindexerIndexNames:  []string{},
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		// Notifications wake a producer at once; the cooldown only caps fetches per second.
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: time.Second,
		// The delivery log is the record of deliveries; finished jobs need not stay long.
		CompletedJobRetentionPeriod: time.Hour,
		MaxAttempts:                 10,
	}
	if cfg.Workers > 0 {
		rc.Queues = map[string]river.QueueConfig{
			QueueDefault:   {MaxWorkers: 2},
			QueueWebhooks:  {MaxWorkers: cfg.Workers},
			QueuePortfolio: {MaxWorkers: 2},
			QueueMail:      {MaxWorkers: 6},
		}
		rc.PeriodicJobs = periodic
	}
	return river.NewClient(riverpgxv5.New(pool), rc)
}
