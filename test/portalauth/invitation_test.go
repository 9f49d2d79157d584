package portalauth

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestInvitation_AcceptSignsIn: the link shows the brokerage and the account, refuses a bad
// password with the form again (422, error summary, the input described by its message), and
// with a good one activates the access, records portal_access.activated and signs the customer
// in with a session cookie HttpOnly, SameSite=Lax, scoped to the company's portal. Catches: a
// link that does not work, a password rule not applied, an access left pending, a missing
// event, a session not started or a cookie readable by script or sent cross-site.
func TestInvitation_AcceptSignsIn(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "anna")
	b := portaltest.NewBrowser(t, w.Base, nil)

	page := b.Get(t, cu.link)
	if page.Status != 200 || !strings.Contains(page.Body, "Makler ") || !strings.Contains(page.Body, strings.ToLower(cu.email)) {
		t.Fatalf("invitation page: %d\n%s", page.Status, page.Body)
	}
	for _, tc := range []struct{ name, password, repeat, field string }{
		{"too short", "kurz12345", "kurz12345", "password"},
		{"too long", strings.Repeat("x", 201), strings.Repeat("x", 201), "password"},
		{"repeat differs", cu.password, cu.password + "!", "repeat"},
		{"the e-mail address", strings.ToLower(cu.email), strings.ToLower(cu.email), "password"},
	} {
		a := b.Submit(t, cu.link, cu.link, url.Values{"password": {tc.password}, "repeat": {tc.repeat}})
		if a.Status != 422 || !strings.Contains(a.Body, `class="summary"`) ||
			!strings.Contains(a.Body, `aria-describedby="`) || !strings.Contains(a.Body, `id="`+tc.field+`-error"`) ||
			!strings.Contains(a.Body, `href="#`+tc.field+`"`) {
			t.Errorf("%s: %d\n%s", tc.name, a.Status, a.Body)
		}
	}
	if got := cu.access(t); got.Status != "pending" || got.PasswordHash != nil {
		t.Fatalf("after refused forms: %s", got.Status)
	}

	a := b.Submit(t, cu.link, cu.link, url.Values{"password": {cu.password}, "repeat": {cu.password}})
	if a.Status != 303 || a.Location != cu.base+"/" {
		t.Fatalf("accept: %d %q\n%s", a.Status, a.Location, a.Body)
	}
	checkHeaders(t, "accept redirect", a)
	var session *http.Cookie
	for _, c := range (&http.Response{Header: a.Header}).Cookies() {
		if c.Name == "bd_portal" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != cu.base+"/" ||
		session.Secure {
		t.Fatalf("session cookie %+v (Set-Cookie %q)", session, a.Header.Values("Set-Cookie"))
	}
	if !cu.signedIn(t, b) {
		t.Fatal("not signed in after accepting")
	}
	acc := cu.access(t)
	if acc.Status != "active" || acc.ActivatedAt == nil || acc.PasswordHash == nil ||
		!strings.HasPrefix(*acc.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("access after accepting: %s %v", acc.Status, acc.ActivatedAt)
	}
	ev := w.Env.Do(t, apitest.Request{Path: "/events?limit=200&types=portal_access.activated", Key: co.Secret})
	if ev.Status != 200 || !strings.Contains(string(ev.Body), acc.ID.String()) {
		t.Errorf("portal_access.activated: %d %s", ev.Status, ev.Body)
	}
	// The password works at the login form from another browser.
	if a := cu.login(t, portaltest.NewBrowser(t, w.Base, nil), cu.email, cu.password); a.Status != 303 || a.Location != cu.base+"/" {
		t.Errorf("login with the new password: %d %q", a.Status, a.Location)
	}
}

