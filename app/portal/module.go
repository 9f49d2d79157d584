// Package portal is the customer portal (issue 23): the five API operations that manage it
// (GET/POST/DELETE /contacts/{contactId}/portal-access, GET /portal-change-requests, POST
// /portal-change-requests/{id}/{approve|reject}) and the portal itself under /portal/{companyId}/,
// where a contact invited by its broker signs in with a password (and optionally TOTP) and sees
// its data, contracts, released documents and signature requests, and asks for changes the
// broker approves.
//
// A portal account is not a user: it never holds an API credential, and every signed-in page
// runs in a transaction pinned to its company and its contact (tenancy.WithPortal: the role
// brokerdesk_portal, row-level security on the contact, the ent rules on the contact), so
// neither the database nor the code shows it another contact's rows.
package portal

import (
	"time"

	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/app/signatures"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Deps are what the module needs.
type Deps struct {
	DB       *ent.Client // ent on the job pool: the portal's transactions (no API credential)
	Bucket   *blob.Bucket
	Events   *events.Service
	Contacts *contacts.Service  // approval applies a change as one contact update
	Docs     *documents.Service // downloads of released documents
	Emails   *emails.Service    // invitations and password resets
	Signing  *signatures.Module // the signing link of a signer (SignerURL)
	Keys     *datakeys.Keyring  // seals TOTP secrets and bank changes
	Limits   *ratelimit.Limits  // LoginAccount, LoginIP: failed sign-ins
	Clients  ratelimit.Clients  // the customer's address behind trusted proxies
	Secret   []byte             // derives the CSRF keys
	// PublicURL is the service's external base URL (no trailing slash), for the links; the
	// session cookie is Secure when it is https.
	PublicURL string
	Now       func() time.Time
	Log       zerolog.Logger
}

// Module holds the API service and the portal's web app.
type Module struct {
	d   Deps
	svc *Service
}

// Service runs the API's use cases (api_*.go).
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

// UseContacts gives the module the contacts service of the API (built with the routes), through
// which an approval updates the contact.
func (m *Module) UseContacts(s *contacts.Service) { m.d.Contacts = s }
