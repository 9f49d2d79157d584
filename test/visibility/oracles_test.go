package visibility

import (
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestVisibility_UpsertOfAnInvisibleRecord (issue 20 item 8): an agent's external upsert of a
// reference that a colleague's record carries answered 404 "no contact carries the external
// reference" (a lie the next create contradicted with 409) and could not be told from a
// missing reference by its code. The decision (docs/decisions/visibility.md "Existence inside a
// company"): a reference, like a contract's insurer and policy number, is the company's
// identifier, so "taken" may be said; the record may not be read, changed or named. Every
// upsert (contacts, bulk, leads, contracts) answers 409 external_reference_taken naming none of
// the record's data or id, and changes nothing; reading by the reference stays 404.
func TestVisibility_UpsertOfAnInvisibleRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	keyA, keyB := w.keys["agent A key"], w.keys["agent B key"]
	c := w.createContact(t, keyA, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Vertraulich",
		"externalReferences": []map[string]string{{"source": "ams", "externalId": "K-1"}}})
	l := w.postID(t, keyA, "PUT", "/external/web/leads/L-1", map[string]any{"lastName": "Geheimlead", "email": "geheim@example.com"}, 201)
	ct := w.postID(t, keyA, "PUT", "/external/ams/contracts/V-1", map[string]any{"contactId": c.ID, "insurerId": w.insurer(t, keyA),
		"policyNumber": "V-1", "type": "030", "status": "active"}, 201)
	own := w.createContact(t, keyB, map[string]any{"type": "private", "firstName": "Eigen", "lastName": "B"})

	taken := func(t *testing.T, r *apitest.Response, ids ...string) {
		t.Helper()
		if r.Status != 409 || r.Problem(t).Code != "external_reference_taken" {
			t.Fatalf("%d %s, want 409 external_reference_taken", r.Status, r.Body)
		}
		for _, s := range append(ids, "Geheim") {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("the answer names %q: %s", s, r.Body)
			}
		}
	}
	t.Run("contact", func(t *testing.T) {
		taken(t, w.env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contacts/K-1", Key: keyB,
			Body: map[string]any{"type": "private", "firstName": "Über", "lastName": "Nommen"}}), c.ID)
		b := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/bulk", Key: keyB, Body: map[string]any{"items": []map[string]any{
			{"externalReference": map[string]string{"source": "ams", "externalId": "K-1"}, "type": "private", "firstName": "Über"}}}})
		var res struct {
			Data []struct {
				Status string
				Error  *apitest.Problem
			}
		}
		b.Decode(t, &res)
		if b.Status != 200 || len(res.Data) != 1 || res.Data[0].Status != "failed" || res.Data[0].Error == nil ||
			res.Data[0].Error.Status != 409 || res.Data[0].Error.Code != "external_reference_taken" || strings.Contains(string(b.Body), c.ID) {
			t.Errorf("bulk: %d %s", b.Status, b.Body)
		}
		if r := w.env.Do(t, apitest.Request{Path: "/external/ams/contacts/K-1", Key: keyB}); r.Status != 404 {
			t.Errorf("GET by the reference: %d, want 404", r.Status)
		}
	})
	t.Run("lead", func(t *testing.T) {
		taken(t, w.env.Do(t, apitest.Request{Method: "PUT", Path: "/external/web/leads/L-1", Key: keyB,
			Body: map[string]any{"lastName": "Übernommen", "email": "x@example.com"}}), l)
	})
	t.Run("contract", func(t *testing.T) {
		taken(t, w.env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contracts/V-1", Key: keyB,
			Body: map[string]any{"contactId": own.ID, "insurerId": w.insurer(t, keyB), "policyNumber": "V-2", "type": "030", "status": "ended"}}), ct, c.ID)
	})
	// Nothing changed, and the owner still upserts its own records.
	w.env.Run(t, []apitest.Case{
		{Name: "A's contact", Key: keyA, Method: "PUT", Path: "/external/ams/contacts/K-1", Body: map[string]any{"type": "private"}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if !strings.Contains(string(r.Body), `"firstName":"Geheim"`) {
					t.Errorf("A's contact after B's upserts: %s", r.Body)
				}
			}},
		{Name: "A's lead", Key: keyA, Path: "/leads/" + l, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !strings.Contains(string(r.Body), `"lastName":"Geheimlead"`) {
				t.Errorf("A's lead after B's upsert: %s", r.Body)
			}
		}},
		{Name: "A's contract", Key: keyA, Path: "/contracts/" + ct, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !strings.Contains(string(r.Body), `"status":"active"`) || !strings.Contains(string(r.Body), c.ID) {
				t.Errorf("A's contract after B's upsert: %s", r.Body)
			}
		}},
	})
}
