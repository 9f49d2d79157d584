package browser

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestBrowser_Portal: the customer's whole path through the portal in Chromium (issue 23). The
// broker invites a contact with two contracts and two documents, one released to the customer;
// the customer opens the mailed invitation, sets a password, is signed in, sees both contracts
// and exactly the released document (and nothing of another customer of the same broker), asks
// for an address change, which the broker approves through the API, and then sees it approved
// and the new address on "my data"; a second change the broker rejects with a reason, which the
// customer reads. Catches: an invitation mail without a working link, a password form the
// browser cannot post (the CSRF cookie set on a page opened from a mail and not sent with the
// form), a session cookie Chromium does not keep or send (Path, SameSite, Secure on http), the
// layout's style blocked by the CSP nonce, pages unpinned from the contact (another customer's
// contract or a document not released showing), a download that is not the document, a change
// form whose post is lost, an approval that does not reach the contact or the customer's page,
// and a rejection reason the customer never sees.
func TestBrowser_Portal(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	b := w.NewBrokerWith(t, "customer_portal", "emails", "digital_signature", "advice")
	key := b.Co.Secret
	email := signingtest.Address("karla")
	tag := uuid.NewString()[:8]

	karla := apitest.Create[struct{ ID string }](t, w.Env, key, "/contacts", map[string]any{"type": "private",
		"firstName": "Karla", "lastName": "Kunde", "email": email,
		"address": map[string]any{"street": "Altweg", "houseNumber": "1", "zipCode": "10115", "city": "Berlin", "country": "DE"}}).ID
	otto := w.NewContact(t, b, "Otto", "Anders", signingtest.Address("otto"))
	insurer := portalInsurer(t, w)
	contract := func(contact, policy string) {
		apitest.Create[struct{ ID string }](t, w.Env, key, "/contracts", map[string]any{"contactId": contact,
			"insurerId": insurer, "policyNumber": policy, "type": "130", "status": "active", "premium": "12.50",
			"paymentFrequency": "monthly"})
	}
	policies := []string{"HR-" + tag + "-1", "KFZ-" + tag + "-2"}
	contract(karla, policies[0])
	contract(karla, policies[1])
	foreignPolicy := "FREMD-" + tag
	contract(otto, foreignPolicy)
	released := portalUpload(t, w, key, karla, "Police-Hausrat.pdf", true)
	portalUpload(t, w, key, karla, "Interne-Notiz.pdf", false)
	portalUpload(t, w, key, otto, "Fremde-Police.pdf", true)

	if r := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + karla + "/portal-access", Key: key}); r.Status != 201 {
		t.Fatalf("invite: %d %s", r.Status, r.Body)
	}
	base := "/portal/" + b.Co.ID.String()
	link := w.Base + portalInvitationPath(t, w, email)

	tab, _ := newTab(t, newBrowser(t, context.Background()))
	password := "Sommer-Wiese-" + tag
	do(t, tab,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.SendKeys(chromedp.ID("repeat"), password),
		chromedp.Click(chromedp.CSS(`main form button`)),
		// signed in: the layout shows the navigation only to a signed-in customer
		chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Hauptnavigation"]`)),
	)
	// The layout's style runs by its nonce: main has the layout's width, not the default none.
	if mw := run(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('main')).maxWidth`)); mw != "672px" {
		t.Errorf("main max-width %q: the layout's style did not apply", mw)
	}
	cookies := run(t, tab, func(ctx context.Context, target *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, target, network.GetCookies, network.GetCookiesParams{URLs: []string{w.Base + base + "/"}})
		return res.Cookies, err
	})
	i := slices.IndexFunc(cookies, func(c *network.Cookie) bool { return c.Name == "bd_portal" })
	if i < 0 {
		t.Fatalf("no session cookie after accepting the invitation: %+v", cookies)
	}
	if c := cookies[i]; !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax || c.Path != base+"/" || c.Secure {
		t.Errorf("session cookie: HttpOnly %v, SameSite %q, Path %q, Secure %v; want HttpOnly, Lax, %s/, not Secure on http",
			c.HTTPOnly, c.SameSite, c.Path, c.Secure, base)
	}

	page := func(path string) string {
		t.Helper()
		do(t, tab, chromedp.Navigate(w.Base+base+path), chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Hauptnavigation"]`)))
		return run(t, tab, chromedp.Text(chromedp.CSS("main")))
	}

	got := page("/contracts")
	for _, p := range policies {
		if !strings.Contains(got, p) {
			t.Errorf("contracts page misses %s:\n%s", p, got)
		}
	}
	if strings.Contains(got, foreignPolicy) {
		t.Errorf("contracts page shows another customer's contract %s", foreignPolicy)
	}
	if !strings.Contains(got, "12,50") {
		t.Errorf("contracts page shows no premium 12,50 (German format):\n%s", got)
	}

	got = page("/documents")
	hrefs := run(t, tab, chromedp.Evaluate[[]string](`[...new Set([...document.querySelectorAll('main a[href*="/documents/"]')].map(a => a.getAttribute('href')))]`))
	if len(hrefs) != 1 || !strings.HasSuffix(hrefs[0], "/documents/"+released) {
		t.Fatalf("document links %v, want the released document %s only; the page says:\n%s", hrefs, released, got)
	}
	if !strings.Contains(got, "Police-Hausrat.pdf") || strings.Contains(got, "Interne-Notiz.pdf") || strings.Contains(got, "Fremde-Police.pdf") {
		t.Errorf("documents page:\n%s", got)
	}
	// The download is the document, fetched with the browser's session cookie (the page's CSP
	// lets no script fetch, so the test does it as the click would).
	req, _ := http.NewRequest("GET", w.Base+hrefs[0], nil)
	req.AddCookie(&http.Cookie{Name: "bd_portal", Value: cookies[i].Value})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(content, apitest.PDF) {
		t.Errorf("download: %d %q, want 200 and the uploaded PDF", resp.StatusCode, content)
	}

	// An address change: the customer asks, the broker approves.
	submitAddress(t, tab, w.Base+base, "Neuweg", "7a", "20095", "Hamburg")
	first := pendingChange(t, w, key, karla)
	if r := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/portal-change-requests/" + first + "/approve", Key: key}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	page("/changes")
	if cards := changeCards(t, tab); len(cards) != 1 || !strings.Contains(cards[0], "status-approved") ||
		!strings.Contains(cards[0], "Neuweg") {
		t.Errorf("changes page after the approval: %q, want one approved address change to Neuweg", cards)
	}
	if got := page("/"); !strings.Contains(got, "Neuweg") || !strings.Contains(got, "20095") || strings.Contains(got, "Altweg") {
		t.Errorf("my data after the approval:\n%s", got)
	}

	// A second change the broker rejects with a reason the customer reads.
	submitAddress(t, tab, w.Base+base, "Sackgasse", "9", "80331", "München")
	second := pendingChange(t, w, key, karla)
	reason := "Bitte senden Sie uns eine Meldebescheinigung."
	r := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/portal-change-requests/" + second + "/reject", Key: key,
		Body: map[string]any{"reason": reason}})
	if r.Status != 200 {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	page("/changes")
	if cards := changeCards(t, tab); len(cards) != 2 || !strings.Contains(cards[0], "status-rejected") ||
		!strings.Contains(cards[0], "Sackgasse") || !strings.Contains(cards[0], reason) ||
		!strings.Contains(cards[1], "status-approved") || strings.Contains(cards[1], reason) {
		t.Errorf("changes page after the rejection: %q, want the rejected change with its reason, then the approved one", cards)
	}
	if got := page("/"); !strings.Contains(got, "Neuweg") || strings.Contains(got, "Sackgasse") {
		t.Errorf("my data after the rejection:\n%s", got)
	}

	// Signing out ends the session: the next page asks to sign in.
	do(t, tab,
		chromedp.Click(chromedp.CSS(`form[action$="/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/login"]`)),
		chromedp.Navigate(w.Base+base+"/contracts"),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/login"]`)),
	)
	if got := run(t, tab, chromedp.Text(chromedp.CSS("main"))); strings.Contains(got, policies[0]) {
		t.Errorf("after signing out the contracts page still shows them:\n%s", got)
	}
}

