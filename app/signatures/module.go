// Package signatures serves /signature-requests and the hosted signing page of the built-in
// provider: each signer gets a personal, expiring link by e-mail, reviews the PDF, confirms a
// one-time code sent to the same address and draws or types a signature; when the last
// signer signed, the signatures and an audit page are placed on the PDF, which is sealed with
// a PAdES signature and filed with the contact (signedDocumentId).
//
// STUB: the contract; the owner fills it in.
package signatures

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Deps are what the module needs.
type Deps struct {
	Pool   *pgxpool.Pool // the job pool: the signing page's and the workers' transactions
	DB     *ent.Client   // ent on the job pool
	Bucket *blob.Bucket  // the merged source PDFs
	Events *events.Service
	Docs   *documents.Service // files the signed PDF with the contact
	Emails *emails.Service    // mails the links and the one-time codes
	Sealer *pdfseal.Sealer
	// Clients tells a signer's address behind trusted proxies (TRUSTED_PROXIES), for the audit.
	Clients ratelimit.Clients
	// Secret derives the keys of the signing links and the page's CSRF tokens.
	Secret []byte
	// PublicURL is the service's external base URL (no trailing slash), for the links.
	PublicURL string
	Now       func() time.Time
	Log       zerolog.Logger
}

// Module holds the service, the public signing page and the background jobs of the area.
type Module struct {
	d           Deps
	queue       *jobs.Client
	svc         *Service
	onCompleted []func(ctx context.Context, r *ent.SignatureRequest) error
}

// Service runs the request-side use cases.
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

// Service returns the request-side use cases.
func (m *Module) Service() *Service { return m.svc }

// Bind gives the module the job queue (built after the workers are registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// OnCompleted registers fn to run in the transaction that completes a request (the advice
// area locks the records whose protocol was signed).
func (m *Module) OnCompleted(fn func(ctx context.Context, r *ent.SignatureRequest) error) {
	m.onCompleted = append(m.onCompleted, fn)
}

// AddWorkers registers the area's job workers: the expiry of each request (expiry.go).
func (m *Module) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &expireWorker{m: m})
}

// PeriodicJobs are the area's periodic jobs: none. Each request's expiry is a job of its own,
// scheduled at its expiresAt (expiry.go), since a periodic sweep over the requests of every
// company would need a function the jobs role lacks.
func (m *Module) PeriodicJobs() []*river.PeriodicJob { return nil }
