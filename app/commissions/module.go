// Package commissions serves the commission area (issue 24): /commission-statements (an
// insurer's courtage statement uploaded as CSV, GDV 0400 or BiPRO Abrechnung, parsed on a river
// job into entries matched to contracts by insurer and policy number), /commission-entries
// (linking an unmatched entry by hand), and the reports /reports/commissions and
// /reports/cancellation-liability.
//
// Files: statements.go and entries.go (the API of statements and entries), input.go (the
// upload's form and the patches), view.go, worker.go (the parse job), match.go (entries to
// contracts), sql_statements.go; the two reports: report_commissions.go, liability.go.
package commissions

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Deps are what the module needs.
type Deps struct {
	Pool   *pgxpool.Pool // the job pool: a statement is inserted with its parse job in one transaction
	DB     *ent.Client   // ent on the job pool, for the worker's transactions
	Bucket *blob.Bucket  // the uploaded files
	Events *events.Service
	Now    func() time.Time
	Log    zerolog.Logger
	// MaxUpload bounds an uploaded statement's size (bytes).
	MaxUpload int64
}

// Module holds the service, the handler's use cases and the parse worker.
type Module struct {
	d     Deps
	queue *jobs.Client
	svc   *Service
	// sqlDB is database/sql over d.Pool (no connections of its own) and txJobs the river
	// client that inserts jobs in its transactions (insert only: queue works them), so that a
	// statement written through ent and its parse job commit together (jobTx), as portfolio
	// transfers do.
	sqlDB  *sql.DB
	txJobs *river.Client[*sql.Tx]
}

// Service runs the use cases of the API.
type Service struct{ m *Module }

// New builds the module.
func New(d Deps) *Module {
	if d.Now == nil {
		d.Now = time.Now
	}
	m := &Module{d: d}
	m.svc = &Service{m: m}
	if d.Pool != nil {
		m.sqlDB = stdlib.OpenDBFromPool(d.Pool)
		var err error
		// Only a misconfiguration fails here (river checks the config): a declaration error.
		if m.txJobs, err = river.NewClient(riverdatabasesql.New(m.sqlDB), &river.Config{Schema: migrations.RiverSchema}); err != nil {
			panic(fmt.Sprintf("commissions: job insert client: %v", err))
		}
	}
	return m
}

// jobTx runs f in one transaction of the job pool pinned to the company (and acting user) of
// ctx (tenancy.BeginSQL) and commits it when f succeeds: f writes through db (ent over that
// transaction, hooks and events as everywhere) and inserts its job with m.txJobs.InsertTx on
// tx, so a statement never waits for a job that does not exist (portfolio's Module.jobTx).
func (m *Module) jobTx(ctx context.Context, f func(ctx context.Context, db *ent.Client, tx *sql.Tx) error) error {
	tx, err := tenancy.BeginSQL(ctx, m.sqlDB)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	db := ent.NewClient(ent.Driver(entsql.NewDriver(dialect.Postgres, entsql.Conn{ExecQuerier: tx})))
	if err := f(tenancy.WithClient(ctx, db), db, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// withTx runs f in one ent transaction on d.DB pinned to the company of ctx, with the
// transaction's client in ctx (tenancy.Client) for events.
func (m *Module) withTx(ctx context.Context, f func(ctx context.Context, tx *ent.Tx) error) error {
	tx, err := m.d.DB.Tx(ctx)
	if err != nil {
		return err
	}
	if err := f(tenancy.WithClient(ctx, tx.Client()), tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Service returns the API's use cases.
func (m *Module) Service() *Service { return m.svc }

// Bind gives the module the job queue (built after the workers are registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// AddWorkers registers the parse worker (worker.go).
func (m *Module) AddWorkers(w *river.Workers) { m.addWorkers(w) }
