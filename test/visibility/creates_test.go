package visibility

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// made is what a create left behind: a GET path its creator must be able to read (200), and
// text the answer must contain (the new thing's id, when the path is a list).
type made struct{ path, has string }

// creator is one create route of the API as an agent uses it. create makes something with key
// (an agent's credential) and says where to read it; forbidden says the agent's role may not
// use the route at all (403), notCreate why the route makes nothing of its own.
type creator struct {
	create    func(t *testing.T, w *world, key string) made
	forbidden bool
	notCreate string
}

// postID posts body to path as key, expects want and returns the answer's id.
func (w *world) postID(t *testing.T, key, method, path string, body any, want int) string {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Method: method, Path: path, Key: key, Body: body})
	if r.Status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	var v struct{ ID string }
	r.Decode(t, &v)
	return v.ID
}

func ownContact(t *testing.T, w *world, key string) string {
	return w.createContact(t, key, map[string]any{"type": "private", "firstName": "Eigen", "lastName": "Kunde"}).ID
}

// creators: every POST and PUT route of the API (app/routes.go), by its Fiber path.
var creators = map[string]creator{
	"POST /api/public/v1/contacts": {create: func(t *testing.T, w *world, key string) made {
		return made{path: "/contacts/" + ownContact(t, w, key)}
	}},
	"POST /api/public/v1/contacts/bulk": {create: func(t *testing.T, w *world, key string) made {
		r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/bulk", Key: key, Body: map[string]any{"items": []map[string]any{
			{"externalReference": map[string]string{"source": "ams", "externalId": "bulk-" + uuid.NewString()}, "type": "private",
				"firstName": "Bulk", "lastName": "Kunde"}}}})
		var res struct {
			Data []struct {
				Status string
				ID     *string
			}
		}
		r.Decode(t, &res)
		if r.Status != 200 || len(res.Data) != 1 || res.Data[0].Status != "created" || res.Data[0].ID == nil {
			t.Fatalf("bulk: %d %s", r.Status, r.Body)
		}
		return made{path: "/contacts/" + *res.Data[0].ID}
	}},
	"PUT /api/public/v1/external/:source/contacts/:externalId": {create: func(t *testing.T, w *world, key string) made {
		id := w.postID(t, key, "PUT", "/external/ams/contacts/put-"+uuid.NewString(),
			map[string]any{"type": "private", "firstName": "Extern", "lastName": "Kunde"}, 201)
		return made{path: "/contacts/" + id}
	}},
	"POST /api/public/v1/contacts/match": {notCreate: "reads: matches people against the contacts"},
	"POST /api/public/v1/contacts/:contactId/phones": {create: func(t *testing.T, w *world, key string) made {
		c := ownContact(t, w, key)
		id := w.postID(t, key, "POST", "/contacts/"+c+"/phones", map[string]any{"number": "+49 170 1234567"}, 201)
		return made{path: "/contacts/" + c, has: id}
	}},
	"POST /api/public/v1/contacts/:contactId/relationships": {create: func(t *testing.T, w *world, key string) made {
		c, other := ownContact(t, w, key), ownContact(t, w, key)
		id := w.postID(t, key, "POST", "/contacts/"+c+"/relationships", map[string]any{"relatedContactId": other, "role": "partner"}, 201)
		return made{path: "/contacts/" + c + "/relationships", has: id}
	}},
	"PUT /api/public/v1/contacts/:contactId/finance": {create: func(t *testing.T, w *world, key string) made {
		c := ownContact(t, w, key)
		r := w.env.Do(t, apitest.Request{Method: "PUT", Path: "/contacts/" + c + "/finance", Key: key,
			Body: map[string]any{"income": []map[string]any{{"type": "salary", "amount": "3210.00"}}}})
		if r.Status != 200 {
			t.Fatalf("finance: %d %s", r.Status, r.Body)
		}
		return made{path: "/contacts/" + c + "/finance", has: "3210.00"}
	}},
	"POST /api/public/v1/contacts/:contactId/notes": {create: func(t *testing.T, w *world, key string) made {
		c := ownContact(t, w, key)
		id := w.postID(t, key, "POST", "/contacts/"+c+"/notes", map[string]any{"content": "Rückruf"}, 201)
		return made{path: "/contacts/" + c + "/notes/" + id}
	}},
	"POST /api/public/v1/custom-fields": {forbidden: true},
	// The bug of issue 20 B: the lead got no owner and vanished for its creator.
	"POST /api/public/v1/leads": {create: func(t *testing.T, w *world, key string) made {
		id := w.postID(t, key, "POST", "/leads", map[string]any{"lastName": "Eigen", "email": uuid.NewString() + "@example.com"}, 201)
		return made{path: "/leads/" + id}
	}},
	"PUT /api/public/v1/external/:source/leads/:externalId": {create: func(t *testing.T, w *world, key string) made {
		id := w.postID(t, key, "PUT", "/external/web/leads/"+uuid.NewString(), map[string]any{"lastName": "Extern", "email": uuid.NewString() + "@example.com"}, 201)
		return made{path: "/leads/" + id}
	}},
	"POST /api/public/v1/leads/:leadId/convert": {create: func(t *testing.T, w *world, key string) made {
		l := w.postID(t, key, "POST", "/leads", map[string]any{"firstName": "Neu", "lastName": "Kunde", "email": uuid.NewString() + "@example.com"}, 201)
		r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/leads/" + l + "/convert", Key: key, Body: map[string]any{"contactType": "private"}})
		var res struct{ Contact struct{ ID string } }
		r.Decode(t, &res)
		if r.Status != 201 {
			t.Fatalf("convert: %d %s", r.Status, r.Body)
		}
		return made{path: "/contacts/" + res.Contact.ID}
	}},
	// The intake names no id: the agent finds the lead its user-bound publishable key brought
	// in among its leads.
	"POST /api/public/v1/leads/intake": {create: func(t *testing.T, w *world, key string) made {
		return w.intakeLead(t, key, "/leads/intake")
	}},
	"POST /api/public/leads": {create: func(t *testing.T, w *world, key string) made {
		return w.intakeLead(t, key, "//api/public/leads")
	}},
	"POST /api/public/v1/lead-stages": {forbidden: true},
	"POST /api/public/v1/contracts": {create: func(t *testing.T, w *world, key string) made {
		return made{path: "/contracts/" + w.createContract(t, key, ownContact(t, w, key), "P-"+uuid.NewString()[:8]).ID}
	}},
	"PUT /api/public/v1/external/:source/contracts/:externalId": {create: func(t *testing.T, w *world, key string) made {
		c := ownContact(t, w, key)
		policy := "X-" + uuid.NewString()[:8]
		id := w.postID(t, key, "PUT", "/external/ams/contracts/"+policy, map[string]any{"contactId": c, "insurerId": w.insurer(t, key),
			"policyNumber": policy, "type": "030", "status": "active"}, 201)
		return made{path: "/contracts/" + id}
	}},
	"POST /api/public/v1/contacts/:contactId/documents": {create: func(t *testing.T, w *world, key string) made {
		r := w.uploadDoc(t, key, "/contacts/"+ownContact(t, w, key)+"/documents")
		var d struct{ ID string }
		r.Decode(t, &d)
		if r.Status != 201 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		return made{path: "/documents/" + d.ID}
	}},
	// Contract extraction (issue 25): the agent's own contact's document, paid with a point
	// granted for it.
	"POST /api/public/v1/documents/:documentId/extractions": {create: func(t *testing.T, w *world, key string) made {
		if _, err := w.env.Ops.GrantPoints(t.Context(), w.co.ID, 1, "test"); err != nil {
			t.Fatal(err)
		}
		r := w.uploadDoc(t, key, "/contacts/"+ownContact(t, w, key)+"/documents")
		var d struct{ ID string }
		r.Decode(t, &d)
		return made{path: "/extractions/" + w.postID(t, key, "POST", "/documents/"+d.ID+"/extractions", map[string]any{}, 202)}
	}},
	"POST /api/public/v1/extractions/:extractionId/apply": {notCreate: "writes chosen fields to a contract once the job completed " +
		"(no jobs run here: test/extractions applies as agents and TestVisibility_Extractions refuses others' extractions)"},
	"POST /api/public/v1/contracts/:contractId/documents": {create: func(t *testing.T, w *world, key string) made {
		ct := w.createContract(t, key, ownContact(t, w, key), "D-"+uuid.NewString()[:8])
		r := w.uploadDoc(t, key, "/contracts/"+ct.ID+"/documents")
		var d struct{ ID string }
		r.Decode(t, &d)
		if r.Status != 201 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		return made{path: "/documents/" + d.ID}
	}},
	"POST /api/public/v1/portfolio-transfers":                    {forbidden: true},
	"POST /api/public/v1/portfolio-transfers/:transferId/commit": {forbidden: true},
	"POST /api/public/v1/portfolio-mappings":                     {forbidden: true},
	// commissions:write is a manager's and an admin's (policy.csv): an agent reads statements.
	"POST /api/public/v1/commission-statements": {forbidden: true},
	// imports:write is a manager's and an admin's (policy.csv): moving a brokerage's contacts in
	// is not an agent's work (test/visibility/imports_test.go shows the 403s).
	"POST /api/public/v1/imports":                  {forbidden: true},
	"POST /api/public/v1/imports/:importId/commit": {forbidden: true},
	// privacy:write is a manager's and an admin's (policy.csv): data-subject requests are the
	// company's compliance work; an agent lists those about its contacts (test/privacy).
	"POST /api/public/v1/contacts/:contactId/privacy/data-export":                           {forbidden: true},
	"POST /api/public/v1/contacts/:contactId/privacy/erasure":                               {forbidden: true},
	"POST /api/public/v1/webhook-endpoints":                                                 {forbidden: true},
	"POST /api/public/v1/webhook-endpoints/:webhookEndpointId/rotate-secret":                {forbidden: true},
	"POST /api/public/v1/webhook-endpoints/:webhookEndpointId/test":                         {forbidden: true},
	"POST /api/public/v1/webhook-endpoints/:webhookEndpointId/deliveries/:deliveryId/retry": {forbidden: true},
	"POST /api/public/v1/users/:userId/delegations":                                         {forbidden: true},
	"POST /api/public/v1/tasks": {create: func(t *testing.T, w *world, key string) made {
		return made{path: "/tasks/" + w.postID(t, key, "POST", "/tasks", map[string]any{"title": "Eigene Aufgabe"}, 201)}
	}},
	"POST /api/public/v1/tasks/:taskId/comments": {create: func(t *testing.T, w *world, key string) made {
		task := w.postID(t, key, "POST", "/tasks", map[string]any{"title": "Mit Kommentar", "contactId": ownContact(t, w, key)}, 201)
		id := w.postID(t, key, "POST", "/tasks/"+task+"/comments", map[string]any{"content": "Erledigt?"}, 201)
		return made{path: "/tasks/" + task + "/comments", has: id}
	}},
	"POST /api/public/v1/appointments": {create: func(t *testing.T, w *world, key string) made {
		id := w.postID(t, key, "POST", "/appointments", map[string]any{"title": "Eigener Termin",
			"startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00", "contactId": ownContact(t, w, key)}, 201)
		return made{path: "/appointments/" + id}
	}},
	"POST /api/public/v1/users/:userId/calendar-token": {create: func(t *testing.T, w *world, key string) made {
		r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + w.userOf(t, key).String() + "/calendar-token", Key: key})
		var tok struct{ URL string }
		r.Decode(t, &tok)
		if r.Status != 201 && r.Status != 200 {
			t.Fatalf("calendar token: %d %s", r.Status, r.Body)
		}
		return made{path: "/" + tok.URL}
	}},
	// The e-mail area (issue 21). Jobs do not run here: a sent e-mail stays queued, which is
	// all "reads what it created" needs. A sends from its own mailbox.
	"POST /api/public/v1/emails": {create: func(t *testing.T, w *world, key string) made {
		id, _ := w.sendMail(t, key, w.mailboxes(t).personalA, "kunde-"+uuid.NewString()[:8]+"@kunde.test", "Ihr Angebot", nil)
		return made{path: "/emails/" + id}
	}},
	// The opt-out list is marketing:write, which an agent's role lacks (policy.csv): managers
	// and admins keep it.
	"POST /api/public/v1/email-opt-outs": {forbidden: true},
	"POST /api/public/v1/correspondence-cases": {create: func(t *testing.T, w *world, key string) made {
		return made{path: "/correspondence-cases/" + w.correspondenceCase(t, key, ownContact(t, w, key))}
	}},
	"POST /api/public/v1/correspondence-cases/:caseId/send": {create: func(t *testing.T, w *world, key string) made {
		id := w.correspondenceCase(t, key, ownContact(t, w, key))
		w.do(t, key, "POST", "/correspondence-cases/"+id+"/send", map[string]any{"mailboxId": w.mailboxes(t).personalA.ID,
			"recipientEmail": "vertrag@versicherer.test"}, 200)
		return made{path: "/correspondence-cases/" + id, has: `"status":"sent"`}
	}},
	// The signing area (issue 22).
	"POST /api/public/v1/documents/generate": {create: func(t *testing.T, w *world, key string) made {
		id := w.postID(t, key, "POST", "/documents/generate", map[string]any{"templateId": w.templateID(t, key, "Maklervollmacht"),
			"contactId": ownContact(t, w, key)}, 201)
		return made{path: "/documents/" + id}
	}},
	"POST /api/public/v1/signature-requests": {create: func(t *testing.T, w *world, key string) made {
		return made{path: "/signature-requests/" + w.signatureRequest(t, key, w.mailContact(t, key))}
	}},
	"POST /api/public/v1/signature-requests/:signatureRequestId/cancel": {create: func(t *testing.T, w *world, key string) made {
		id := w.signatureRequest(t, key, w.mailContact(t, key))
		w.do(t, key, "POST", "/signature-requests/"+id+"/cancel", nil, 200)
		return made{path: "/signature-requests/" + id, has: `"status":"cancelled"`}
	}},
	"POST /api/public/v1/signature-requests/:signatureRequestId/remind": {notCreate: "re-sends the links of a request; makes nothing"},
	"POST /api/public/v1/contacts/:contactId/portal-access": {create: func(t *testing.T, w *world, key string) made {
		contact := w.mailContact(t, key)
		id := w.postID(t, key, "POST", "/contacts/"+contact+"/portal-access", nil, 201)
		return made{path: "/contacts/" + contact + "/portal-access", has: id}
	}},
	"POST /api/public/v1/portal-change-requests/:changeRequestId/:decision": {notCreate: "decides a customer's change request; makes nothing"},
	"POST /api/public/v1/advice-records": {create: func(t *testing.T, w *world, key string) made {
		return made{path: "/advice-records/" + w.adviceRecord(t, key, ownContact(t, w, key))}
	}},
	"POST /api/public/v1/advice-records/:adviceRecordId/document": {create: func(t *testing.T, w *world, key string) made {
		id := w.postID(t, key, "POST", "/advice-records/"+w.adviceRecord(t, key, ownContact(t, w, key))+"/document", nil, 201)
		return made{path: "/documents/" + id}
	}},
}

