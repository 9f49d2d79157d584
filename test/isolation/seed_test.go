package isolation

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedEveryTable gives company c rows in every tenant table, through the API as its users'
// integrations would write them: a check that hides no row of another company proves nothing
// on a table where that company has none. TestIsolation_BelowTheAPI fails, naming the table,
// when a table (a new one) is left empty here.
func seedEveryTable(t *testing.T, env *apitest.Env, c *apitest.Company) {
	t.Helper()
	do := func(method, path, key string, body any, header map[string]string) *apitest.Response {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: method, Path: path, Key: key, Body: body, Header: header})
		if r.Status/100 != 2 {
			t.Fatalf("seed %s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	create := func(path string, body any) string {
		t.Helper()
		return apitest.Create[struct{ ID string }](t, env, c.Secret, path, body).ID
	}
	post := func(path string, body any, header map[string]string) string { // with headers: multipart, Idempotency-Key
		t.Helper()
		var v struct{ ID string }
		do("POST", path, c.Secret, body, header).Decode(t, &v)
		return v.ID
	}
	multi := func(fields map[string]string, file, name string, content []byte) ([]byte, map[string]string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range fields {
			_ = mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile(file, name)
		_, _ = fw.Write(content)
		_ = mw.Close()
		return buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()}
	}

	// users and api_keys: the company's admin and keys (NewCompany), an agent
	agent := env.NewUser(t, c, "agent")
	// contacts, external_refs, events, event_counters, idempotency_keys
	contact := post("/contacts", map[string]any{"type": "private", "firstName": "Seed", "lastName": "Kunde",
		"externalReferences": []map[string]string{{"source": "ams", "externalId": "S-1"}}},
		map[string]string{"Idempotency-Key": "seed-" + c.ID.String()})
	other := create("/contacts", map[string]any{"type": "private", "firstName": "Seed", "lastName": "Partner"})
	cp := "/contacts/" + contact
	create(cp+"/phones", map[string]any{"number": "030 1234567"})                                  // contact_phones
	create(cp+"/relationships", map[string]any{"relatedContactId": other, "role": "partner"})      // contact_relationships
	create(cp+"/notes", map[string]any{"content": "Notiz"})                                        // contact_activities
	do("PUT", cp+"/finance", c.Secret, map[string]any{}, nil)                                      // contact_finances
	create("/custom-fields", map[string]any{"key": "seed", "label": "Seed", "dataType": "string"}) // custom_field_definitions
	create("/users/"+c.Admin.ID.String()+"/delegations", map[string]any{"delegateId": agent.ID.String()})

	// leads, lead_submissions, lead_attachments (lead_stages: every company's defaults)
	body, h := multi(map[string]string{"firstName": "Seed", "lastName": "Interessent", "email": "seed@example.com"},
		"document", "Nachweis.pdf", []byte("%PDF-1.4\n%%EOF\n"))
	h["X-API-Key"] = c.Publishable
	do("POST", "/leads/intake", "", body, h)

	// tasks, task_comments, appointments, appointment_exceptions, calendar_tokens
	task := create("/tasks", map[string]any{"title": "Seed-Aufgabe", "contactId": contact})
	create("/tasks/"+task+"/comments", map[string]any{"content": "Kommentar"})
	appt := create("/appointments", map[string]any{"title": "Seed-Termin", "startAt": "2026-05-04T10:00:00",
		"endAt": "2026-05-04T11:00:00", "recurrence": "FREQ=WEEKLY;COUNT=3", "ownerId": c.Admin.ID.String()})
	do("PATCH", "/appointments/"+appt+"?scope=this&occurrenceStart="+url.QueryEscape("2026-05-11T10:00:00"), c.Secret,
		map[string]any{"title": "verschoben"}, nil)
	do("POST", "/users/"+c.Admin.ID.String()+"/calendar-token", c.UserKey(t, c.Admin), nil, nil)

	// contracts, documents, portfolio_mappings, portfolio_transfers
	ins := apitest.Get[apitest.Page[struct{ ID string }]](t, env, c.Secret, "/insurers?vuNumber=5501")
	if len(ins.Data) == 0 {
		t.Fatal("seed: no insurer 5501 in the catalog")
	}
	create("/contracts", map[string]any{"contactId": contact, "insurerId": ins.Data[0].ID, "policyNumber": "S-1",
		"type": "020", "status": "active"})
	body, h = multi(nil, "file", "Akte.pdf", []byte("%PDF-1.4\n%%EOF\n"))
	post(cp+"/documents", body, h)
	mapping := create("/portfolio-mappings", map[string]any{"name": "Seed", "columns": map[string]string{"VSNR": "contract.policyNumber"}})
	body, h = multi(map[string]string{"format": "csv", "mappingId": mapping}, "file", "bestand.csv", []byte("VSNR\nS-2\n"))
	post("/portfolio-transfers", body, h)

	// webhook_endpoints, webhook_cursors (with the first endpoint), webhook_deliveries (a test
	// delivery to a receiver on loopback)
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer receiver.Close()
	ep := create("/webhook-endpoints", map[string]any{"url": receiver.URL + "/hook", "events": []string{"*"}})
	do("POST", "/webhook-endpoints/"+ep+"/test", c.Secret, nil, nil)

	// oauth_clients, oauth_tokens (client credentials), oauth_consents (a user's grant)
	c.OAuthToken(t, "live")
	c.UserOAuthToken(t, agent)

	// the e-mail area (seed_email_test.go)
	seedEmailTables(t, env, c, contact)
	// the signing area (seed_signature_test.go)
	seedSignatureTables(t, env, c, contact)
	// the customer portal (seed_portal_test.go)
	seedPortalTables(t, env, c, contact)
	// the commission area (seed_commissions_test.go)
	seedCommissionTables(t, env, c)
	// contact imports and their rows (seed_imports_test.go)
	seedImportTables(t, env, c)
	// privacy requests and retained records (seed_privacy_test.go)
	seedPrivacyTables(t, env, c, contact)
	// contract extractions and their ledger line (seed_extractions_test.go)
	seedExtractionTables(t, env, c, contact)
}
