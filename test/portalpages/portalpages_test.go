// Package portalpages tests the customer portal's signed-in pages (issue 23) on a real server:
// what a customer sees (its data, contracts, released documents, signature requests, change
// requests), the change forms, and that every route answers another contact's id with the 404
// page and changes nothing, refuses a form without its CSRF token, and sends the sign-in page
// without a session. The customer is signed in by writing its access and session (portaltest),
// not through the sign-in flow (test/portalauth).
package portalpages

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// person is a contact of the brokerage with its portal session and its rows.
type person struct {
	c                      portaltest.Customer
	contact                string
	contract               string // policy number
	released, unreleased   string // document ids
	releasedName, internal string // their file names
	change                 string // a pending change request
	signer                 string // its pending signer (role contact)
	csrfNonce, csrf        string
}

type fixture struct {
	w    *signingtest.World
	b    *signingtest.Broker
	x, y person
}

func setup(t *testing.T) *fixture {
	t.Helper()
	w := signingtest.Setup(t)
	f := &fixture{w: w, b: w.NewBrokerWith(t, "customer_portal", "emails", "digital_signature")}
	f.x = f.person(t, "Xaver")
	f.y = f.person(t, "Yvonne")
	return f
}

func (f *fixture) person(t *testing.T, name string) person {
	t.Helper()
	env, key := f.w.Env, f.b.Co.Secret
	email := signingtest.Address(strings.ToLower(name))
	p := person{contact: f.w.NewContact(t, f.b, name, "Kunde", email), contract: "POL-" + name + "-" + uuid.NewString()[:8]}
	var ins struct{ Data []struct{ ID string } }
	env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: key}).Decode(t, &ins)
	apitest.Create[struct{ ID string }](t, env, key, "/contracts", map[string]any{"contactId": p.contact,
		"insurerId": ins.Data[0].ID, "policyNumber": p.contract, "type": "020", "status": "active",
		"premium": "12.50", "paymentFrequency": "monthly"})
	p.releasedName, p.internal = name+"-Police.pdf", name+"-Intern.pdf"
	p.released = f.w.UploadPDF(t, f.b, p.contact, p.releasedName, "# Police\nFür "+name+".")
	release(t, env, key, p.released)
	p.unreleased = f.w.UploadPDF(t, f.b, p.contact, p.internal, "# Intern\nNur für den Makler.")
	req := f.w.CreateRequest(t, f.b, map[string]any{"contactId": p.contact, "title": "Maklervertrag " + name,
		"documents": []map[string]any{{"documentId": p.released}}, "signers": []map[string]any{{"role": "contact"}},
		"fields": []map[string]any{{"signer": 0, "page": 1, "x": 0.1, "y": 0.7, "width": 0.35, "height": 0.08}}})
	p.signer = req.Signers[0].ID
	p.c = portaltest.SignIn(t, env, f.b.Co.ID, uuid.MustParse(p.contact))
	p.change = portaltest.ChangeRequest(t, env, p.c, strings.ToLower(name)+"@neu.test").String()
	// A CSRF nonce of the customer's browser and the token of it: from a page it loaded.
	resp, body := f.get(t, &p, "/changes")
	if resp.StatusCode != 200 {
		t.Fatalf("changes page of %s: %d %s", name, resp.StatusCode, body)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "bd_portal_csrf" {
			p.csrfNonce = ck.Value
		}
	}
	for _, tok := range signingtest.CSRF(body) {
		p.csrf = tok
	}
	if p.csrfNonce == "" || p.csrf == "" {
		t.Fatalf("no CSRF cookie or field on the changes page of %s", name)
	}
	return p
}