// templateID is the id of the company's document template name, read as key.
func (w *world) templateID(t *testing.T, key, name string) string {
	t.Helper()
	var ts struct{ Data []struct{ ID, Name string } }
	w.do(t, key, "GET", "/document-templates", nil, 200).Decode(t, &ts)
	for _, x := range ts.Data {
		if x.Name == name {
			return x.ID
		}
	}
	t.Fatalf("no document template %q", name)
	return ""
}

// mailContact creates a contact of key's own with an e-mail address (a signer needs one).
func (w *world) mailContact(t *testing.T, key string) string {
	t.Helper()
	return w.createContact(t, key, map[string]any{"type": "private", "firstName": "Eigen", "lastName": "Kunde",
		"email": "eigen-" + uuid.NewString()[:8] + "@kunde.test"}).ID
}

// signatureRequest sends the seeded privacy consent (a standard document) to contact for
// signature, from agent A's personal mailbox, as key.
func (w *world) signatureRequest(t *testing.T, key, contact string) string {
	t.Helper()
	var std struct{ Data []struct{ ID string } }
	w.do(t, key, "GET", "/standard-documents", nil, 200).Decode(t, &std)
	if len(std.Data) == 0 {
		t.Fatal("no standard documents seeded")
	}
	return w.postID(t, key, "POST", "/signature-requests", map[string]any{"contactId": contact,
		"documents": []map[string]any{{"standardDocumentId": std.Data[0].ID}}, "mailboxId": w.mailboxes(t).personalA.ID}, 201)
}

