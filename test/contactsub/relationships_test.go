package contactsub

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func relationships(t *testing.T, env *apitest.Env, key, contact string) []relationship {
	t.Helper()
	var page struct{ Data []relationship }
	must(t, do(t, env, "GET", "/contacts/"+contact+"/relationships", key, nil), 200).Decode(t, &page)
	return page.Data
}

func TestContactSub_Relationships(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	ada := insertContact(t, env, a.ID, "private", "Lovelace", nil)
	bob := insertContact(t, env, a.ID, "private", "Byron", nil)
	kid := insertContact(t, env, a.ID, "private", "King", nil)
	firm := insertContact(t, env, a.ID, "business", "Analytical Engines GmbH", nil)
	foreign := insertContact(t, env, b.ID, "private", "Fremd", nil)
	base := "/contacts/" + ada + "/relationships"

	var partner relationship
	r := must(t, do(t, env, "POST", base, a.Secret, map[string]any{"relatedContactId": bob, "role": "partner"}), 201)
	r.Decode(t, &partner)
	if loc := r.Header.Get("Location"); loc != "/api/public/v1"+base {
		t.Errorf("relationship Location %q, want the contact's relationships", loc)
	}
	if etag := r.Header.Get("ETag"); etag != `"1"` {
		t.Errorf("relationship ETag %q, want \"1\" (a relationship never changes)", etag)
	}
	if partner.RelatedContact.LastName != "Byron" || partner.Position != nil {
		t.Errorf("partner %+v", partner)
	}
	must(t, do(t, env, "POST", base, a.Secret, map[string]any{"relatedContactId": kid, "role": "child"}), 201)
	must(t, do(t, env, "POST", base, a.Secret, map[string]any{"relatedContactId": firm, "role": "employer", "position": "Mathematikerin"}), 201)

	env.Run(t, []apitest.Case{
		{Name: "duplicate", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"relatedContactId": bob, "role": "partner"},
			Status: 409, Problem: "relationship_exists"},
		{Name: "the same partnership from the other side", Key: a.Secret, Method: "POST", Path: "/contacts/" + bob + "/relationships",
			Body: map[string]any{"relatedContactId": ada, "role": "partner"}, Status: 409, Problem: "relationship_exists"},
		{Name: "self", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"relatedContactId": ada, "role": "partner"}, Status: 422},
		{Name: "unknown role", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"relatedContactId": bob, "role": "cousin"}, Status: 422},
		{Name: "employee cannot be posted", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"relatedContactId": bob, "role": "employee"}, Status: 422},
		{Name: "position only for employer", Key: a.Secret, Method: "POST", Path: base,
			Body: map[string]any{"relatedContactId": kid, "role": "parent", "position": "x"}, Status: 422},
		{Name: "position too long", Key: a.Secret, Method: "POST", Path: base,
			Body: map[string]any{"relatedContactId": bob, "role": "employer", "position": string(make([]byte, 151))}, Status: 422},
		{Name: "related id missing", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"role": "partner"}, Status: 422},
		{Name: "related id not a uuid", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"relatedContactId": "x", "role": "partner"}, Status: 422},
		{Name: "unknown related contact", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"relatedContactId": a.ID, "role": "partner"}, Status: 404},
		{Name: "other company's contact as related", Key: a.Secret, Method: "POST", Path: base,
			Body: map[string]any{"relatedContactId": foreign, "role": "partner"}, Status: 404},
		{Name: "other company lists", Key: b.Secret, Path: base, Status: 404},
		{Name: "other company relates", Key: b.Secret, Method: "POST", Path: "/contacts/" + foreign + "/relationships",
			Body: map[string]any{"relatedContactId": ada, "role": "partner"}, Status: 404},
		{Name: "other company deletes", Key: b.Secret, Method: "DELETE", Path: base + "/" + partner.ID, Status: 404},
		{Name: "read scope missing", Key: a.KeyWithScopes(t, "leads:read"), Path: base, Status: 403},
	})

	got := relationships(t, env, a.Secret, ada)
	if len(got) != 3 {
		t.Fatalf("ada has %d relationships, want 3", len(got))
	}
	inverse := map[string]string{}
	for _, c := range []string{bob, kid, firm} {
		rs := relationships(t, env, a.Secret, c)
		if len(rs) != 1 || rs[0].RelatedContactID != ada {
			t.Fatalf("contact %s: %+v, want the inverse of ada's", c, rs)
		}
		inverse[c] = rs[0].Role
		if c == firm && (rs[0].Position == nil || *rs[0].Position != "Mathematikerin") {
			t.Errorf("employee position %v", rs[0].Position)
		}
	}
	if inverse[bob] != "partner" || inverse[kid] != "parent" || inverse[firm] != "employee" {
		t.Errorf("inverse roles %v, want partner, parent, employee", inverse)
	}

	// Deleting from the other side removes both directions.
	back := relationships(t, env, a.Secret, bob)[0]
	must(t, do(t, env, "DELETE", "/contacts/"+bob+"/relationships/"+back.ID, a.Secret, nil), 204)
	if n := len(relationships(t, env, a.Secret, ada)); n != 2 {
		t.Errorf("ada has %d relationships after the partnership ended, want 2", n)
	}
	must(t, do(t, env, "DELETE", base+"/"+partner.ID, a.Secret, nil), 404)
	// A relationship id under another contact is not found.
	kidRel := relationships(t, env, a.Secret, kid)[0]
	must(t, do(t, env, "DELETE", base+"/"+kidRel.ID, a.Secret, nil), 404)

	var page struct {
		Data []struct {
			Type string `json:"type"`
		}
	}
	must(t, do(t, env, "GET", "/events?types=relationship.created,relationship.deleted&limit=100", a.Secret, nil), 200).Decode(t, &page)
	if len(page.Data) != 4 {
		t.Errorf("%d relationship events, want 3 created + 1 deleted", len(page.Data))
	}
	if n := count(t, env, a.ID, `SELECT count(*) FROM contact_activities WHERE contact_id = $1 AND event LIKE 'relationship.%'`, bob); n != 2 {
		t.Errorf("bob's timeline has %d relationship entries, want 2", n)
	}
}
