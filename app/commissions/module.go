// Package commissions serves the commission area (issue 24): /commission-statements (an
// insurer's courtage statement uploaded as CSV, GDV 0400 or BiPRO Abrechnung, parsed on a river
// job into entries matched to contracts by insurer and policy number), /commission-entries
// (linking an unmatched entry by hand), and the reports /reports/commissions and
// /reports/cancellation-liability.
//
// STUB: the contract; the owners fill it in (statements and entries: statements.go,
// entries.go, worker.go, match.go; the two reports: report_commissions.go, liability.go).
package commissions

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
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
	return m
}

// Service returns the API's use cases.
func (m *Module) Service() *Service { return m.svc }

// Bind gives the module the job queue (built after the workers are registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// AddWorkers registers the parse worker (worker.go).
func (m *Module) AddWorkers(w *river.Workers) { m.addWorkers(w) }
