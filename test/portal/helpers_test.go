// Package portal tests the customer portal's five API operations (issue 23): invitations and
// their mail, revocation, the change request list and its decisions, against the real server
// (jobs working, mails delivered to the SMTP test server), a customer driving the portal's pages
// over HTTP where a test needs an active access or a change request.
package portal

import (
	"net/url"
	"os"
	"regexp"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// invitationSubject starts the subject of the invitation mail.
const invitationSubject = "Ihr Zugang zum Kundenportal"

// accessView is the PortalAccess of the API.
type accessView struct {
	ID                  string  `json:"id"`
	ContactID           string  `json:"contactId"`
	Status              string  `json:"status"`
	Email               string  `json:"email"`
	InvitedAt           string  `json:"invitedAt"`
	InvitationExpiresAt *string `json:"invitationExpiresAt"`
	InvitationsSent     int     `json:"invitationsSent"`
	ActivatedAt         *string `json:"activatedAt"`
	RevokedAt           *string `json:"revokedAt"`
	TwoFactorEnabled    bool    `json:"twoFactorEnabled"`
}

// changeView is the PortalChangeRequest of the API.
type changeView struct {
	ID          string            `json:"id"`
	ContactID   string            `json:"contactId"`
	Kind        string            `json:"kind"`
	Changes     map[string]string `json:"changes"`
	Status      string            `json:"status"`
	Reason      string            `json:"reason"`
	DecidedAt   *string           `json:"decidedAt"`
	DecidedBy   *string           `json:"decidedBy"`
	WithdrawnAt *string           `json:"withdrawnAt"`
}

// broker is a company licensing the portal and e-mail, with a shared mailbox on the world's
// mail server.
func broker(t *testing.T, w *signingtest.World) *apitest.Company {
	t.Helper()
	return w.NewBrokerWith(t, "customer_portal", "emails").Co
}

// contact creates a private contact of co (email "" for none) and returns its id.
func contact(t *testing.T, w *signingtest.World, co *apitest.Company, first, email string) string {
	t.Helper()
	body := map[string]any{"type": "private", "firstName": first, "lastName": "Kunde"}
	if email != "" {
		body["email"] = email
	}
	return apitest.Create[struct {
		ID string `json:"id"`
	}](t, w.Env, co.Secret, "/contacts", body).ID
}

// invite invites the contact through the API and fails unless it is 201.
func invite(t *testing.T, w *signingtest.World, key, contactID string) accessView {
	t.Helper()
	return apitest.Create[accessView](t, w.Env, key, "/contacts/"+contactID+"/portal-access", nil)
}

var linkRE = regexp.MustCompile(`https?://[^\s"'<>]+/portal/[0-9a-f-]{36}/invitation/[A-Za-z0-9_-]+`)

// linkPath waits for the n-th invitation mail to `to` (1-based) and returns its link's path.
func linkPath(t *testing.T, w *signingtest.World, to string, n int) string {
	t.Helper()
	m := w.WaitMails(t, to, invitationSubject, n)
	link := linkRE.FindString(m[n-1].Text)
	if link == "" {
		t.Fatalf("no portal link in the invitation: %q", m[n-1].Text)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// customer is a contact of a brokerage with an active portal access, signed in in its browser.
type customer struct {
	co      *apitest.Company
	contact string
	email   string
	base    string // /portal/{companyId}
	b       *portaltest.Browser
}

// activeCustomer creates a contact of co, invites it through the API and accepts the
// invitation from the mail in a browser (which is then signed in).
func activeCustomer(t *testing.T, w *signingtest.World, co *apitest.Company, name string) *customer {
	t.Helper()
	cu := &customer{co: co, email: signingtest.Address(name), base: "/portal/" + co.ID.String(), b: portaltest.NewBrowser(t, w.Base, nil)}
	cu.contact = contact(t, w, co, name, cu.email)
	invite(t, w, co.Secret, cu.contact)
	link := linkPath(t, w, cu.email, 1)
	password := "Sommer am Meer " + uuid.NewString()[:8]
	a := cu.b.Submit(t, link, link, url.Values{"password": {password}, "repeat": {password}})
	if a.Status != 303 {
		t.Fatalf("accept invitation: %d %q\n%s", a.Status, a.Location, a.Body)
	}
	return cu
}

// change submits a change request of kind through the portal's form and fails unless it was
// taken (303).
func (cu *customer) change(t *testing.T, kind string, vals map[string]string) {
	t.Helper()
	form := url.Values{}
	for k, v := range vals {
		form.Set(k, v)
	}
	path := cu.base + "/changes/new/" + kind
	if a := cu.b.Submit(t, path, path, form); a.Status != 303 {
		t.Fatalf("submit %s change: %d\n%s", kind, a.Status, a.Body)
	}
}

// pending returns the contact's pending change requests as key sees them.
func pending(t *testing.T, w *signingtest.World, key, contactID string) []changeView {
	t.Helper()
	return apitest.Get[apitest.Page[changeView]](t, w.Env, key, "/portal-change-requests?contactId="+contactID).Data
}