// adviceRecord documents a consultation of contact as key.
func (w *world) adviceRecord(t *testing.T, key, contact string) string {
	t.Helper()
	return w.postID(t, key, "POST", "/advice-records", map[string]any{"contactId": contact,
		"consultedAt": "2026-05-04T10:00:00+02:00", "subject": "Hausratversicherung"}, 201)
}

// intakeLead submits a lead at the intake path with a publishable key bound to key's user: the
// intake names no id, so the agent finds the lead among its leads.
func (w *world) intakeLead(t *testing.T, key, path string) made {
	t.Helper()
	email := uuid.NewString() + "@example.com"
	pk := w.co.Key(t, operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvLive, UserID: w.userOf(t, key),
		AllowedDomains: []string{"example.com"}}).Secret
	r := w.env.Do(t, apitest.Request{Method: "POST", Path: path, Body: map[string]any{"firstName": "Anna", "lastName": "Web", "email": email},
		Header: map[string]string{"X-API-Key": pk}})
	if r.Status != 201 {
		t.Fatalf("intake %s: %d %s", path, r.Status, r.Body)
	}
	return made{path: "/leads?limit=100", has: email}
}

// userOf is the user an agent credential of the matrix acts for.
func (w *world) userOf(t *testing.T, key string) *uuid.UUID {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Path: "/me", Key: key})
	var me struct {
		User *struct{ ID uuid.UUID } `json:"user"`
	}
	r.Decode(t, &me)
	if r.Status != 200 || me.User == nil {
		t.Fatalf("/me of an agent credential: %d %s", r.Status, r.Body)
	}
	return &me.User.ID
}

