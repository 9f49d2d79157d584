package contactsub

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContactSub_EventTypes: every event the contacts area emits is in GET /event-types with
// the scope needed to receive it, and /events honours that scope: a key with events:read and
// activities:read but without contacts:read gets the note events of a contact, not its
// contact.* or relationship.* events.
func TestContactSub_EventTypes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	want := map[string]string{
		"contact.created": "contacts:read", "contact.updated": "contacts:read", "contact.deleted": "contacts:read",
		"relationship.created": "contacts:read", "relationship.deleted": "contacts:read",
		"note.created": "activities:read", "note.updated": "activities:read", "note.deleted": "activities:read",
	}
	var types struct {
		Data []struct{ Type, Description, Scope string } `json:"data"`
	}
	must(t, do(t, env, "GET", "/event-types", a.Secret, nil), 200).Decode(t, &types)
	got := map[string]string{}
	for _, ty := range types.Data {
		if _, ok := want[ty.Type]; ok {
			got[ty.Type] = ty.Scope
			if ty.Description == "" {
				t.Errorf("%s has no description", ty.Type)
			}
		}
	}
	for ty, scope := range want {
		if got[ty] != scope {
			t.Errorf("/event-types: %s scope %q, want %q", ty, got[ty], scope)
		}
	}

	ada := insertContact(t, env, a.ID, "private", "Lovelace", nil)
	bob := insertContact(t, env, a.ID, "private", "Byron", nil)
	must(t, do(t, env, "POST", "/contacts/"+ada+"/phones", a.Secret, map[string]any{"number": "030 1234567"}), 201)
	must(t, do(t, env, "POST", "/contacts/"+ada+"/relationships", a.Secret, map[string]any{"relatedContactId": bob, "role": "partner"}), 201)
	must(t, do(t, env, "POST", "/contacts/"+ada+"/notes", a.Secret, map[string]any{"content": "Hallo"}), 201)

	seen := func(key string) map[string]bool {
		var page apitest.Page[struct{ Type string }]
		must(t, do(t, env, "GET", "/events?limit=200", key, nil), 200).Decode(t, &page)
		out := map[string]bool{}
		for _, e := range page.Data {
			out[e.Type] = true
		}
		return out
	}
	if s := seen(a.KeyWithScopes(t, "events:read", "activities:read")); !s["note.created"] || s["contact.updated"] || s["relationship.created"] {
		t.Errorf("events:read + activities:read received %v, want note.created only of these", s)
	}
	if s := seen(a.KeyWithScopes(t, "events:read", "contacts:read")); s["note.created"] || !s["contact.updated"] || !s["relationship.created"] {
		t.Errorf("events:read + contacts:read received %v, want contact.updated and relationship.created, no note.created", s)
	}
}
