package privacy

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestRequests_Errors: the documented statuses of both operations. Each case names what it
// would catch.
func TestRequests_Errors(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	other := env.NewCompany(t)
	foreign := createContact(t, env, other.Secret, newPerson(), "")
	ct := createContact(t, env, co.Secret, newPerson(), "")
	readOnly := co.KeyWithScopes(t, "contacts:read")
	agent := env.NewUser(t, co, "agent")
	agentKey := co.UserKey(t, agent, "privacy:write", "contacts:read")
	exp := func(id string) string { return "/contacts/" + id + "/privacy/data-export" }
	env.Run(t, []apitest.Case{
		// a contact id that is not a uuid reaching the database (500)
		{Name: "bad contact id", Key: co.Secret, Method: "POST", Path: exp("nope"), Status: 400},
		// a request recorded for a contact that does not exist
		{Name: "unknown contact", Key: co.Secret, Method: "POST", Path: exp("0190d0a0-0000-7000-8000-000000000001"), Status: 404},
		// another company's contact exported (tenant isolation of the lookup)
		{Name: "other company's contact", Key: co.Secret, Method: "POST", Path: exp(foreign), Status: 404},
		// the scope check missing on the route
		{Name: "without privacy scope", Key: readOnly, Method: "POST", Path: exp(ct), Status: 403},
		{Name: "list without privacy scope", Key: readOnly, Path: "/privacy-requests", Status: 403},
		// an agent's role acting on a data-subject request (policy: managers and admins)
		{Name: "agent may not request", Key: agentKey, Method: "POST", Path: exp(ct), Status: 403},
		{Name: "no credential", Method: "POST", Path: exp(ct), Status: 401},
		// filters not validated (a bad enum reaching the database is a 500)
		{Name: "bad type", Key: co.Secret, Path: "/privacy-requests?type=delete", Status: 422,
			Check: apitest.FieldErrors("type:invalid_enum")},
		{Name: "bad status", Key: co.Secret, Path: "/privacy-requests?status=done", Status: 422,
			Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "bad contactId", Key: co.Secret, Path: "/privacy-requests?contactId=x", Status: 422,
			Check: apitest.FieldErrors("contactId:invalid_uuid")},
		{Name: "all bad at once", Key: co.Secret, Path: "/privacy-requests?type=x&status=y&contactId=z&limit=0", Status: 422,
			Check: apitest.FieldErrorSet("type:invalid_enum", "status:invalid_enum", "contactId:invalid_uuid", "limit:out_of_range")},
	})
}

// TestRequests_ListFilters: type, status and contactId narrow the list; newest first; another
// company's requests never appear. Catches a filter ignored, the wrong order, a list not pinned
// to the company.
func TestRequests_ListFilters(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	other := env.NewCompany(t)
	a := createContact(t, env, co.Secret, newPerson(), "")
	b := createContact(t, env, co.Secret, newPerson(), "")
	ra := requestExport(t, env, co.Secret, a)
	rb := requestExport(t, env, co.Secret, b)
	await(t, env, co.Secret, ra)
	await(t, env, co.Secret, rb)
	requestExport(t, env, other.Secret, createContact(t, env, other.Secret, newPerson(), ""))
	all := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests")
	if len(all.Data) != 2 || all.Data[0].ID != rb.ID || all.Data[1].ID != ra.ID {
		t.Fatalf("list: %+v", all.Data)
	}
	if got := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?contactId="+a).Data; len(got) != 1 || got[0].ID != ra.ID {
		t.Errorf("contactId: %+v", got)
	}
	if got := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?type=erasure").Data; len(got) != 0 {
		t.Errorf("type=erasure: %+v", got)
	}
	if got := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?type=data_export&status=completed").Data; len(got) != 2 {
		t.Errorf("completed exports: %+v", got)
	}
	if got := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?status=queued").Data; len(got) != 0 {
		t.Errorf("queued: %+v", got)
	}
	page := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?limit=1")
	if len(page.Data) != 1 || !page.Pagination.HasMore {
		t.Fatalf("limit 1: %+v", page)
	}
	next := apitest.Get[apitest.Page[request]](t, env, co.Secret, "/privacy-requests?limit=1&cursor="+page.Pagination.NextCursor)
	if len(next.Data) != 1 || next.Data[0].ID != ra.ID {
		t.Errorf("second page: %+v", next.Data)
	}
}

// TestRequests_AgentSeesOwnContacts: an agent's key lists the requests about its own contacts,
// not those of another agent's contact, and filtering by that contact's id gives nothing.
// Catches a list that ignores visibility (owner_id) or reads the contact's current owner.
func TestRequests_AgentSeesOwnContacts(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	ag1, ag2 := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	mine := createContact(t, env, co.Secret, newPerson(), ag1.ID.String())
	theirs := createContact(t, env, co.Secret, newPerson(), ag2.ID.String())
	rm := requestExport(t, env, co.Secret, mine)
	requestExport(t, env, co.Secret, theirs)
	key := co.UserKey(t, ag1, "privacy:write")
	got := apitest.Get[apitest.Page[request]](t, env, key, "/privacy-requests").Data
	if len(got) != 1 || got[0].ID != rm.ID || got[0].OwnerID == nil || *got[0].OwnerID != ag1.ID.String() {
		t.Errorf("agent's list: %+v", got)
	}
	if got := apitest.Get[apitest.Page[request]](t, env, key, "/privacy-requests?contactId="+theirs).Data; len(got) != 0 {
		t.Errorf("another agent's contact: %+v", got)
	}
}