// insurer is the id of insurer 5501 of the catalog.
func (w *world) insurer(t *testing.T, key string) string {
	t.Helper()
	r := w.env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: key})
	var cat struct{ Data []struct{ ID string } }
	r.Decode(t, &cat)
	if r.Status != 200 || len(cat.Data) != 1 {
		t.Fatalf("insurer 5501: %d %s", r.Status, r.Body)
	}
	return cat.Data[0].ID
}

// TestVisibility_AgentReadsWhatItCreates (issue 20 B): for every create route of the API (read
// from the server's routes, so a new one fails here until it is listed), an agent reads what
// it made right after, with a key and with an OAuth token; routes its role may not use answer
// 403. Handing something to a colleague on purpose is TestVisibility_AgentCreatesAndHandsOver.
func TestVisibility_AgentReadsWhatItCreates(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.mailboxes(t) // the mail server lives as long as the test, not one subtest
	var routes []string
	for _, r := range w.env.Server.App.GetRoutes(true) {
		if (r.Method == http.MethodPost || r.Method == http.MethodPut) && strings.HasPrefix(r.Path, "/api/public/") {
			routes = append(routes, r.Method+" "+r.Path)
		}
	}
	slices.Sort(routes)
	routes = slices.Compact(routes)
	for _, route := range routes {
		c, ok := creators[route]
		if !ok {
			t.Errorf("%s: a create route this test does not know: add it to creators (what an agent makes there and where it reads it)", route)
			continue
		}
		if c.notCreate != "" {
			continue
		}
		for _, name := range []string{"agent A key", "agent A token"} {
			key := w.keys[name]
			t.Run(route+"/"+name, func(t *testing.T) {
				if c.forbidden {
					method, path, _ := strings.Cut(route, " ")
					path = strings.NewReplacer(":contactId", uuid.NewString(), ":transferId", uuid.NewString(),
						":webhookEndpointId", uuid.NewString(), ":deliveryId", uuid.NewString(), ":userId", w.agentA.ID.String()).Replace(path)
					r := w.env.Do(t, apitest.Request{Method: method, Path: "/" + path, Key: key, Body: map[string]any{}})
					if r.Status != 403 {
						t.Errorf("an agent's %s: %d, want 403 (its role may not): %s", route, r.Status, r.Body)
					}
					return
				}
				m := c.create(t, w, key)
				r := w.env.Do(t, apitest.Request{Path: m.path, Key: key})
				if r.Status != 200 || !strings.Contains(string(r.Body), m.has) {
					t.Errorf("the agent reads what it just created at %s: %d, want 200 with %q: %s", m.path, r.Status, m.has, r.Body)
				}
			})
		}
	}
	for route := range creators {
		if !slices.Contains(routes, route) {
			t.Errorf("creators lists %s, which the server does not serve", route)
		}
	}
}
