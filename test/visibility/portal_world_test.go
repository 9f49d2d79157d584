package visibility

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

var portalLinkRE = regexp.MustCompile(`https?://[^\s"'<>]+(/portal/[0-9a-f-]+/invitation/[A-Za-z0-9_-]+)`)

// portalSteps are the customer portal's scenarios of TestVisibility_EventsFollowResources
// (issue 23, docs/decisions/portal.md): portal accesses and change requests are as visible as
// their contact, whoever acts (the broker through the API, the customer in the portal, whose
// transaction is pinned to its contact). Agent A invites its own customer, which accepts the
// mailed link (activated), asks in the portal for three changes (created) and withdraws one;
// A approves one and rejects one; the company key invites agent B's customer; both accesses are
// revoked. A reads the events of its customer, B those of its own, never the other's.
func (w *world) portalSteps(t *testing.T, l *eventLedger) []differ {
	t.Helper()
	m := w.mailboxes(t) // A's invitation goes out from A's personal mailbox, B's from the shared one
	co, keyA := w.co.Secret, w.keys["agent A key"]
	n := mailSeq.Add(1)
	addrA, addrB := fmt.Sprintf("paula-%d@kunde.test", n), fmt.Sprintf("peter-%d@kunde.test", n)
	var cA, cB, accA, accB string
	l.step(t, nil, func() { // portal_access.invited of A's customer and of B's
		cA = idOf(t, w.do(t, keyA, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Paula", "lastName": "Portal",
			"email": addrA, "ownerId": w.agentA.ID.String()}, 201))
		cB = idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Peter", "lastName": "Portal",
			"email": addrB, "ownerId": w.agentB.ID.String()}, 201))
		accA = idOf(t, w.do(t, keyA, "POST", "/contacts/"+cA+"/portal-access", nil, 201))
		accB = idOf(t, w.do(t, co, "POST", "/contacts/"+cB+"/portal-access", nil, 201))
	})
	p := &portalBrowser{w: w, cookies: map[string]string{}}
	l.step(t, nil, func() { // portal_access.activated: the customer sets its password through the mailed link
		invitation := waitMail(t, m, addrA, "Ihr Zugang zum Kundenportal")
		link := portalLinkRE.FindStringSubmatch(invitation.Text)
		if link == nil || !strings.HasPrefix(link[1], p.base()+"/") {
			t.Fatalf("no invitation link of %s in the mail:\n%s", p.base(), invitation.Text)
		}
		r := p.submit(t, link[1], link[1], url.Values{"password": {"Sommer am Meer 2026"}, "repeat": {"Sommer am Meer 2026"}})
		if r.Status != 303 || r.Header.Get("Location") != p.base()+"/" {
			t.Fatalf("accept the invitation: %d %q: %s", r.Status, r.Header.Get("Location"), r.Body)
		}
	})
	// One pending request per kind: three kinds, one for each outcome.
	l.step(t, nil, func() { // portal_change_request.created, three times
		for kind, form := range map[string]url.Values{
			"name":  {"firstName": {"Paula"}, "lastName": {"Neumann"}},
			"phone": {"number": {"030 1234567"}},
			"email": {"email": {"paula-neu-" + fmt.Sprint(n) + "@kunde.test"}},
		} {
			action := p.base() + "/changes/new/" + kind
			if r := p.submit(t, action, action, form); r.Status != 303 {
				t.Fatalf("submit the %s change: %d: %s", kind, r.Status, r.Body)
			}
		}
	})
	var pending struct {
		Data []struct{ ID, Kind string }
	}
	w.do(t, co, "GET", "/portal-change-requests?contactId="+cA, nil, 200).Decode(t, &pending)
	crs := map[string]string{}
	for _, r := range pending.Data {
		crs[r.Kind] = r.ID
	}
	if len(crs) != 3 {
		t.Fatalf("the customer's pending requests: %+v", pending.Data)
	}
	l.step(t, nil, func() { // portal_change_request.withdrawn, in the portal
		action := p.base() + "/changes/" + crs["email"] + "/withdraw"
		if r := p.submit(t, p.base()+"/changes", action, url.Values{}); r.Status != 303 ||
			!strings.HasSuffix(r.Header.Get("Location"), "/changes?done=withdrawn") {
			t.Fatalf("withdraw: %d %q: %s", r.Status, r.Header.Get("Location"), r.Body)
		}
	})
	l.step(t, nil, func() { // portal_change_request.approved (and contact.updated), .rejected, by the owner
		w.do(t, keyA, "POST", "/portal-change-requests/"+crs["name"]+"/approve", nil, 200)
		w.do(t, keyA, "POST", "/portal-change-requests/"+crs["phone"]+"/reject", map[string]any{"reason": "Bitte rufen Sie uns an."}, 200)
	})
	l.step(t, nil, func() { // portal_access.revoked, both
		w.do(t, keyA, "DELETE", "/contacts/"+cA+"/portal-access", nil, 204)
		w.do(t, co, "DELETE", "/contacts/"+cB+"/portal-access", nil, 204)
	})
	return []differ{
		{"portal_access.invited", accA, "agent A key", true}, {"portal_access.invited", accA, "agent B key", false},
		{"portal_access.invited", accA, "agent B with delegation", true}, {"portal_access.invited", accA, "admin user key", true},
		{"portal_access.invited", accB, "agent B key", true}, {"portal_access.invited", accB, "agent A key", false},
		{"portal_access.activated", accA, "agent A token", true}, {"portal_access.activated", accA, "agent B key", false},
		{"portal_access.activated", accA, "agent B after expiry", false},
		{"portal_change_request.created", crs["name"], "agent A key", true},
		{"portal_change_request.created", crs["name"], "agent B key", false},
		{"portal_change_request.created", crs["phone"], "manager key", true},
		{"portal_change_request.withdrawn", crs["email"], "agent A key", true},
		{"portal_change_request.withdrawn", crs["email"], "agent B token", false},
		{"portal_change_request.approved", crs["name"], "agent A token", true},
		{"portal_change_request.approved", crs["name"], "agent B key", false},
		{"portal_change_request.rejected", crs["phone"], "admin user token", true},
		{"portal_change_request.rejected", crs["phone"], "agent B key", false},
		{"portal_access.revoked", accA, "agent A key", true}, {"portal_access.revoked", accA, "agent B key", false},
		{"portal_access.revoked", accB, "agent B key", true}, {"portal_access.revoked", accB, "agent A key", false},
	}
}

