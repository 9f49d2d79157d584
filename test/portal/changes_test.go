package portal

import (
	"strconv"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// contactNow is what the tests read of a contact: its version (ETag), address and timeline.
type contactNow struct {
	version int
	etag    string
	address map[string]any
	email   string
}

func readContact(t *testing.T, w *signingtest.World, key, id string) contactNow {
	t.Helper()
	r := w.Env.Do(t, apitest.Request{Path: "/contacts/" + id, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET contact: %d %s", r.Status, r.Body)
	}
	var v struct {
		Email   string         `json:"email"`
		Address map[string]any `json:"address"`
	}
	r.Decode(t, &v)
	etag := r.Header.Get("ETag")
	n, _ := strconv.Atoi(strings.Trim(etag, `"`))
	return contactNow{version: n, etag: etag, address: v.Address, email: v.Email}
}

// timeline is the contents of the contact's system entries.
func timeline(t *testing.T, w *signingtest.World, key, id string) string {
	t.Helper()
	p := apitest.Get[apitest.Page[struct {
		Content string `json:"content"`
	}]](t, w.Env, key, "/contacts/"+id+"/activities?filter=system")
	var b strings.Builder
	for _, a := range p.Data {
		b.WriteString(a.Content + "\n")
	}
	return b.String()
}

var newAddress = map[string]string{"street": "Hafenstraße", "houseNumber": "7a", "zipCode": "20457", "city": "Hamburg", "country": "DE"}

// Approval applies the customer's address as one update of the contact (version +1,
// contact.updated, a timeline entry saying the customer changed it in the portal); the request
// is approved with its decision; deciding it again is 409.
func TestPortalChanges_Approve(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	cu := activeCustomer(t, w, co, "Emil")
	cu.change(t, "address", newAddress)
	list := pending(t, w, co.Secret, cu.contact)
	if len(list) != 1 || list[0].Kind != "address" || list[0].Status != "pending" || list[0].Changes["city"] != "Hamburg" {
		t.Fatalf("pending: %+v", list)
	}
	cr := list[0]
	// From the feed: the portal's pinned transaction numbers its event too (events_assign_seq
	// keeps the portal visibility, under which portal_own_events admits the row).
	if n := apitest.EventsAbout(t, w.Env, co.Secret, "portal_change_request.created", cr.ID); n != 1 {
		t.Errorf("%d portal_change_request.created events in the feed, want 1", n)
	}
	before := readContact(t, w, co.Secret, cu.contact)
	updatedBefore := eventsAboutContact(t, w, co.Secret, cu.contact)

	var got changeView
	r := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/portal-change-requests/" + cr.ID + "/approve", Key: co.Secret})
	if r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &got)
	if got.Status != "approved" || got.DecidedAt == nil || got.ID != cr.ID {
		t.Errorf("approved: %+v", got)
	}
	after := readContact(t, w, co.Secret, cu.contact)
	if after.version != before.version+1 {
		t.Errorf("contact version %d → %d, want one update", before.version, after.version)
	}
	for k, v := range newAddress {
		if after.address[k] != v {
			t.Errorf("address.%s = %v, want %s", k, after.address[k], v)
		}
	}
	if n := eventsAboutContact(t, w, co.Secret, cu.contact); n != updatedBefore+1 {
		t.Errorf("contact.updated events %d → %d, want one more", updatedBefore, n)
	}
	if tl := timeline(t, w, co.Secret, cu.contact); !strings.Contains(tl, "Adresse vom Kunden im Kundenportal geändert") {
		t.Errorf("timeline has no portal entry:\n%s", tl)
	}
	if n := apitest.EventsAbout(t, w.Env, co.Secret, "portal_change_request.approved", cr.ID); n != 1 {
		t.Errorf("%d portal_change_request.approved events, want 1", n)
	}
	if p := cu.b.Get(t, cu.base+"/changes"); p.Status != 200 || !strings.Contains(p.Body, "Hamburg") {
		t.Errorf("the customer's changes page: %d", p.Status)
	}
	w.Env.Run(t, []apitest.Case{
		{Name: "approving again is 409", Key: co.Secret, Method: "POST", Path: "/portal-change-requests/" + cr.ID + "/approve",
			Status: 409, Problem: "change_request_decided"},
		{Name: "rejecting a decided one is 409", Key: co.Secret, Method: "POST", Path: "/portal-change-requests/" + cr.ID + "/reject",
			Status: 409, Problem: "change_request_decided"},
		{Name: "the approved one is listed by status", Key: co.Secret,
			Path: "/portal-change-requests?status=approved&contactId=" + cu.contact, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[changeView]
				r.Decode(t, &p)
				if len(p.Data) != 1 || p.Data[0].ID != cr.ID {
					t.Errorf("approved list: %+v", p.Data)
				}
			}},
		{Name: "the default lists pending only", Key: co.Secret, Path: "/portal-change-requests?contactId=" + cu.contact,
			Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[changeView]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("pending list after approval: %+v", p.Data)
				}
			}},
	})
}

