// Package portalauth tests the customer portal's sign-in (issue 23 "Customer identity") over
// HTTP as a browser without JavaScript does it (a net/http client with a cookie jar, redirects
// not followed): the invitation link, login with throttle, the TOTP second factor, logout,
// password reset by mail (the real SMTP test server) and the security page, with the headers
// and cookie attributes every page must carry.
package portalauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portaltoken"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// csrfRE finds a form's action and CSRF field (the tests also blank the token out to compare
// two pages).
var csrfRE = regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)">`)

// appTransport sends requests to the in-process app of env (App.Test), whatever the URL's host:
// a jar then keeps Secure cookies of an https base, which a real loopback socket cannot serve.
type appTransport struct{ env *apitest.Env }

func (a appTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return a.env.Server.App.Test(r, -1)
}

// customer is a contact of a brokerage invited to the portal.
type customer struct {
	env      *apitest.Env
	co       *apitest.Company
	contact  uuid.UUID
	email    string
	base     string // /portal/{companyId}
	link     string // the invitation's path
	password string
}

// newCustomer creates a contact of co with an e-mail address and invites it to the portal
// through the API (POST /contacts/{id}/portal-access); the link is read from the mail w's SMTP
// server received. Without w (a server of its own configuration, which delivers no mail) the
// access and its link are written directly (invite).
func newCustomer(t *testing.T, w *signingtest.World, env *apitest.Env, co *apitest.Company, name string) *customer {
	t.Helper()
	email := signingtest.Address(name)
	c := apitest.Create[struct {
		ID uuid.UUID `json:"id"`
	}](t, env, co.Secret, "/contacts", map[string]any{"type": "private", "firstName": name, "lastName": "Kunde", "email": email})
	cu := &customer{env: env, co: co, contact: c.ID, email: email, base: "/portal/" + co.ID.String(),
		password: "Sommer am Meer " + uuid.NewString()[:8]}
	if w == nil {
		cu.link = cu.invite(t, time.Now().Add(7*24*time.Hour))
		return cu
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + c.ID.String() + "/portal-access", Key: co.Secret})
	if r.Status != 201 {
		t.Fatalf("invite: %d %s", r.Status, r.Body)
	}
	mails := w.WaitMails(t, email, "Ihr Zugang zum Kundenportal", 1)
	m := invitationLinkRE.FindStringSubmatch(mails[0].Text)
	if m == nil || !strings.HasPrefix(m[1], cu.base+"/") {
		t.Fatalf("no invitation link of %s in the mail:\n%s", cu.base, mails[0].Text)
	}
	cu.link = m[1]
	return cu
}

var invitationLinkRE = regexp.MustCompile(`https?://[^\s"'<>]+(/portal/[0-9a-f-]+/invitation/[A-Za-z0-9_-]+)`)

// invite writes the contact's access (pending, once) and an invitation link expiring at
// expires, and returns the link's path: for servers that deliver no mail.
func (cu *customer) invite(t *testing.T, expires time.Time) string {
	t.Helper()
	secret := newSecret(t)
	cu.env.InCompany(t, cu.co.ID, func(ctx context.Context, db *ent.Client) error {
		acc, err := db.PortalAccess.Query().Where(portalaccess.ContactID(cu.contact)).Only(ctx)
		if ent.IsNotFound(err) {
			acc, err = db.PortalAccess.Create().SetContactID(cu.contact).SetEmail(strings.ToLower(cu.email)).
				SetInvitedAt(time.Now()).SetInvitationsSent(1).Save(ctx)
		}
		if err != nil {
			return err
		}
		return db.PortalToken.Create().SetAccessID(acc.ID).SetContactID(cu.contact).SetPurpose(portaltoken.PurposeInvitation).
			SetTokenHash(hashSecret(secret)).SetExpiresAt(expires).SetCreatedAt(time.Now()).Exec(ctx)
	})
	return cu.base + "/invitation/" + secret
}

// expire moves the expiry of the link (its path) into the past.
func (cu *customer) expire(t *testing.T, link string) {
	t.Helper()
	secret := link[strings.LastIndex(link, "/")+1:]
	cu.sql(t, "UPDATE portal_tokens SET expires_at = now() - interval '1 minute' WHERE contact_id = $1 AND token_hash = $2",
		hashSecret(secret))
}

func newSecret(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// access reads the contact's access as the database has it.
func (cu *customer) access(t *testing.T) *ent.PortalAccess {
	t.Helper()
	var acc *ent.PortalAccess
	cu.env.InCompany(t, cu.co.ID, func(ctx context.Context, db *ent.Client) (err error) {
		acc, err = db.PortalAccess.Query().Where(portalaccess.ContactID(cu.contact)).Only(ctx)
		return err
	})
	return acc
}

// sql runs a statement on the access's rows in the company (revocations the API will make).
func (cu *customer) sql(t *testing.T, query string, args ...any) {
	t.Helper()
	err := cu.env.Pinned(context.Background(), cu.co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(query, append([]any{cu.contact}, args...)...)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// accept sets the customer's password through the invitation page and expects the sign-in.
func (cu *customer) accept(t *testing.T, b *portaltest.Browser) {
	t.Helper()
	a := b.Submit(t, cu.link, cu.link, url.Values{"password": {cu.password}, "repeat": {cu.password}})
	if a.Status != 303 || a.Location != cu.base+"/" {
		t.Fatalf("accept invitation: %d %q\n%s", a.Status, a.Location, a.Body)
	}
}

// login posts the login form.
func (cu *customer) login(t *testing.T, b *portaltest.Browser, email, password string) portaltest.Page {
	t.Helper()
	return b.Submit(t, cu.base+"/login", cu.base+"/login", url.Values{"email": {email}, "password": {password}})
}

// signedIn reports whether b's session opens a signed-in page (the security page: 200, else
// 401 with the login form).
func (cu *customer) signedIn(t *testing.T, b *portaltest.Browser) bool {
	t.Helper()
	a := b.Get(t, cu.base+"/security")
	switch a.Status {
	case 200:
		return true
	case 401:
		return false
	case 303: // a session whose TOTP code is due: sent to the code form, nothing else opens
		if a.Location != cu.base+"/login/code" {
			t.Fatalf("GET security: 303 to %q, want the code form", a.Location)
		}
		return false
	}
	t.Fatalf("GET security: %d\n%s", a.Status, a.Body)
	return false
}

// totpCode is RFC 6238's code of the base32 secret at step, written here again (not the
// portal's) so that a wrong implementation there does not agree with itself.
func totpCode(t *testing.T, secret string, step int64) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[19] & 15
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:])&0x7fffffff)%1000000)
}

func step() int64 { return time.Now().Unix() / 30 }

// checkHeaders fails unless a carries the headers of every portal portaltest.Page.
func checkHeaders(t *testing.T, what string, a portaltest.Page) {
	t.Helper()
	for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
		"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if got := a.Header.Get(h); got != want {
			t.Errorf("%s: %s %q, want %q", what, h, got, want)
		}
	}
	if csp := a.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") ||
		!strings.Contains(csp, "default-src 'none'") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
}