func release(t *testing.T, env *apitest.Env, key, id string) {
	t.Helper()
	etag := env.Do(t, apitest.Request{Path: "/documents/" + id, Key: key}).Header.Get("ETag")
	r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/documents/" + id, Key: key, Body: `{"releasedToCustomer":true}`,
		Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": etag}})
	if r.Status != 200 {
		t.Fatalf("release %s: %d %s", id, r.Status, r.Body)
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (f *fixture) url(path string) string { return f.w.Base + "/portal/" + f.b.Co.ID.String() + path }

// send sends a request of p's browser (nil p: no cookies) to path in the portal.
func (f *fixture) send(t *testing.T, p *person, method, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, f.url(path), body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if p != nil {
		req.AddCookie(&http.Cookie{Name: portaltest.CookieName, Value: p.c.Cookie})
		if p.csrfNonce != "" {
			req.AddCookie(&http.Cookie{Name: "bd_portal_csrf", Value: p.csrfNonce})
		}
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (f *fixture) get(t *testing.T, p *person, path string) (*http.Response, string) {
	return f.send(t, p, "GET", path, nil)
}

// post sends a form of p with its CSRF token.
func (f *fixture) post(t *testing.T, p *person, path string, vals url.Values) (*http.Response, string) {
	t.Helper()
	if vals == nil {
		vals = url.Values{}
	}
	vals.Set("csrf", p.csrf)
	return f.send(t, p, "POST", path, vals)
}

// isNotFound: the portal's 404 page, in HTML.
func isNotFound(t *testing.T, what string, resp *http.Response, body string) {
	t.Helper()
	if resp.StatusCode != 404 || !strings.Contains(body, "Seite nicht gefunden") ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("%s: %d %q, want the 404 page", what, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// changeStatus reads a change request's status as the broker sees it.
func (f *fixture) changeStatus(t *testing.T, id string) string {
	t.Helper()
	var s string
	if err := f.w.Env.OwnerDB.QueryRow(`SELECT status FROM portal_change_requests WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPortalPages_Show: each page shows the customer's own data and nothing of the other
// contact's: its contracts with insurer, premium and status, its released document but not the
// unreleased one, its pending signature, its change request. Catches a page that queries by
// company instead of by contact, and the release ignored.
func TestPortalPages_Show(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x, y := &f.x, &f.y
	for _, c := range []struct {
		path      string
		want, not []string
	}{
		{"/", []string{"Xaver Kunde", "/changes/new/address", "/changes/new/bank"}, []string{"Yvonne"}},
		{"/contracts", []string{x.contract, "12,50 € monatlich", "aktiv"}, []string{y.contract}},
		{"/documents", []string{x.releasedName, "/documents/" + x.released}, []string{x.internal, y.releasedName, y.released}},
		{"/signatures", []string{"Maklervertrag Xaver", "/signatures/" + x.signer + "/open"}, []string{"Yvonne", y.signer}},
		{"/changes", []string{"xaver@neu.test", "in Prüfung", "/changes/" + x.change + "/withdraw"}, []string{"yvonne", y.change}},
		{"/changes/new/address", []string{`name="street"`, `name="zipCode"`}, nil},
		{"/changes/new/bank", []string{`name="iban"`}, nil},
	} {
		resp, body := f.get(t, x, c.path)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", c.path, resp.StatusCode)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s does not show %q", c.path, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(body, n) {
				t.Errorf("GET %s shows %q of the other contact or an unreleased document", c.path, n)
			}
		}
		for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options"} {
			if resp.Header.Get(h) == "" {
				t.Errorf("GET %s: no %s", c.path, h)
			}
		}
	}
}

// TestPortalPages_Download: the own released document downloads as an attachment of its sniffed
// type; the own unreleased one, the other contact's released one, an unknown and a malformed id
// are the 404 page. Catches a download by id alone.
func TestPortalPages_Download(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x, y := &f.x, &f.y
	resp, body := f.get(t, x, "/documents/"+x.released)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") || !strings.HasPrefix(body, "%PDF") ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("own released document: %d %v", resp.StatusCode, resp.Header)
	}
	for what, id := range map[string]string{"own unreleased": x.unreleased, "other contact's released": y.released,
		"unknown": uuid.NewString(), "malformed": "nope"} {
		resp, body := f.get(t, x, "/documents/"+id)
		isNotFound(t, what+" document", resp, body)
	}
}

// TestPortalPages_BOLA: every route that takes an id answers another contact's with the 404
// page and changes nothing: the other's change request stays pending, no signing link is handed
// out. The own ids are the control. Catches an action that trusts the id of the path.
func TestPortalPages_BOLA(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x, y := &f.x, &f.y

	resp, body := f.post(t, x, "/changes/"+y.change+"/withdraw", nil)
	isNotFound(t, "withdraw the other contact's change", resp, body)
	if s := f.changeStatus(t, y.change); s != "pending" {
		t.Errorf("the other contact's change request is %s after the probe", s)
	}
	resp, body = f.post(t, x, "/signatures/"+y.signer+"/open", nil)
	isNotFound(t, "open the other contact's signer", resp, body)
	if loc := resp.Header.Get("Location"); loc != "" {
		t.Errorf("a signing link for the other contact's signer: %s", loc)
	}
	resp, body = f.post(t, x, "/changes/"+uuid.NewString()+"/withdraw", nil)
	isNotFound(t, "withdraw an unknown change", resp, body)
	resp, body = f.post(t, x, "/signatures/nope/open", nil)
	isNotFound(t, "open a malformed signer", resp, body)
	resp, body = f.get(t, x, "/changes/new/password")
	isNotFound(t, "an unknown change kind", resp, body)

	// The controls: the own ids work.
	resp, _ = f.post(t, x, "/signatures/"+x.signer+"/open", nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || !strings.Contains(loc, "/sign/") {
		t.Errorf("open the own signer: %d %q, want 303 to the signing page", resp.StatusCode, loc)
	}
	resp, _ = f.post(t, x, "/changes/"+x.change+"/withdraw", nil)
	if resp.StatusCode != 303 || !strings.HasSuffix(resp.Header.Get("Location"), "/changes?done=withdrawn") {
		t.Errorf("withdraw the own change: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if s := f.changeStatus(t, x.change); s != "withdrawn" {
		t.Errorf("the own change request is %s after withdrawing", s)
	}
	resp, _ = f.post(t, x, "/changes/"+x.change+"/withdraw", nil)
	if resp.StatusCode != 303 || !strings.HasSuffix(resp.Header.Get("Location"), "done=decided") {
		t.Errorf("withdraw twice: %d %q, want the notice that it is no longer pending", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestPortalPages_CSRF: every form post without the token, or with another browser's, is 403
// and changes nothing. Catches a POST route that skips csrfOK.
func TestPortalPages_CSRF(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x, y := &f.x, &f.y
	for _, path := range []string{"/changes/" + x.change + "/withdraw", "/signatures/" + x.signer + "/open",
		"/changes/new/email"} {
		for what, tok := range map[string]string{"missing": "", "another browser's": y.csrf} {
			vals := url.Values{"email": {"neu@kunde.test"}}
			if tok != "" {
				vals.Set("csrf", tok)
			}
			resp, _ := f.send(t, x, "POST", path, vals)
			if resp.StatusCode != 403 {
				t.Errorf("POST %s, token %s: %d, want 403", path, what, resp.StatusCode)
			}
		}
	}
	if s := f.changeStatus(t, x.change); s != "pending" {
		t.Errorf("the change request is %s after posts without a token", s)
	}
}

// TestPortalPages_SignedOut: without a session (or with an unknown cookie) every page is the
// sign-in page with 401, and nothing of the customer. Catches a page outside signedIn.
func TestPortalPages_SignedOut(t *testing.T) {
	t.Parallel()
	f := setup(t)
	stranger := &person{c: portaltest.Customer{Cookie: "unbekannt"}}
	for _, path := range []string{"/", "/contracts", "/documents", "/documents/" + f.x.released, "/signatures", "/changes",
		"/changes/new/address"} {
		for what, p := range map[string]*person{"no cookie": nil, "unknown cookie": stranger} {
			resp, body := f.get(t, p, path)
			if resp.StatusCode != 401 || strings.Contains(body, "Xaver") || strings.Contains(body, "%PDF") {
				t.Errorf("GET %s, %s: %d, want 401 with the sign-in page", path, what, resp.StatusCode)
			}
		}
	}
}

// TestPortalPages_ChangeForm: a form with an invalid value is shown again with an error summary
// (422) and the values typed; a valid one is stored as a pending request (303 to the list with a
// notice); a second of the same kind while the first is pending is 409 with a notice. Catches
// validation errors answered as a problem+json or a 500, and a form that loses the input.
func TestPortalPages_ChangeForm(t *testing.T) {
	t.Parallel()
	f := setup(t)
	x := &f.x
	resp, body := f.post(t, x, "/changes/new/address", url.Values{"street": {""}, "houseNumber": {"7"}, "zipCode": {"1"},
		"city": {"Köln"}, "country": {"DE"}})
	if resp.StatusCode != 422 || !strings.Contains(body, `class="summary"`) || !strings.Contains(body, `value="Köln"`) ||
		!strings.Contains(body, `href="#street"`) || !strings.Contains(body, `aria-invalid="true"`) {
		t.Fatalf("invalid address: %d, want 422 with the summary and the values: %s", resp.StatusCode, body)
	}
	vals := url.Values{"street": {"Domstraße"}, "houseNumber": {"7"}, "zipCode": {"50667"}, "city": {"Köln"}, "country": {"DE"}}
	resp, _ = f.post(t, x, "/changes/new/address", vals)
	if resp.StatusCode != 303 || !strings.HasSuffix(resp.Header.Get("Location"), "/changes?done=created") {
		t.Fatalf("valid address: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, body = f.get(t, x, "/changes?done=created")
	if !strings.Contains(body, "Domstraße") || !strings.Contains(body, "Ihr Makler prüft sie") {
		t.Errorf("the list does not show the new request with the notice")
	}
	resp, body = f.post(t, x, "/changes/new/address", vals)
	if resp.StatusCode != 409 || !strings.Contains(body, "bereits eine Änderung") {
		t.Errorf("second address change while pending: %d, want 409 with a notice", resp.StatusCode)
	}
	resp, _ = f.post(t, x, "/changes/new/bank", url.Values{"iban": {"DE89370400440532013000"}, "accountHolder": {"Xaver Kunde"}})
	if resp.StatusCode != 303 {
		t.Fatalf("bank change: %d", resp.StatusCode)
	}
	_, body = f.get(t, x, "/changes")
	if strings.Contains(body, "DE89370400440532013000") || !strings.Contains(body, "DE89 **** **** **** **30 00") {
		t.Errorf("the bank change is not shown masked")
	}
}

// TestPortalPages_ChangeFormRace: five submissions of the same kind at once store one pending
// request; the others answer 409 with the notice. Catches the check-then-insert race of the
// one-pending-per-kind rule (two requests of one kind both pending, the second approval
// overwriting the first), which the partial unique index tenant_portal_change_requests_pending
// closes.
func TestPortalPages_ChangeFormRace(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 5
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := f.post(t, &f.y, "/changes/new/phone", url.Values{"number": {"+49 171 5550" + strconv.Itoa(100+i)}})
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 303:
			created++
		case 409:
		default:
			t.Errorf("submission answered %d, want 303 or 409", s)
		}
	}
	var pending int
	if err := f.w.Env.OwnerDB.QueryRow(`SELECT count(*) FROM portal_change_requests WHERE contact_id = $1
		AND kind = 'phone' AND status = 'pending'`, f.y.contact).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if created != 1 || pending != 1 {
		t.Errorf("%d submissions taken, %d pending phone requests; want 1 and 1 (%v)", created, pending, statuses)
	}
}
