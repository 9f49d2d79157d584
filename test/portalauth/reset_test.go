package portalauth

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/portal"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

var resetLinkRE = regexp.MustCompile(`https?://[^\s"'<>]+(/portal/[0-9a-f-]+/reset/[A-Za-z0-9_-]+)`)

// TestReset_Flow: the reset form answers the same page for an unknown address and a known one;
// the known one gets a mail with a link that sets a new password, ends every other session and
// signs this browser in; the old password stops working, the link works once. Catches: account
// enumeration by the reset form, a link not mailed or not working, sessions (a thief's) that
// survive a reset, a reusable reset link.
func TestReset_Flow(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "rita")
	old := portaltest.NewBrowser(t, w.Base, nil)
	cu.accept(t, old)

	sent := func(email string) string {
		b := portaltest.NewBrowser(t, w.Base, nil)
		a := b.Submit(t, cu.base+"/reset", cu.base+"/reset", url.Values{"email": {email}})
		if a.Status != 200 {
			t.Fatalf("reset request for %s: %d\n%s", email, a.Status, a.Body)
		}
		checkHeaders(t, "reset sent", a)
		return a.Body[strings.Index(a.Body, "<main"):]
	}
	unknown := sent(signingtest.Address("niemand"))
	known := sent(strings.ToUpper(cu.email))
	if csrfRE.ReplaceAllString(unknown, "") != csrfRE.ReplaceAllString(known, "") ||
		!strings.Contains(known, "Wenn es zu dieser E-Mail-Adresse ein Konto gibt") {
		t.Errorf("known and unknown addresses portaltest.Page differently:\n%s\n---\n%s", unknown, known)
	}
	mails := w.WaitMails(t, cu.email, portal.ResetSubject, 1)
	m := resetLinkRE.FindStringSubmatch(mails[0].Text)
	if m == nil {
		t.Fatalf("no reset link in the mail:\n%s", mails[0].Text)
	}
	link := m[1]

	b := portaltest.NewBrowser(t, w.Base, nil)
	if a := b.Submit(t, link, link, url.Values{"password": {"neues Passwort 1"}, "repeat": {"neues Passwort 2"}}); a.Status != 422 {
		t.Fatalf("mismatched passwords: %d", a.Status)
	}
	newPassword := "Winter in den Bergen " + uuid.NewString()[:6]
	a := b.Submit(t, link, link, url.Values{"password": {newPassword}, "repeat": {newPassword}})
	if a.Status != 303 || a.Location != cu.base+"/" {
		t.Fatalf("reset: %d %q\n%s", a.Status, a.Location, a.Body)
	}
	if !cu.signedIn(t, b) {
		t.Error("not signed in after the reset")
	}
	if cu.signedIn(t, old) {
		t.Error("the session from before the reset survived it")
	}
	if a := b.Get(t, link); a.Status != 410 {
		t.Errorf("reset link used again: %d", a.Status)
	}
	if a := cu.login(t, portaltest.NewBrowser(t, w.Base, nil), cu.email, cu.password); a.Status != 401 {
		t.Errorf("old password: %d", a.Status)
	}
	if a := cu.login(t, portaltest.NewBrowser(t, w.Base, nil), cu.email, newPassword); a.Status != 303 {
		t.Errorf("new password: %d", a.Status)
	}
	// A second request within the minute mails nothing more (the page is the same).
	sent(cu.email)
	if n := len(w.Mails(cu.email, portal.ResetSubject)); n != 1 {
		t.Errorf("%d reset mails, want 1 within a minute", n)
	}
}

// TestPages_Headers: every page before sign-in, every refusal and redirect carries the portal's
// headers (CSP with frame-ancestors 'none', nosniff, X-Frame-Options, no-store, no referrer).
// Catches: a page or an error path answering without them (framing, caching a page with a
// link's secret, leaking it by Referer).
func TestPages_Headers(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "kopf")
	b := portaltest.NewBrowser(t, w.Base, nil)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/login", 200}, {"/reset", 200}, {"/invitation/" + cu.link[strings.LastIndex(cu.link, "/")+1:], 200},
		{"/invitation/" + newSecret(t), 410}, {"/reset/" + newSecret(t), 410}, {"/login/code", 303},
		{"/security", 401}, {"/nichts", 404},
	} {
		a := b.Get(t, cu.base+tc.path)
		if a.Status != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, a.Status, tc.status)
		}
		checkHeaders(t, "GET "+tc.path, a)
	}
	a := b.Get(t, "/portal/"+uuid.NewString()+"/login")
	if a.Status != 404 {
		t.Errorf("unknown company: %d", a.Status)
	}
	checkHeaders(t, "unknown company", a)
	a = b.Post(t, cu.base+"/login", url.Values{"csrf": {"x"}})
	checkHeaders(t, "forged post", a)
}
