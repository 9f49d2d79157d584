// Package webhooks serves /webhook-endpoints and delivers the outbox (app/events) to them.
//
// The path of an event: a write records it in `events` in its own transaction; at commit a
// trigger NOTIFYs brokerdesk_webhooks with the company id (only for companies with an enabled
// endpoint). Every serve process LISTENs (Relay) and runs the Dispatcher for that company: one
// transaction, serialised per company by the row lock of its webhook_cursors row, reads the
// events after the cursor in seq (= commit) order, inserts one river job per (event, endpoint)
// with river's InsertManyFastTx and moves the cursor, so each pair becomes exactly one job even
// with many processes and crashes. A periodic sweep catches what a lost notification missed.
// The DeliveryWorker (river, any process) then pins a transaction as the endpoint's credential,
// reads the event through events.Visible, signs (Standard Webhooks) and POSTs it, and logs the
// attempt.
package webhooks

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/maintenance"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Deps are what the module needs from the composition root.
type Deps struct {
	// Pool is the app role's job pool (river, the dispatcher, the worker's transactions).
	Pool *pgxpool.Pool
	// DB is an ent client over Pool through tenancy.Driver: the worker's pinned transactions.
	DB     *ent.Client
	Sealer *Sealer
	Guard  Guard
	Authz  *policy.Enforcer
	Events *events.Service
	Now    func() time.Time
	Log    zerolog.Logger
	// Schedule replaces the retry Schedule when set (tests).
	Schedule []time.Duration
}

// Module holds the webhook parts that share the queue: the API service, the worker, the
// dispatcher and its relay.
type Module struct {
	d      Deps
	sender *Sender
	disp   *Dispatcher
	queue  *jobs.Client
	tests  chan struct{} // slots of concurrent test deliveries
}

// New builds the module. Bind gives it the queue before it serves or works.
func New(d Deps) *Module {
	if d.Schedule == nil {
		d.Schedule = Schedule
	}
	m := &Module{d: d, sender: NewSender(d.Guard.HTTPClient(Timeout), d.Now), tests: make(chan struct{}, maxConcurrentTests)}
	m.disp = &Dispatcher{pool: d.Pool, log: d.Log}
	return m
}

// AddWorkers registers the module's job workers.
func (m *Module) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &DeliveryWorker{m: m})
	river.AddWorker(w, &maintenance.Worker[SweepArgs]{Run: m.sweep})
	river.AddWorker(w, &maintenance.Worker[PurgeArgs]{Run: m.purge})
}

// PeriodicJobs are the module's periodic jobs (run by one process, river's leader).
func (m *Module) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{maintenance.Every(SweepEvery, SweepArgs{}), maintenance.Every(time.Hour, PurgeArgs{})}
}

// Bind attaches the queue client (built after the workers were registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// Service returns the API use cases.
func (m *Module) Service() *Service { return &Service{m: m} }

// Relay returns the LISTEN loop that wakes the dispatcher in this process.
func (m *Module) Relay() *Relay { return &Relay{m: m} }
