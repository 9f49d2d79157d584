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
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
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
	// rowTx writes a statement and inserts its parse job in one transaction (jobs.RowTx), as
	// portfolio transfers do.
	rowTx *jobs.RowTx
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
	m.rowTx = jobs.MustRowTx(d.Pool, "commissions")
	return m
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
