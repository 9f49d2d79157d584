package leads

import (
	"strings"
	"sync"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestLeads_ExternalUpsert(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	portal := env.NewCompany(t, "customer_portal")
	agent := env.NewUser(t, a, "agent")
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/lead-stages", Key: a.Secret, Body: `{"name":"Qualifiziert"}`})
	var qual stage
	r.Decode(t, &qual)
	var id string

	env.Run(t, []apitest.Case{
		{Name: "creates", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L%2F4711", Status: 201,
			Body: map[string]any{"firstName": "Anna", "email": "anna@example.com", "notes": "from the AMS", "ownerId": agent.ID.String()},
			Check: func(t *testing.T, r *apitest.Response) {
				var l lead
				r.Decode(t, &l)
				id = l.ID
				if len(l.ExternalReferences) != 1 || l.ExternalReferences[0].Source != "ams" || l.ExternalReferences[0].ExternalID != "L/4711" {
					t.Errorf("references %+v", l.ExternalReferences)
				}
				if r.Header.Get("Location") != "/api/public/v1/leads/"+l.ID || r.Header.Get("ETag") != `"1"` {
					t.Errorf("Location %q ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
				}
			}},
	})
	env.Run(t, []apitest.Case{
		{Name: "updates: data replaced, owner and stage kept", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L%2F4711", Status: 200,
			Body: map[string]any{"lastName": "Berger", "phone": "0170 1234567"}, Check: func(t *testing.T, r *apitest.Response) {
				var l lead
				r.Decode(t, &l)
				if l.ID != id || l.FirstName != "" || l.LastName != "Berger" || l.Email != nil || l.Notes != "" ||
					l.OwnerID == nil || *l.OwnerID != agent.ID.String() || len(l.ExternalReferences) != 1 {
					t.Errorf("got %+v", l)
				}
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("ETag %q", r.Header.Get("ETag"))
				}
			}},
		{Name: "the same body again changes nothing", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L%2F4711", Status: 200,
			Body: map[string]any{"lastName": "Berger", "phone": "0170 1234567"}, Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("ETag %q, want \"2\"", r.Header.Get("ETag"))
				}
			}},
		{Name: "stage and more references when given", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L%2F4711", Status: 200,
			Body: map[string]any{"phone": "0170 1234567", "stageId": qual.ID,
				"externalReferences": []map[string]string{{"source": "crm", "externalId": "C-1"}}},
			Check: func(t *testing.T, r *apitest.Response) {
				var l lead
				r.Decode(t, &l)
				if l.StageID != qual.ID || len(l.ExternalReferences) != 2 {
					t.Errorf("got %+v", l)
				}
			}},
		{Name: "found by its other reference too", Key: a.Secret, Method: "PUT", Path: "/external/crm/leads/C-1", Status: 200,
			Body: map[string]any{"phone": "0170 1234567"}},
		{Name: "another company's reference is another lead", Key: b.Secret, Method: "PUT", Path: "/external/ams/leads/L%2F4711",
			Status: 201, Body: map[string]any{"email": "b@example.com"}},
		{Name: "a reference of another lead in the body", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L-2", Status: 409,
			Problem: "external_reference_taken", Body: map[string]any{"email": "x@example.com",
				"externalReferences": []map[string]string{{"source": "crm", "externalId": "C-1"}}}},
		{Name: "body and path errors together", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/" + strings.Repeat("x", 256),
			Body: `{"firstName":"x"}`, Status: 422,
			Check: apitest.FieldErrors("path.externalId:invalid_length", "email:email_or_phone_required", "phone:email_or_phone_required")},
		{Name: "malformed body", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L-3", Body: `{`, Status: 400, Problem: "malformed_json"},
		{Name: "not JSON", Key: a.Secret, Method: "PUT", Path: "/external/ams/leads/L-3", Body: `x`,
			Header: map[string]string{"Content-Type": "text/plain"}, Status: 415},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "leads:read"), Method: "PUT", Path: "/external/ams/leads/L-3",
			Body: `{"email":"x@example.com"}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "feature not licensed", Key: portal.Secret, Method: "PUT", Path: "/external/ams/leads/L-3",
			Body: `{"email":"x@example.com"}`, Status: 403, Problem: "feature_not_licensed"},
		{Name: "no key", Method: "PUT", Path: "/external/ams/leads/L-3", Body: `{"email":"x@example.com"}`, Status: 401},
	})
	if got := apitest.Get[lead](t, env, a.Secret, "/leads/"+id); got.Email != nil || got.StageID != qual.ID || len(got.ExternalReferences) != 2 {
		t.Errorf("A's lead changed by B: %+v", got)
	}
	created, updated := len(events(t, env, a.Secret, "lead.created")), len(events(t, env, a.Secret, "lead.updated"))
	if created != 1 || updated != 2 {
		t.Errorf("%d lead.created, %d lead.updated; want 1 and 2 (unchanged upserts record nothing)", created, updated)
	}
}

// TestLeads_ExternalUpsertConcurrent: ten concurrent upserts of one new reference make one
// lead (one 201, nine 200), not a unique violation.
func TestLeads_ExternalUpsertConcurrent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	const n = 10
	res := make([]*apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/leads/RACE-1", Key: a.Secret,
				Body: map[string]any{"email": "race@example.com"}})
		}()
	}
	wg.Wait()
	created := 0
	for _, r := range res {
		switch r.Status {
		case 201:
			created++
		case 200:
		default:
			t.Errorf("status %d %s", r.Status, r.Body)
		}
	}
	if created != 1 {
		t.Errorf("%d created, want 1", created)
	}
}
