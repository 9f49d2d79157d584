package portalauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestLogin_Refusals: a wrong password, an unknown e-mail, a pending access and a revoked one
// get the same 401 page with the same message, and no session; the e-mail is matched without
// regard to case and spaces; logout ends the session (the cookie no longer opens a page).
// Catches: account enumeration by message or status, a pending or revoked access signing in,
// an e-mail compared case-sensitively, a logout that leaves the session row valid.
func TestLogin_Refusals(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "lena")
	cu.accept(t, portaltest.NewBrowser(t, w.Base, nil))
	pending := newCustomer(t, w, w.Env, co, "pending")
	revoked := newCustomer(t, w, w.Env, co, "revoked")
	revoked.accept(t, portaltest.NewBrowser(t, w.Base, nil))
	revoked.sql(t, "UPDATE portal_accesses SET status = 'revoked', revoked_at = now() WHERE contact_id = $1")

	var first string
	for _, tc := range []struct{ name, email, password string }{
		{"wrong password", cu.email, cu.password + "x"},
		{"unknown e-mail", signingtest.Address("niemand"), cu.password},
		{"pending access", pending.email, pending.password},
		{"revoked access", revoked.email, revoked.password},
		{"empty", "", ""},
	} {
		b := portaltest.NewBrowser(t, w.Base, nil)
		a := cu.login(t, b, tc.email, tc.password)
		if a.Status != 401 || !strings.Contains(a.Body, "E-Mail-Adresse oder Passwort ist falsch.") {
			t.Errorf("%s: %d\n%s", tc.name, a.Status, a.Body)
		}
		msg := a.Body[strings.Index(a.Body, "<main"):]
		msg = strings.ReplaceAll(msg, tc.email, "")
		msg = csrfRE.ReplaceAllString(msg, "")
		if first == "" {
			first = msg
		} else if msg != first {
			t.Errorf("%s: the page differs from a wrong password's:\n%s\n---\n%s", tc.name, msg, first)
		}
		if cu.signedIn(t, b) {
			t.Errorf("%s: signed in", tc.name)
		}
	}

	b := portaltest.NewBrowser(t, w.Base, nil)
	a := cu.login(t, b, "  "+strings.ToUpper(cu.email)+" ", cu.password)
	if a.Status != 303 || a.Location != cu.base+"/" || !cu.signedIn(t, b) {
		t.Fatalf("login: %d %q", a.Status, a.Location)
	}
	if acc := cu.access(t); acc.LastLoginAt == nil || time.Since(*acc.LastLoginAt) > time.Minute {
		t.Errorf("last_login_at %v", acc.LastLoginAt)
	}
	page := b.Get(t, cu.base+"/security")
	out := b.Post(t, cu.base+"/logout", url.Values{"csrf": {csrfRE.FindStringSubmatch(page.Body)[2]}})
	if out.Status != 303 || out.Location != cu.base+"/login?notice=logout" {
		t.Fatalf("logout: %d %q", out.Status, out.Location)
	}
	if l := b.Get(t, out.Location); !strings.Contains(l.Body, "Sie haben sich abgemeldet.") {
		t.Errorf("login after logout has no notice:\n%s", l.Body)
	}
	if cu.signedIn(t, b) {
		t.Error("still signed in after logout")
	}
}

