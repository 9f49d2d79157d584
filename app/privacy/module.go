// Package privacy serves data-subject requests (GDPR, issue 25): POST
// /contacts/{contactId}/privacy/data-export (Art. 15: a ZIP of every personal datum of a contact,
// built on a river job and served by an expiring link outside the API) and GET
// /privacy-requests. The requests outlive their contact (contact_id has no foreign key) and are
// visible as the contact's owner at the time was (app_visible_owner(owner_id)).
//
// Files: handler.go (routes), service.go (the use cases), view.go, export.go (the ZIP job),
// download.go (the public download route), token.go (the link's token).
package privacy

import (
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/maintenance"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Deps are what the module needs.
type Deps struct {
	Pool     *pgxpool.Pool     // the job pool: a request is inserted with its job in one transaction
	DB       *ent.Client       // ent on the job pool, for the workers' and the download's transactions
	Bucket   *blob.Bucket      // the export ZIPs; the contact's files are read from it
	Contacts *contacts.Service // the contact as the API shows it, sensitive groups decrypted
	// PublicURL is the service's external base URL (no trailing slash), for the download link.
	PublicURL string
	Now       func() time.Time
	Log       zerolog.Logger
	// BeforeEraseCommit, when set, runs after an erasure copied the retained files, before its
	// transaction; an error fails the attempt there (the test of an erasure whose every
	// attempt fails).
	BeforeEraseCommit func(requestID uuid.UUID) error
	// AfterEraseCommit, when set, runs after an erasure's commit, before its files are
	// deleted; an error ends the run there as a crash would (the test of the files' durable
	// deletion).
	AfterEraseCommit func(requestID uuid.UUID) error
}

// Module holds the service, the workers and the public download route.
type Module struct {
	d      Deps
	hooked *contacts.Service
	// mailboxes syncs the company's mailboxes before an erasure (UseMailboxes, mail.go).
	mailboxes Mailboxes
	queue     *jobs.Client
	svc       *Service
	rowTx     *jobs.RowTx
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
	m.rowTx = jobs.MustRowTx(d.Pool, "privacy")
	return m
}

// Service returns the API's use cases.
func (m *Module) Service() *Service { return m.svc }

// UseContacts gives the module the contacts service with its delete hooks (contracts,
// documents' blobs), built with the routes: an erasure deletes the contact through it.
func (m *Module) UseContacts(c *contacts.Service) { m.hooked = c }

// contacts is the contacts service with its delete hooks when UseContacts gave it.
func (m *Module) contacts() *contacts.Service {
	if m.hooked != nil {
		return m.hooked
	}
	return m.d.Contacts
}

// Bind gives the module the job queue (built after the workers are registered).
func (m *Module) Bind(q *jobs.Client) { m.queue = q }

// AddWorkers registers the export worker (export.go).
func (m *Module) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &exportWorker{m: m})
	river.AddWorker(w, &eraseWorker{m: m})
	river.AddWorker(w, &maintenance.Worker[SweepArgs]{Run: m.Sweep})
}

// PeriodicJobs are the area's periodic jobs: the sweep of ended retention periods and expired
// export links (sweep.go), on river's leader.
func (m *Module) PeriodicJobs() []*river.PeriodicJob { return m.periodicJobs() }

// now is the module's clock in UTC, truncated to what PostgreSQL stores.
func (m *Module) now() time.Time { return m.d.Now().UTC().Truncate(time.Microsecond) }
