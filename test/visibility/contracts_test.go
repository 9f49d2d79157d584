package visibility

import (
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type contractRow struct {
	ID        string `json:"id"`
	ContactID string `json:"contactId"`
}

func (w *world) createContract(t *testing.T, key, contactID, policy string) contractRow {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contracts", Key: key, Body: map[string]any{
		"contactId": contactID, "insurerId": w.insurer(t, key), "policyNumber": policy, "type": "030", "status": "active",
		"externalReferences": []map[string]string{{"source": "ams", "externalId": policy}}}})
	if r.Status != 201 {
		t.Fatalf("create contract: %d %s", r.Status, r.Body)
	}
	var c contractRow
	r.Decode(t, &c)
	return c
}

// TestVisibility_Contracts: a contract is as visible as its contact, for every credential of
// the matrix: get, lists (also filtered by the contact), the feed, and writes (PATCH, DELETE,
// the external upsert, which must not take over a contract it may not see, and a new contract
// under the invisible contact).
func TestVisibility_Contracts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ofA := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Vertraulich",
		"ownerId": w.agentA.ID})
	ofAdmin := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Chef", "lastName": "Sache"})
	ctA := w.createContract(t, w.co.Secret, ofA.ID, "GEHEIM-1")
	ctAdmin := w.createContract(t, w.co.Secret, ofAdmin.ID, "CHEF-1")
	seesAdmins := map[string]bool{"admin user key": true, "manager key": true, "company key": true,
		"admin user token": true, "company token": true}

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			want := 404
			if w.seesA[name] {
				want = 200
			}
			r := w.env.Do(t, apitest.Request{Path: "/contracts/" + ctA.ID, Key: key})
			if r.Status != want {
				t.Fatalf("GET A's contract: %d, want %d: %s", r.Status, want, r.Body)
			}
			if want == 404 && (r.Problem(t).Code != "not_found" || strings.Contains(string(r.Body), "GEHEIM")) {
				t.Errorf("404 body %s", r.Body)
			}
			wantAdmin := 404
			if seesAdmins[name] {
				wantAdmin = 200
			}
			if r := w.env.Do(t, apitest.Request{Path: "/contracts/" + ctAdmin.ID, Key: key}); r.Status != wantAdmin {
				t.Errorf("GET the admin's contract: %d, want %d", r.Status, wantAdmin)
			}
			for _, q := range []string{"?limit=200", "?contactId=" + ofA.ID} {
				r := w.env.Do(t, apitest.Request{Path: "/contracts" + q, Key: key})
				if r.Status != 200 {
					t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
				}
				if strings.Contains(string(r.Body), ctA.ID) != w.seesA[name] || strings.Contains(string(r.Body), "GEHEIM") != w.seesA[name] {
					t.Errorf("list %s has A's contract: %v, want %v", q, strings.Contains(string(r.Body), ctA.ID), w.seesA[name])
				}
			}
			evs := w.eventSubjects(t, key, "contract.created")
			if slices.Contains(evs, ctA.ID) != w.seesA[name] {
				t.Errorf("feed has A's contract.created: %v, want %v", slices.Contains(evs, ctA.ID), w.seesA[name])
			}
			if slices.Contains(evs, ctAdmin.ID) != seesAdmins[name] {
				t.Errorf("feed has the admin's contract.created: %v, want %v", slices.Contains(evs, ctAdmin.ID), seesAdmins[name])
			}
			if want == 200 || name == "other company's key" || strings.Contains(name, "sandbox") {
				return
			}
			h := map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": "*"}
			if r := w.env.Do(t, apitest.Request{Method: "PATCH", Path: "/contracts/" + ctA.ID, Key: key, Header: h,
				Body: map[string]any{"policyNumber": "X"}}); r.Status != 404 {
				t.Errorf("PATCH A's contract: %d, want 404", r.Status)
			}
			if r := w.env.Do(t, apitest.Request{Method: "DELETE", Path: "/contracts/" + ctA.ID, Key: key,
				Header: map[string]string{"If-Match": "*"}}); r.Status != 404 {
				t.Errorf("DELETE A's contract: %d, want 404", r.Status)
			}
			// The upsert must not take over A's contract, whatever contact the body names: 409
			// external_reference_taken (issue 20 item 8: it was 404), naming nothing of it.
			own := w.createContact(t, key, map[string]any{"type": "private", "firstName": "Eigen", "lastName": name})
			r = w.env.Do(t, apitest.Request{Path: "/contracts/" + ctAdmin.ID, Key: w.co.Secret})
			var cat struct {
				InsurerID string `json:"insurerId"`
			}
			r.Decode(t, &cat)
			body := map[string]any{"contactId": own.ID, "insurerId": cat.InsurerID, "policyNumber": "GEHEIM-1", "type": "030", "status": "ended"}
			if r := w.env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contracts/GEHEIM-1", Key: key, Body: body}); r.Status != 409 ||
				r.Problem(t).Code != "external_reference_taken" || strings.Contains(string(r.Body), ctA.ID) || strings.Contains(string(r.Body), ofA.ID) {
				t.Errorf("PUT by external reference: %d %s", r.Status, r.Body)
			}
			// The key (insurer, policy number, type) is the company's: taken by A's invisible
			// contract is 409, never a 500 from the unique index.
			if r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contracts", Key: key, Body: body}); r.Status != 409 ||
				r.Problem(t).Code != "contract_exists" || strings.Contains(string(r.Body), ctA.ID) {
				t.Errorf("POST with A's contract's key: %d %s", r.Status, r.Body)
			}
			body["contactId"], body["policyNumber"] = ofA.ID, "NEU-"+name
			if r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contracts", Key: key, Body: body}); r.Status != 422 ||
				!strings.Contains(string(r.Body), "unknown_contact") {
				t.Errorf("POST under A's contact: %d %s", r.Status, r.Body)
			}
		})
	}
	// A's contract is unchanged after all that.
	r := w.env.Do(t, apitest.Request{Path: "/contracts/" + ctA.ID, Key: w.keys["agent A key"]})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"status":"active"`) || !strings.Contains(string(r.Body), ofA.ID) {
		t.Errorf("A's contract after the matrix: %d %s", r.Status, r.Body)
	}
}

// TestVisibility_ContactDeleteCascade: deleting a contact deletes its contracts, each with a
// contract.deleted recorded before the contact.deleted; the owner keeps seeing those events
// after the contact is gone, a colleague never sees them.
func TestVisibility_ContactDeleteCascade(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	keyA, keyB := w.keys["agent A key"], w.keys["agent B key"]
	ofA := w.createContact(t, keyA, map[string]any{"type": "private", "firstName": "Weg", "lastName": "Damit", "ownerId": w.agentA.ID})
	c1 := w.createContract(t, keyA, ofA.ID, "WEG-1")
	c2 := w.createContract(t, keyA, ofA.ID, "WEG-2")
	other := w.createContact(t, keyA, map[string]any{"type": "private", "firstName": "Bleibt", "lastName": "Da", "ownerId": w.agentA.ID})
	stays := w.createContract(t, keyA, other.ID, "BLEIBT-1")

	if r := w.env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + ofA.ID, Key: keyA,
		Header: map[string]string{"If-Match": "*"}}); r.Status != 204 {
		t.Fatalf("DELETE contact: %d %s", r.Status, r.Body)
	}
	for _, id := range []string{c1.ID, c2.ID} {
		if r := w.env.Do(t, apitest.Request{Path: "/contracts/" + id, Key: w.co.Secret}); r.Status != 404 {
			t.Errorf("contract %s after its contact's deletion: %d", id, r.Status)
		}
	}
	if r := w.env.Do(t, apitest.Request{Path: "/contracts/" + stays.ID, Key: keyA}); r.Status != 200 {
		t.Errorf("the other contact's contract: %d", r.Status)
	}
	// In commit order: both contract.deleted, then contact.deleted.
	all := w.eventSubjects(t, w.co.Secret, "contract.deleted,contact.deleted")
	if !slices.Equal(all, []string{c1.ID, c2.ID, ofA.ID}) {
		t.Errorf("company feed %v, want %v", all, []string{c1.ID, c2.ID, ofA.ID})
	}
	if got := w.eventSubjects(t, keyA, "contract.deleted"); !slices.Equal(got, []string{c1.ID, c2.ID}) {
		t.Errorf("A's feed: contract.deleted of %v, want both", got)
	}
	if got := w.eventSubjects(t, keyB, "contract.deleted,contact.deleted"); len(got) != 0 {
		t.Errorf("B's feed: %v, want nothing", got)
	}
}