// portalResource is where the resource of a portal event is read: the contact's access, or
// the change request in the list of its contact and status (there is no GET of one).
func portalResource(kind string, s func(string) string) made {
	if kind == "portal_access" {
		return made{path: "/contacts/" + s("contactId") + "/portal-access", has: s("id")}
	}
	return made{path: "/portal-change-requests?contactId=" + s("contactId") + "&status=" + s("status"), has: s("id")}
}

// portalBrowser is the customer's browser on the world company's portal: it keeps the cookies
// the pages set (the CSRF nonce, the session) and follows no redirect.
type portalBrowser struct {
	w       *world
	cookies map[string]string
}

func (p *portalBrowser) base() string { return "/portal/" + p.w.co.ID.String() }

func (p *portalBrowser) do(t *testing.T, method, path string, form url.Values) *apitest.Response {
	t.Helper()
	h := map[string]string{}
	var body any
	if form != nil {
		h["Content-Type"] = "application/x-www-form-urlencoded"
		body = form.Encode()
	}
	var jar []string
	for k, v := range p.cookies {
		jar = append(jar, k+"="+v)
	}
	if len(jar) > 0 {
		h["Cookie"] = strings.Join(jar, "; ")
	}
	r := p.w.env.Do(t, apitest.Request{Method: method, Path: "/" + path, Body: body, Header: h})
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Value == "" || c.MaxAge < 0 {
			delete(p.cookies, c.Name)
		} else {
			p.cookies[c.Name] = c.Value
		}
	}
	return r
}

// submit loads page, takes the csrf field of its form posting to action and posts form with it.
func (p *portalBrowser) submit(t *testing.T, page, action string, form url.Values) *apitest.Response {
	t.Helper()
	r := p.do(t, "GET", page, nil)
	tok := signingtest.CSRF(string(r.Body))[action]
	if tok == "" {
		t.Fatalf("GET %s (%d): no form to %s: %s", page, r.Status, action, r.Body)
	}
	form.Set("csrf", tok)
	return p.do(t, "POST", action, form)
}
