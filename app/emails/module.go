// Package emails serves the e-mail area (issue 21): company mailboxes over IMAP and SMTP,
// threads and messages linked to contacts and leads, sending with templates and tracking,
// opt-outs and the points that pay for sending. Its Service.Send is the one way mail leaves
// the service: correspondence cases (and later portal invitations, signature requests,
// funnels and automations) send through it.
//
// Files: module.go (deps, workers, periodic jobs), service.go (the Service), handler.go (the
// routes), read.go (threads, messages, attachments), templates.go, optouts.go, send.go
// (POST /emails, the send worker, points, tracking), mailboxes.go (GET /mailboxes, the
// operator's mailbox use cases), sync.go and store.go (IMAP sync, threading, linking).
package emails

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Deps are what the module needs.
type Deps struct {
	Pool   *pgxpool.Pool // the job pool: workers' transactions and job inserts
	DB     *ent.Client   // ent on the job pool, for the workers' transactions
	Bucket *blob.Bucket  // raw messages and attachments
	Events *events.Service
	Keys   *datakeys.Keyring // seals mailbox passwords (bound to the mailbox id)
	// Secret signs the tokens of the public tracking and unsubscribe links.
	Secret []byte
	// PublicURL is the service's external base URL (no trailing slash), for those links.
	PublicURL string
	// Mail is how the workers reach IMAP and SMTP servers (TLS roots, timeouts).
	Mail mail.Config
	// SyncEvery is how often every active mailbox is synced (default 1 minute).
	SyncEvery time.Duration
	Now       func() time.Time
	Log       zerolog.Logger
}

// Module holds the service, the workers and the periodic jobs of the e-mail area.
type Module struct {
	d     Deps
	queue *jobs.Client
	svc   *Service
}

// New builds the module.
func New(d Deps) *Module {
	if d.SyncEvery <= 0 {
		d.SyncEvery = time.Minute
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	m := &Module{d: d}
	m.svc = &Service{m: m, events: d.Events, now: d.Now}
	return m
}

// Bind gives the module the job queue (built after the workers are registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// Service returns the request-side use cases.
func (m *Module) Service() *Service { return m.svc }

// AddWorkers registers the area's job workers.
func (m *Module) AddWorkers(w *river.Workers) {
	m.addSendWorkers(w)
	m.addSyncWorkers(w)
}

// PeriodicJobs are the area's periodic jobs (the sync of due mailboxes, the sweep of sends
// whose job was lost).
func (m *Module) PeriodicJobs() []*river.PeriodicJob {
	return append(m.sendPeriodicJobs(), m.syncPeriodicJobs()...)
}

// companyTx runs fn in a company-level transaction of company on the job pool, and commits
// when fn returns nil: the one way the area's background work (the send worker, the sync) and
// its public links (no credential) reach the database. They see the company's rows as a
// company-level key would; row-level security and the ent rules apply as in a request.
func (m *Module) companyTx(ctx context.Context, company uuid.UUID, fn func(ctx context.Context) error) error {
	return tenancy.CompanyTx(ctx, m.d.DB, company, fn)
}