// eventsAboutContact counts the contact.updated events of the contact.
func eventsAboutContact(t *testing.T, w *signingtest.World, key, id string) int {
	t.Helper()
	return apitest.EventsAbout(t, w.Env, key, "contact.updated", id)
}

// A request whose fields changed on the contact since it was made is 409 contact_changed on
// approve, naming the field; confirm applies it anyway. A rejection keeps the contact and
// stores the reason the customer reads.
func TestPortalChanges_StaleConfirmAndReject(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	cu := activeCustomer(t, w, co, "Frida")
	cu.change(t, "address", newAddress)
	cr := pending(t, w, co.Secret, cu.contact)[0]

	c := readContact(t, w, co.Secret, cu.contact)
	if r := w.Env.Do(t, apitest.Request{Method: "PATCH", Path: "/contacts/" + cu.contact, Key: co.Secret,
		Body:   map[string]any{"address": map[string]any{"city": "Bremen", "zipCode": "28195"}},
		Header: map[string]string{"If-Match": c.etag, "Content-Type": "application/merge-patch+json"}}); r.Status != 200 {
		t.Fatalf("patch contact: %d %s", r.Status, r.Body)
	}
	path := "/portal-change-requests/" + cr.ID
	w.Env.Run(t, []apitest.Case{
		{Name: "stale approval is 409", Key: co.Secret, Method: "POST", Path: path + "/approve", Status: 409,
			Problem: "contact_changed", Check: func(t *testing.T, r *apitest.Response) {
				if p := r.Problem(t); !strings.Contains(p.Detail, "zipCode") || !strings.Contains(p.Detail, "city") {
					t.Errorf("detail does not name the fields: %s", p.Detail)
				}
			}},
		{Name: "confirm applies it", Key: co.Secret, Method: "POST", Path: path + "/approve",
			Body: map[string]any{"confirm": true}, Status: 200},
	})
	if got := readContact(t, w, co.Secret, cu.contact); got.address["city"] != "Hamburg" {
		t.Errorf("after confirm: %v", got.address)
	}

	email := strings.ToLower(signingtest.Address("neu"))
	cu.change(t, "email", map[string]string{"email": email})
	cr = pending(t, w, co.Secret, cu.contact)[0]
	reason := "Bitte bestätigen Sie die neue Adresse telefonisch."
	w.Env.Run(t, []apitest.Case{
		{Name: "reason over 1000 characters is 422", Key: co.Secret, Method: "POST", Path: "/portal-change-requests/" + cr.ID + "/reject",
			Body: map[string]any{"reason": strings.Repeat("ä", 1001)}, Status: 422, Check: apitest.FieldErrors("reason:too_long")},
		{Name: "unknown decision is 404", Key: co.Secret, Method: "POST", Path: "/portal-change-requests/" + cr.ID + "/maybe", Status: 404},
		{Name: "rejects with a reason", Key: co.Secret, Method: "POST", Path: "/portal-change-requests/" + cr.ID + "/reject",
			Body: map[string]any{"reason": reason}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var v changeView
				r.Decode(t, &v)
				if v.Status != "rejected" || v.Reason != reason || v.DecidedAt == nil {
					t.Errorf("rejected: %+v", v)
				}
			}},
	})
	if got := readContact(t, w, co.Secret, cu.contact); got.email == email {
		t.Errorf("a rejected change was applied")
	}
	if p := cu.b.Get(t, cu.base+"/changes"); !strings.Contains(p.Body, "telefonisch") {
		t.Errorf("the customer does not read the reason:\n%s", p.Body)
	}
	if n := apitest.EventsAbout(t, w.Env, co.Secret, "portal_change_request.rejected", cr.ID); n != 1 {
		t.Errorf("%d portal_change_request.rejected events, want 1", n)
	}
}