// TestInvitation_LinkNoLongerValid: a used, expired, revoked, unknown link or one of another
// company's path answers one 410 page, on GET and POST, and changes nothing; posted twice at
// once, a link works once. Catches: a reusable link, an expiry not checked, a token found
// across companies, a revoked access activated again, a race between two posts (no lock).
func TestInvitation_LinkNoLongerValid(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	other := w.NewBrokerWith(t, "customer_portal", "emails").Co

	used := newCustomer(t, w, w.Env, co, "used")
	used.accept(t, portaltest.NewBrowser(t, w.Base, nil))
	expired := newCustomer(t, w, w.Env, co, "expired")
	expired.expire(t, expired.link)
	expiredLink := expired.link
	// Revoked in the database only, its link left unused: the access's state is checked too,
	// not only the link's (DELETE voids the links as well).
	revoked := newCustomer(t, w, w.Env, co, "revoked")
	revoked.sql(t, "UPDATE portal_accesses SET status = 'revoked', revoked_at = now() WHERE contact_id = $1")
	foreign := newCustomer(t, w, w.Env, other, "foreign")
	// The other company's token under this company's path.
	foreignLink := co.ID.String()
	foreignLink = "/portal/" + foreignLink + "/invitation/" + foreign.link[strings.LastIndex(foreign.link, "/")+1:]

	for _, tc := range []struct{ name, link string }{
		{"used", used.link}, {"expired", expiredLink}, {"revoked access", revoked.link},
		{"other company's path", foreignLink}, {"unknown", used.base + "/invitation/" + newSecret(t)},
	} {
		b := portaltest.NewBrowser(t, w.Base, nil)
		g := b.Get(t, tc.link)
		if g.Status != 410 || !strings.Contains(g.Body, "Link nicht mehr gültig") {
			t.Errorf("%s: GET %d\n%s", tc.name, g.Status, g.Body)
		}
		checkHeaders(t, tc.name, g)
		tok := signingtest.CSRF(b.Get(t, used.base+"/login").Body)[used.base+"/login"]
		a := b.Post(t, tc.link, url.Values{"csrf": {tok}, "password": {"ein gutes Passwort"}, "repeat": {"ein gutes Passwort"}})
		if a.Status != 410 || strings.Contains(strings.Join(a.Header.Values("Set-Cookie"), ";"), "bd_portal=") {
			t.Errorf("%s: POST %d %v", tc.name, a.Status, a.Header.Values("Set-Cookie"))
		}
	}
	if got := expired.access(t); got.Status != "pending" {
		t.Errorf("expired link changed the access: %s", got.Status)
	}
	if got := revoked.access(t); got.Status != "revoked" {
		t.Errorf("revoked access is %s", got.Status)
	}
	if got := foreign.access(t); got.Status != "pending" {
		t.Errorf("foreign access is %s", got.Status)
	}

	// Two posts of one link at once: exactly one signs in.
	race := newCustomer(t, w, w.Env, co, "race")
	// Every browser loads the form first; then all post at once.
	type poster struct {
		b   *portaltest.Browser
		tok string
	}
	posters := make([]poster, 4)
	for i := range posters {
		b := portaltest.NewBrowser(t, w.Base, nil)
		page := b.Get(t, race.link)
		m := csrfRE.FindStringSubmatch(page.Body)
		if m == nil {
			t.Fatalf("invitation page %d:\n%s", page.Status, page.Body)
		}
		posters[i] = poster{b, m[2]}
	}
	var wg sync.WaitGroup
	statuses := make([]int, len(posters))
	for i, p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = p.b.Post(t, race.link, url.Values{"csrf": {p.tok}, "password": {race.password},
				"repeat": {race.password}}).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 303:
			ok++
		case 410:
		default:
			t.Errorf("concurrent accept: %d", s)
		}
	}
	if ok != 1 {
		t.Errorf("concurrent accepts: %v, want exactly one 303", statuses)
	}
}

// TestInvitation_CSRF: a post without the browser's token (another site's form) is 403 and
// changes nothing; the link still works afterwards. Catches: a CSRF check after the work, or
// none.
func TestInvitation_CSRF(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "csrf")
	b := portaltest.NewBrowser(t, w.Base, nil)
	b.Get(t, cu.link) // the csrf cookie
	for _, tok := range []string{"", "forged", csrfRE.FindStringSubmatch(portaltest.NewBrowser(t, w.Base, nil).Get(t, cu.link).Body)[2]} {
		a := b.Post(t, cu.link, url.Values{"csrf": {tok}, "password": {cu.password}, "repeat": {cu.password}})
		if a.Status != 403 {
			t.Errorf("token %q: %d", tok, a.Status)
		}
		checkHeaders(t, "403", a)
	}
	for _, path := range []string{"/login", "/logout", "/reset", "/login/code", "/security/totp", "/security/totp/disable"} {
		if a := b.Post(t, cu.base+path, url.Values{"csrf": {"forged"}, "email": {cu.email}}); a.Status != 403 {
			t.Errorf("POST %s with a forged token: %d", path, a.Status)
		}
	}
	if got := cu.access(t); got.Status != "pending" || got.PasswordHash != nil {
		t.Fatalf("a forged post changed the access: %s", got.Status)
	}
	cu.accept(t, b)
}