// TestLogin_Throttle: five wrong passwords from one address block that address for the
// account (429, Retry-After, not even the right password is checked), while the right password
// from another address still signs in: an attacker cannot lock the customer out. Twenty
// failures from one address block it for every account. Catches: no throttle, a throttle per
// account alone (lockout), successes counted, the OAuth login's counts shared.
func TestLogin_Throttle(t *testing.T) {
	t.Parallel()
	// App.Test's peer is 0.0.0.0: trusted as a proxy, X-Forwarded-For names the sender.
	env := apitest.New(t, app.WithConfig(func(c *app.Config) {
		c.Clients, _ = ratelimit.ParseTrustedProxies("0.0.0.0/32")
	}))
	co := env.NewCompany(t, "customer_portal")
	cu := newCustomer(t, nil, env, co, "tom")
	origin := "http://portal.test"
	cu.accept(t, portaltest.NewBrowser(t, origin, appTransport{env}))

	attacker := portaltest.NewBrowser(t, origin, appTransport{env})
	attacker.Header["X-Forwarded-For"] = "198.51.100.7"
	for i := range ratelimit.LoginAccountLimit {
		if a := cu.login(t, attacker, cu.email, "falsch-"+string(rune('a'+i))); a.Status != 401 {
			t.Fatalf("failure %d: %d", i+1, a.Status)
		}
	}
	a := cu.login(t, attacker, cu.email, cu.password)
	if a.Status != 429 || a.Header.Get("Retry-After") == "" || !strings.Contains(a.Body, "Zu viele Versuche") {
		t.Fatalf("sixth attempt (right password) from the attacker's address: %d %v", a.Status, a.Header)
	}
	checkHeaders(t, "429", a)

	customer := portaltest.NewBrowser(t, origin, appTransport{env})
	customer.Header["X-Forwarded-For"] = "203.0.113.20"
	if a := cu.login(t, customer, cu.email, cu.password); a.Status != 303 {
		t.Fatalf("the customer from elsewhere: %d\n%s", a.Status, a.Body)
	}
	// Successes do not count: signing in again and again stays possible.
	for range ratelimit.LoginAccountLimit + 1 {
		if a := cu.login(t, customer, cu.email, cu.password); a.Status != 303 {
			t.Fatalf("repeated success: %d", a.Status)
		}
	}

	// Per address across accounts: after LoginIPLimit failures the address is blocked for
	// another account too.
	spray := portaltest.NewBrowser(t, origin, appTransport{env})
	spray.Header["X-Forwarded-For"] = "198.51.100.99"
	for i := range ratelimit.LoginIPLimit {
		cu.login(t, spray, signingtest.Address("spray"), "x")
		_ = i
	}
	if a := cu.login(t, spray, cu.email, cu.password); a.Status != 429 {
		t.Errorf("address after %d failures on other accounts: %d", ratelimit.LoginIPLimit, a.Status)
	}
}

// TestLogin_SessionIsNoAPICredential: the portal's session cookie opens no API route (401),
// and a revoked access's session answers 401 at its next request. Catches: a cookie accepted
// as a credential by the API, a session that outlives its access.
func TestLogin_SessionIsNoAPICredential(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "api")
	b := portaltest.NewBrowser(t, w.Base, nil)
	cu.accept(t, b)
	for _, path := range []string{"/api/public/v1/contacts", "/api/public/v1/contacts/" + cu.contact.String(),
		"/api/public/v1/contacts/" + cu.contact.String() + "/portal-access"} {
		// The cookie is scoped to the portal's path: send it by hand, as a crafted request would.
		req, _ := http.NewRequest("GET", w.Base+path, nil)
		for _, c := range b.Cookies(t, cu.base+"/") {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("GET %s with the portal cookie: %d", path, resp.StatusCode)
		}
	}

	if !cu.signedIn(t, b) {
		t.Fatal("not signed in")
	}
	if r := w.Env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + cu.contact.String() + "/portal-access",
		Key: co.Secret}); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if cu.signedIn(t, b) {
		t.Error("a revoked access's session still opens pages")
	}
}

// TestLogin_CookieSecureUnderHTTPS: with an https PUBLIC_URL the session cookie (and the CSRF
// cookie) are Secure. Catches: a session cookie sent over plain http.
func TestLogin_CookieSecureUnderHTTPS(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithConfig(func(c *app.Config) { c.Mail.PublicURL = "https://portal.example" }))
	co := env.NewCompany(t, "customer_portal")
	cu := newCustomer(t, nil, env, co, "secure")
	b := portaltest.NewBrowser(t, "https://portal.example", appTransport{env})
	page := b.Get(t, cu.link)
	a := b.Submit(t, cu.link, cu.link, url.Values{"password": {cu.password}, "repeat": {cu.password}})
	if a.Status != 303 {
		t.Fatalf("accept: %d\n%s", a.Status, a.Body)
	}
	for what, h := range map[string]http.Header{"page": page.Header, "accept": a.Header} {
		for _, c := range (&http.Response{Header: h}).Cookies() {
			if !c.Secure || !c.HttpOnly {
				t.Errorf("%s: cookie %s not Secure and HttpOnly: %q", what, c.Name, h.Values("Set-Cookie"))
			}
		}
	}
	if !cu.signedIn(t, b) {
		t.Error("not signed in")
	}
}