// portalInsurer is the catalog's insurer 5501.
func portalInsurer(t *testing.T, w *signingtest.World) string {
	t.Helper()
	r := w.Env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: w.Env.NewCompany(t).Secret})
	var cat apitest.Page[struct{ ID string }]
	r.Decode(t, &cat)
	if r.Status != 200 || len(cat.Data) != 1 {
		t.Fatalf("insurer 5501: %d %s", r.Status, r.Body)
	}
	return cat.Data[0].ID
}

// portalUpload uploads a PDF as a document of contact, released to the customer or not, and
// returns its id.
func portalUpload(t *testing.T, w *signingtest.World, key, contact, filename string, release bool) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "policy")
	if release {
		_ = mw.WriteField("releasedToCustomer", "true")
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := mw.CreatePart(h)
	_, _ = fw.Write(apitest.PDF)
	_ = mw.Close()
	r := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key,
		Body: buf.Bytes(), Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload %s: %d %s", filename, r.Status, r.Body)
	}
	var d struct{ ID string }
	r.Decode(t, &d)
	return d.ID
}

var invitationRE = regexp.MustCompile(`https?://[^\s"'<>]+/portal/[0-9a-f-]{36}/invitation/[A-Za-z0-9_-]+`)

// portalInvitationPath waits for the invitation mail to `to` (the first mail the address gets)
// and returns its link's path.
func portalInvitationPath(t *testing.T, w *signingtest.World, to string) string {
	t.Helper()
	m := w.WaitMails(t, to, "", 1)
	link := invitationRE.FindString(m[0].Text)
	if link == "" {
		t.Fatalf("no invitation link in %q: %q", m[0].Subject, m[0].Text)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// submitAddress fills the address form of the portal at portal and posts it.
func submitAddress(t *testing.T, tab context.Context, portal, street, number, zip, city string) {
	t.Helper()
	do(t, tab,
		chromedp.Navigate(portal+"/changes/new/address"),
		chromedp.WaitVisible(chromedp.ID("street")),
		chromedp.SetValue(chromedp.ID("street"), street),
		chromedp.SetValue(chromedp.ID("houseNumber"), number),
		chromedp.SetValue(chromedp.ID("zipCode"), zip),
		chromedp.SetValue(chromedp.ID("city"), city),
		chromedp.SetValue(chromedp.ID("country"), "DE"),
		chromedp.Click(chromedp.CSS(`main form button`)),
		// posted: the form is gone (a validation error keeps it and fails here with its text)
		chromedp.WaitNotPresent(chromedp.ID("street")),
	)
}

// pendingChange is the id of the contact's one pending change request, through the API.
func pendingChange(t *testing.T, w *signingtest.World, key, contact string) string {
	t.Helper()
	p := apitest.Get[apitest.Page[struct {
		ID     string `json:"id"`
		Kind   string `json:"kind"`
		Status string `json:"status"`
	}]](t, w.Env, key, "/portal-change-requests?contactId="+contact)
	if len(p.Data) != 1 || p.Data[0].Kind != "address" || p.Data[0].Status != "pending" {
		t.Fatalf("pending change requests of the contact: %+v, want one address change", p.Data)
	}
	return p.Data[0].ID
}

// changeCards are the change requests the changes page lists, newest first: each the class of
// its status (status-approved, status-rejected, ...) and its text.
func changeCards(t *testing.T, tab context.Context) []string {
	t.Helper()
	return run(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('main article')].map(a =>
		(a.querySelector('.status') || {className: 'no status'}).className + ' | ' + a.innerText)`))
}
