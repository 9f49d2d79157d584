package contactsub

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestContactSub_Phones(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	ada := insertContact(t, env, a.ID, "private", "Lovelace", nil)
	base := "/contacts/" + ada + "/phones"

	var first, second phone
	r := must(t, do(t, env, "POST", base, a.Secret, map[string]any{"number": "030 1234567"}), 201)
	r.Decode(t, &first)
	if !first.IsPrimary || first.Type != "landline" || first.CreatedAt == "" || first.UpdatedAt == "" {
		t.Errorf("first phone %+v, want primary landline with createdAt and updatedAt", first)
	}
	// A Phone answer carries the ETag of its contact after the change (conventions: every
	// single-resource answer has an ETag; a phone is part of its contact).
	if got, want := r.Header.Get("ETag"), do(t, env, "GET", "/contacts/"+ada, a.Secret, nil).Header.Get("ETag"); got == "" || got != want {
		t.Errorf("phone ETag %q, want the contact's %q", got, want)
	}
	if loc := r.Header.Get("Location"); loc != "/api/public/v1/contacts/"+ada {
		t.Errorf("phone Location %q, want the contact's URL", loc)
	}
	must(t, do(t, env, "POST", base, a.Secret, map[string]any{"number": "+49 171 1234567", "isPrimary": true}), 201).Decode(t, &second)
	if !second.IsPrimary || second.Type != "mobile" {
		t.Errorf("second phone %+v, want primary mobile", second)
	}
	if n := count(t, env, a.ID, `SELECT count(*) FROM contact_phones WHERE contact_id = $1 AND is_primary`, ada); n != 1 {
		t.Errorf("%d primary numbers, want 1", n)
	}
	one := base + "/" + first.ID
	env.Run(t, []apitest.Case{
		{Name: "same number in another format is a conflict", Key: a.Secret, Method: "POST", Path: base,
			Body: map[string]any{"number": "+49301234567"}, Status: 409, Problem: "phone_exists"},
		{Name: "not a phone number", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"number": "abc"}, Status: 422},
		{Name: "number missing", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"type": "mobile"}, Status: 422},
		{Name: "unknown type", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"number": "040 555", "type": "pager"}, Status: 422},
		{Name: "unknown field", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"number": "040 555", "x": 1}, Status: 422},
		{Name: "malformed json", Key: a.Secret, Method: "POST", Path: base, Body: "{", Status: 400},
		{Name: "bad contact id", Key: a.Secret, Method: "POST", Path: "/contacts/nope/phones", Body: map[string]any{"number": "040 555"}, Status: 400},
		{Name: "other company gets 404", Key: b.Secret, Method: "POST", Path: base, Body: map[string]any{"number": "040 555"}, Status: 404},
		{Name: "sandbox key gets 404", Key: a.TestSecret, Method: "POST", Path: base, Body: map[string]any{"number": "040 555"}, Status: 404},
		{Name: "write scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Method: "POST", Path: base,
			Body: map[string]any{"number": "040 555"}, Status: 403},
		{Name: "taking primary from the primary number", Key: a.Secret, Method: "PATCH", Path: base + "/" + second.ID,
			Body: map[string]any{"isPrimary": false}, Status: 422, Problem: ""},
		{Name: "patch to a number the contact has", Key: a.Secret, Method: "PATCH", Path: one,
			Body: map[string]any{"number": "0171 1234567"}, Status: 409, Problem: "phone_exists"},
		{Name: "patch type", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"type": "fax"}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p phone
				r.Decode(t, &p)
				if p.Type != "fax" || p.IsPrimary {
					t.Errorf("patched %+v", p)
				}
				if got, want := r.Header.Get("ETag"), do(t, env, "GET", "/contacts/"+ada, a.Secret, nil).Header.Get("ETag"); got == "" || got != want {
					t.Errorf("phone ETag %q, want the contact's %q", got, want)
				}
			}},
		{Name: "patch unknown phone", Key: a.Secret, Method: "PATCH", Path: base + "/" + ada, Body: map[string]any{"type": "fax"}, Status: 404},
		{Name: "patch from other company", Key: b.Secret, Method: "PATCH", Path: one, Body: map[string]any{"type": "fax"}, Status: 404},
		{Name: "delete from other company", Key: b.Secret, Method: "DELETE", Path: one, Status: 404},
		{Name: "delete the primary number", Key: a.Secret, Method: "DELETE", Path: base + "/" + second.ID, Status: 204},
		{Name: "delete again", Key: a.Secret, Method: "DELETE", Path: base + "/" + second.ID, Status: 404},
	})
	if n := count(t, env, a.ID, `SELECT count(*) FROM contact_phones WHERE id = $1 AND is_primary`, first.ID); n != 1 {
		t.Errorf("the remaining number did not become primary")
	}
	if n := count(t, env, a.ID, `SELECT count(*) FROM contact_activities WHERE contact_id = $1 AND kind = 'system' AND event LIKE 'phone.%'`, ada); n != 4 {
		t.Errorf("%d phone system entries, want 4 (2 added, 1 changed, 1 removed)", n)
	}
	if n := count(t, env, a.ID, `SELECT version FROM contacts WHERE id = $1`, ada); n != 5 {
		t.Errorf("contact version %d, want 5: every phone change moves the contact's ETag", n)
	}
}
