package contacts

import (
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContacts_Convert: converting a lead into a new and into an existing contact answers the
// full Contact and a Location that answers 200; converting into an existing one records
// contact.updated; a private contact needs first and last name.
func TestContacts_Convert(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	lead := func(body string) string {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: a.Secret, Body: body})
		if r.Status != 201 {
			t.Fatalf("lead: %d %s", r.Status, r.Body)
		}
		var l struct{ ID string }
		r.Decode(t, &l)
		return l.ID
	}
	convert := func(leadID string, body map[string]any) (contact, string) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads/" + leadID + "/convert", Key: a.Secret, Body: body})
		if r.Status != 201 {
			t.Fatalf("convert: %d %s", r.Status, r.Body)
		}
		var res struct{ Contact contact }
		r.Decode(t, &res)
		return res.Contact, r.Header.Get("Location")
	}
	c, loc := convert(lead(`{"firstName":"Lea","lastName":"Lead","email":"lea@example.com"}`), map[string]any{"contactType": "private"})
	if c.OwnerID == nil || *c.OwnerID != a.Admin.ID.String() {
		t.Errorf("owner %v, want the company admin", c.OwnerID)
	}
	got := env.Do(t, apitest.Request{Path: strings.TrimPrefix(loc, "/api/public/v1"), Key: a.Secret})
	if got.Status != 200 || decode(t, got).ID != c.ID {
		t.Fatalf("Location %s: %d %s", loc, got.Status, got.Body)
	}
	existing, _ := create(t, env, a.Secret, map[string]any{"type": "private", "firstName": "Eva", "lastName": "Da", "email": "eva@example.com"})
	c2, loc2 := convert(lead(`{"firstName":"Eva","lastName":"Da","email":"eva@example.com"}`),
		map[string]any{"contactType": "private", "existingContactId": existing.ID})
	if c2.ID != existing.ID || loc2 != "/api/public/v1/contacts/"+existing.ID {
		t.Errorf("into existing: %s %s", c2.ID, loc2)
	}
	if r := env.Do(t, apitest.Request{Path: "/contacts/" + existing.ID, Key: a.Secret}); r.Status != 200 || r.Header.Get("ETag") != `"2"` {
		t.Errorf("existing after conversion: %d ETag %s", r.Status, r.Header.Get("ETag"))
	}
	ev := env.Do(t, apitest.Request{Path: "/events?types=contact.updated", Key: a.Secret})
	if !strings.Contains(string(ev.Body), existing.ID) {
		t.Errorf("no contact.updated for %s: %s", existing.ID, ev.Body)
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads/" + lead(`{"lastName":"Ohne","email":"o@example.com"}`) + "/convert",
		Key: a.Secret, Body: map[string]any{"contactType": "private"}})
	if r.Status != 422 || r.Problem(t).Errors[0].Field != "overrides.firstName" {
		t.Errorf("without first name: %d %s", r.Status, r.Body)
	}
}
