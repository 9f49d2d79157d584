package visibility

import (
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type contact struct {
	ID      string  `json:"id"`
	OwnerID *string `json:"ownerId"`
}

func (w *world) createContact(t *testing.T, key string, body map[string]any) contact {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("create contact: %d %s", r.Status, r.Body)
	}
	var c contact
	r.Decode(t, &c)
	return c
}

// TestVisibility_Contacts is the matrix over the contacts endpoints: every credential gets its
// documented status on A's contact and on the admin's, lists and the feed carry exactly the
// visible ones, and no body of a refused request names the contact's data.
func TestVisibility_Contacts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ofA := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Vertraulich",
		"ownerId": w.agentA.ID, "email": "geheim@example.com", "externalReferences": []map[string]string{{"source": "ams", "externalId": "GEHEIM"}}})
	ofAdmin := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Chef", "lastName": "Sache"})
	seesAdmins := map[string]bool{"admin user key": true, "manager key": true, "company key": true,
		"admin user token": true, "company token": true}

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			want := 404
			if w.seesA[name] {
				want = 200
			}
			r := w.env.Do(t, apitest.Request{Path: "/contacts/" + ofA.ID, Key: key})
			if r.Status != want {
				t.Fatalf("GET A's contact: %d, want %d: %s", r.Status, want, r.Body)
			}
			if want == 404 && (r.Problem(t).Code != "not_found" || strings.Contains(string(r.Body), "Geheim")) {
				t.Errorf("404 body %s", r.Body)
			}
			wantAdmin := 404
			if seesAdmins[name] {
				wantAdmin = 200
			}
			if r := w.env.Do(t, apitest.Request{Path: "/contacts/" + ofAdmin.ID, Key: key}); r.Status != wantAdmin {
				t.Errorf("GET the admin's contact: %d, want %d", r.Status, wantAdmin)
			}
			for _, q := range []string{"?limit=200", "?q=geheim", "?email=geheim@example.com", "?ownerId=" + w.agentA.ID.String()} {
				r := w.env.Do(t, apitest.Request{Path: "/contacts" + q, Key: key})
				if r.Status != 200 {
					t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
				}
				if strings.Contains(string(r.Body), ofA.ID) != w.seesA[name] || strings.Contains(string(r.Body), "Geheim") != w.seesA[name] {
					t.Errorf("list %s has A's contact: %v, want %v", q, strings.Contains(string(r.Body), ofA.ID), w.seesA[name])
				}
			}
			m := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/match", Key: key, Body: map[string]any{"email": "geheim@example.com"}})
			if m.Status != 200 || strings.Contains(string(m.Body), ofA.ID) != w.seesA[name] {
				t.Errorf("match: %d, has A's contact %v, want %v", m.Status, strings.Contains(string(m.Body), ofA.ID), w.seesA[name])
			}
			if r := w.env.Do(t, apitest.Request{Path: "/external/ams/contacts/GEHEIM", Key: key}); r.Status != want {
				t.Errorf("GET by external reference: %d, want %d", r.Status, want)
			}
			if want == 404 && name != "other company's key" && !strings.Contains(name, "sandbox") {
				// An upsert must not take over the contact it may not see, alone and in bulk: 409
				// external_reference_taken (issue 20 item 8: it was 404, "no contact carries it"),
				// naming nothing of the contact.
				if r := w.env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contacts/GEHEIM", Key: key,
					Body: map[string]any{"type": "private", "firstName": "X", "lastName": "Y"}}); r.Status != 409 ||
					r.Problem(t).Code != "external_reference_taken" || strings.Contains(string(r.Body), "Geheim") || strings.Contains(string(r.Body), ofA.ID) {
					t.Errorf("PUT by external reference: %d %s", r.Status, r.Body)
				}
				b := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/bulk", Key: key, Body: map[string]any{"items": []map[string]any{
					{"externalReference": map[string]string{"source": "ams", "externalId": "GEHEIM"}, "type": "private", "firstName": "X"}}}})
				if b.Status != 200 || !strings.Contains(string(b.Body), `"status":409`) || !strings.Contains(string(b.Body), "external_reference_taken") ||
					strings.Contains(string(b.Body), ofA.ID) {
					t.Errorf("bulk: %d %s", b.Status, b.Body)
				}
			}
			evs := w.eventSubjects(t, key, "contact.created")
			if slices.Contains(evs, ofA.ID) != w.seesA[name] {
				t.Errorf("feed has A's contact.created: %v, want %v", slices.Contains(evs, ofA.ID), w.seesA[name])
			}
			if want == 404 {
				h := map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": "*"}
				if r := w.env.Do(t, apitest.Request{Method: "PATCH", Path: "/contacts/" + ofA.ID, Key: key, Header: h,
					Body: map[string]any{"firstName": "X"}}); r.Status != 404 {
					t.Errorf("PATCH A's contact: %d, want 404", r.Status)
				}
				if r := w.env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + ofA.ID, Key: key,
					Header: map[string]string{"If-Match": "*"}}); r.Status != 404 {
					t.Errorf("DELETE A's contact: %d, want 404", r.Status)
				}
			}
		})
	}
	// A visible write by each credential that sees it: the delegate may change A's contact.
	r := w.env.Do(t, apitest.Request{Method: "PATCH", Path: "/contacts/" + ofA.ID, Key: w.keys["agent B with delegation"],
		Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": "*"}, Body: map[string]any{"tags": []string{"vertreten"}}})
	if r.Status != 200 {
		t.Errorf("delegate PATCH: %d %s", r.Status, r.Body)
	}
}
