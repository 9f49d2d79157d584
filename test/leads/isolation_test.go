package leads

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestLeads_Isolation: company B's keys (and A's own sandbox key) never see, count, change or
// delete A's leads, stages, attachments or events.
func TestLeads_Isolation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	stagesA := mustStages(t, env, a.Secret)
	anna := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Anna", "email": "anna@example.com",
		"ownerId": a.Admin.ID.String(), "externalReferences": []map[string]string{{"source": "ams", "externalId": "A-1"}}})
	att := addAttachment(t, env, a.ID, anna.ID, "a.pdf", "application/pdf", []byte("A"))
	addTestLeads(t, env, a.ID, 2)

	empty := func(t *testing.T, r *apitest.Response) {
		if got := ids(t, r); len(got) != 0 {
			t.Errorf("B sees %v", got)
		}
	}
	for _, key := range []struct{ name, key string }{{"B", b.Secret}, {"A's sandbox", a.TestSecret}} {
		t.Run(key.name, func(t *testing.T) {
			k := key.key
			env.Run(t, []apitest.Case{
				{Name: "list", Key: k, Path: "/leads?includeTest=true", Status: 200, Check: empty},
				{Name: "search", Key: k, Path: "/leads?search=anna", Status: 200, Check: empty},
				{Name: "A's stage as filter", Key: k, Path: "/leads?stageId=" + stagesA["new"].ID, Status: 200, Check: empty},
				{Name: "A's user as filter", Key: k, Path: "/leads?ownerId=" + a.Admin.ID.String(), Status: 200, Check: empty},
				{Name: "get", Key: k, Path: "/leads/" + anna.ID, Status: 404},
				{Name: "patch", Key: k, Method: "PATCH", Path: "/leads/" + anna.ID, Body: `{"notes":"x"}`, Status: 404},
				{Name: "delete", Key: k, Method: "DELETE", Path: "/leads/" + anna.ID, Status: 404},
				{Name: "convert", Key: k, Method: "POST", Path: "/leads/" + anna.ID + "/convert", Body: `{"contactType":"private"}`, Status: 404},
				{Name: "attachment", Key: k, Path: "/leads/" + anna.ID + "/attachments/" + att + "/content", Status: 404},
				{Name: "delete test leads", Key: k, Method: "DELETE", Path: "/leads?test=true", Status: 200},
				{Name: "A's stage id in a body", Key: k, Method: "POST", Path: "/leads", Status: 422,
					Body: map[string]any{"email": "x@example.com", "stageId": stagesA["new"].ID}, Check: apitest.FieldErrors("stageId:unknown_stage")},
				{Name: "A's user as owner", Key: k, Method: "POST", Path: "/leads", Status: 422,
					Body: map[string]any{"email": "x@example.com", "ownerId": a.Admin.ID.String()}, Check: apitest.FieldErrors("ownerId:unknown_user")},
				{Name: "A's external id makes B's own lead", Key: k, Method: "PUT", Path: "/external/ams/leads/A-1",
					Body: `{"email":"own@example.com"}`, Status: 201},
			})
			if got := events(t, env, k, "lead.created,lead.updated,lead.deleted"); len(got) != 1 || got[0].Data["id"] == anna.ID {
				t.Errorf("%s's lead events %+v, want only its own lead.created", key.name, got)
			}
		})
	}
	got := apitest.Get[lead](t, env, a.Secret, "/leads/"+anna.ID)
	if got.Notes != "" || got.Converted || len(got.Attachments) != 1 {
		t.Errorf("A's lead changed: %+v", got)
	}
	r := env.Do(t, apitest.Request{Path: "/leads?includeTest=true", Key: a.Secret})
	if n := len(ids(t, r)); n != 3 {
		t.Errorf("A has %d leads, want 3 (one and two test leads)", n)
	}
	if got := events(t, env, a.Secret, "lead.created"); len(got) != 1 || got[0].Data["id"] != anna.ID {
		t.Errorf("A's lead.created events %+v", got)
	}
}