// A bank request's IBAN is masked for a credential without contacts.sensitive:read and in the
// events; approval writes it into the sensitive group bank.
func TestPortalChanges_Bank(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	cu := activeCustomer(t, w, co, "Gustav")
	cu.change(t, "bank", map[string]string{"iban": "de89 3704 0044 0532 0130 00", "accountHolder": "Gustav Kunde"})

	full := pending(t, w, co.Secret, cu.contact)
	plain := pending(t, w, co.KeyWithScopes(t, "contacts:read"), cu.contact)
	if len(full) != 1 || full[0].Changes["iban"] != "DE89370400440532013000" {
		t.Fatalf("with sensitive read: %+v", full)
	}
	if len(plain) != 1 || plain[0].Changes["iban"] != "DE89 **** **** **** **30 00" || plain[0].Changes["accountHolder"] != "Gustav Kunde" {
		t.Fatalf("without sensitive read: %+v", plain)
	}
	r := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/portal-change-requests/" + full[0].ID + "/approve",
		Key: co.KeyWithScopes(t, "contacts:write")})
	var v changeView
	r.Decode(t, &v)
	if r.Status != 200 || v.Changes["iban"] != "DE89 **** **** **** **30 00" {
		t.Fatalf("approve without sensitive read: %d %s", r.Status, r.Body)
	}
	var bank struct {
		Bank map[string]any `json:"bank"`
	}
	rr := w.Env.Do(t, apitest.Request{Path: "/contacts/" + cu.contact + "?fields=bank", Key: co.Secret})
	rr.Decode(t, &bank)
	if bank.Bank["iban"] != "DE89370400440532013000" || bank.Bank["accountHolder"] != "Gustav Kunde" {
		t.Errorf("bank after approval: %v (%s)", bank.Bank, rr.Body)
	}
}

// The list and the decisions: scope and feature checks, filters, and the visibility of the
// contact (an agent sees neither the requests of a colleague's customers nor decides them).
func TestPortalChanges_Errors(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co, other := broker(t, w), broker(t, w)
	cu := activeCustomer(t, w, co, "Hanna")
	cu.change(t, "phone", map[string]string{"number": "+49 171 2345678"})
	cr := pending(t, w, co.Secret, cu.contact)[0]
	agent := w.Env.NewUser(t, co, "agent")
	agentKey := co.UserKey(t, agent)
	noPortal := w.Env.NewCompany(t, "emails")

	list := func(t *testing.T, want int) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[changeView]
			r.Decode(t, &p)
			if len(p.Data) != want {
				t.Errorf("%d requests listed, want %d: %+v", len(p.Data), want, p.Data)
			}
		}
	}
	approve := "/portal-change-requests/" + cr.ID + "/approve"
	w.Env.Run(t, []apitest.Case{
		{Name: "unknown status is 422", Key: co.Secret, Path: "/portal-change-requests?status=open", Status: 422,
			Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "malformed contactId is 422", Key: co.Secret, Path: "/portal-change-requests?contactId=x", Status: 422,
			Check: apitest.FieldErrors("contactId:invalid_uuid")},
		{Name: "without contacts:read is 403", Key: co.KeyWithScopes(t, "leads:read"), Path: "/portal-change-requests", Status: 403,
			Problem: "insufficient_scope"},
		{Name: "unlicensed company's list is 403", Key: noPortal.Secret, Path: "/portal-change-requests", Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "no credential is 401", Path: "/portal-change-requests", Status: 401},
		{Name: "another company sees none", Key: other.Secret, Path: "/portal-change-requests", Status: 200, Check: list(t, 0)},
		{Name: "an agent sees no colleague's customer's requests", Key: agentKey,
			Path: "/portal-change-requests?contactId=" + cu.contact, Status: 200, Check: list(t, 0)},
		{Name: "another company's decision is 404", Key: other.Secret, Method: "POST", Path: approve, Status: 404},
		{Name: "an agent's decision is 404", Key: agentKey, Method: "POST", Path: approve, Status: 404},
		{Name: "unlicensed company's decision is 403", Key: noPortal.Secret, Method: "POST", Path: approve, Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "without contacts:write is 403", Key: co.KeyWithScopes(t, "contacts:read"), Method: "POST", Path: approve,
			Status: 403, Problem: "insufficient_scope"},
		{Name: "malformed id is 400", Key: co.Secret, Method: "POST", Path: "/portal-change-requests/x/approve", Status: 400},
		{Name: "unknown id is 404", Key: co.Secret, Method: "POST",
			Path: "/portal-change-requests/0193f3b4-6c1e-7d2a-9f1b-3c5d7e9f1a2b/approve", Status: 404},
		{Name: "the owner lists it", Key: co.Secret, Path: "/portal-change-requests?contactId=" + cu.contact, Status: 200,
			Check: list(t, 1)},
		{Name: "approve adds the primary phone", Key: co.Secret, Method: "POST", Path: approve, Status: 200},
	})
	p := apitest.Get[struct {
		Phones []struct {
			Number    string `json:"number"`
			IsPrimary bool   `json:"isPrimary"`
		} `json:"phones"`
	}](t, w.Env, co.Secret, "/contacts/"+cu.contact)
	if len(p.Phones) != 1 || !p.Phones[0].IsPrimary || !strings.Contains(strings.ReplaceAll(p.Phones[0].Number, " ", ""), "1712345678") {
		t.Errorf("phones after approval: %+v", p.Phones)
	}
}
