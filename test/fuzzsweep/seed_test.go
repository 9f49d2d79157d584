package fuzzsweep

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seed creates one record of each kind in c and returns their ids by path parameter name.
func (w *world) seed(t *testing.T, c *apitest.Company, name string) map[string]string {
	t.Helper()
	env := w.env
	post := func(path string, body any, header map[string]string) map[string]any {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "POST", Path: path, Key: c.Secret, Body: body, Header: header})
		if r.Status/100 != 2 {
			t.Fatalf("seed POST %s: %d %s", path, r.Status, r.Body)
		}
		var v map[string]any
		r.Decode(t, &v)
		return v
	}
	id := func(v map[string]any) string { s, _ := v["id"].(string); return s }
	agent := env.NewUser(t, c, "agent")
	ids := map[string]string{"userId": c.Admin.ID.String(), "source": "ams", "externalId": "X-1", "hash": "0"}
	ids["contactId"] = id(post("/contacts", map[string]any{"type": "private", "firstName": "Fuzz", "lastName": name}, nil))
	other := id(post("/contacts", map[string]any{"type": "private", "firstName": "Fuzz", "lastName": name + " Partner"}, nil))
	cp := "/contacts/" + ids["contactId"]
	ids["noteId"] = id(post(cp+"/notes", map[string]any{"content": "Notiz " + name}, nil))
	ids["phoneId"] = id(post(cp+"/phones", map[string]any{"number": "030 1234567"}, nil))
	ids["relationshipId"] = id(post(cp+"/relationships", map[string]any{"relatedContactId": other, "role": "partner"}, nil))
	ids["leadId"] = id(post("/leads", map[string]any{"firstName": "Fuzz", "lastName": name, "email": "fuzz@example.com"}, nil))
	ids["taskId"] = id(post("/tasks", map[string]any{"title": "Aufgabe " + name, "contactId": ids["contactId"]}, nil))
	ids["appointmentId"] = id(post("/appointments", map[string]any{"title": "Termin " + name, "startAt": "2026-05-04T10:00:00",
		"endAt": "2026-05-04T11:00:00", "ownerId": c.Admin.ID.String(), "recurrence": "FREQ=WEEKLY;COUNT=3"}, nil))
	var ins struct{ Data []struct{ ID string } }
	env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: c.Secret}).Decode(t, &ins)
	ids["insurerId"] = ins.Data[0].ID
	ids["contractId"] = id(post("/contracts", map[string]any{"contactId": ids["contactId"], "insurerId": ids["insurerId"],
		"policyNumber": "P-" + name, "type": "020", "status": "active"}, nil))
	ids["webhookEndpointId"] = id(post("/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/" + name, "events": []string{"*"}}, nil))
	ids["mappingId"] = id(post("/portfolio-mappings", map[string]any{"name": name, "columns": map[string]string{"VSNR": "contract.policyNumber"}}, nil))
	ids["delegationId"] = id(post("/users/"+c.Admin.ID.String()+"/delegations", map[string]any{"delegateId": agent.ID.String()}, nil))
	ids["agentId"] = agent.ID.String()

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", name+".pdf")
	_, _ = fw.Write([]byte("%PDF-1.4\n%%EOF\n"))
	_ = mw.Close()
	ids["documentId"] = id(post(cp+"/documents", buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()}))

	buf.Reset()
	mw = multipart.NewWriter(&buf)
	_ = mw.WriteField("format", "csv")
	_ = mw.WriteField("mappingId", ids["mappingId"])
	fw, _ = mw.CreateFormFile("file", "a.csv")
	_, _ = fw.Write([]byte("VSNR\nX-1\n"))
	_ = mw.Close()
	ids["transferId"] = id(post("/portfolio-transfers", buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()}))

	r := env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + c.Admin.ID.String() + "/calendar-token", Key: c.UserKey(t, c.Admin)})
	var tok struct{ Token string }
	r.Decode(t, &tok)
	ids["token"] = tok.Token
	return ids
}

// bases are bodies the create and update operations accept, so that one bad property at a time
// reaches the service and the database.
func bases(ids map[string]string) map[string]string {
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	contact := j(map[string]any{"type": "private", "firstName": "Fuzz", "lastName": "Probe", "email": "probe@example.com"})
	contract := j(map[string]any{"contactId": ids["contactId"], "insurerId": ids["insurerId"], "policyNumber": "P-2",
		"type": "020", "status": "active"})
	return map[string]string{
		"POST /contacts":                                contact,
		"PATCH /contacts/{contactId}":                   j(map[string]any{"firstName": "Neu"}),
		"PUT /external/{source}/contacts/{externalId}":  contact,
		"POST /contacts/bulk":                           j(map[string]any{"items": []any{json.RawMessage(contact)}}),
		"POST /contacts/match":                          j(map[string]any{"email": "probe@example.com", "lastName": "Probe"}),
		"POST /contacts/{contactId}/notes":              j(map[string]any{"content": "Notiz"}),
		"PATCH /contacts/{contactId}/notes/{noteId}":    j(map[string]any{"content": "Notiz 2"}),
		"POST /contacts/{contactId}/phones":             j(map[string]any{"number": "040 1234567"}),
		"PATCH /contacts/{contactId}/phones/{phoneId}":  j(map[string]any{"type": "fax"}),
		"POST /contacts/{contactId}/relationships":      j(map[string]any{"relatedContactId": ids["contactId"], "role": "child"}),
		"PUT /contacts/{contactId}/finance":             "{}",
		"POST /contracts":                               contract,
		"PUT /external/{source}/contracts/{externalId}": contract,
		"PATCH /contracts/{contractId}":                 j(map[string]any{"status": "ended"}),
		"POST /custom-fields":                           j(map[string]any{"key": "fuzz", "label": "Fuzz", "dataType": "string"}),
		"POST /lead-stages":                             j(map[string]any{"name": "Fuzz"}),
		"POST /leads":                                   j(map[string]any{"firstName": "Fuzz", "lastName": "Lead", "email": "lead@example.com"}),
		"PUT /external/{source}/leads/{externalId}":     j(map[string]any{"firstName": "Fuzz", "lastName": "Lead", "email": "lead@example.com"}),
		"PATCH /leads/{leadId}":                         j(map[string]any{"firstName": "Neu"}),
		"POST /leads/{leadId}/convert":                  "{}",
		"POST /leads/intake":                            j(map[string]any{"firstName": "Fuzz", "lastName": "Intake", "email": "intake@example.com"}),
		"POST /api/public/leads":                        j(map[string]any{"firstName": "Fuzz", "lastName": "Legacy", "email": "legacy@example.com"}),
		"POST /tasks":                                   j(map[string]any{"title": "Aufgabe", "contactId": ids["contactId"]}),
		"PATCH /tasks/{taskId}":                         j(map[string]any{"title": "Neu"}),
		"POST /tasks/{taskId}/comments":                 j(map[string]any{"content": "Kommentar"}),
		"POST /appointments":                            j(map[string]any{"title": "Termin", "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00", "ownerId": ids["userId"]}),
		"PATCH /appointments/{appointmentId}":           j(map[string]any{"title": "Neu"}),
		"POST /webhook-endpoints":                       j(map[string]any{"url": "https://hooks.example.com/y", "events": []string{"*"}}),
		"PATCH /webhook-endpoints/{webhookEndpointId}":  j(map[string]any{"description": "neu"}),
		"POST /portfolio-mappings":                      j(map[string]any{"name": "N", "columns": map[string]string{"VSNR": "contract.policyNumber"}}),
		"PATCH /portfolio-mappings/{mappingId}":         j(map[string]any{"name": "O"}),
		"POST /users/{userId}/delegations":              j(map[string]any{"delegateId": ids["agentId"]}),
	}
}

type cursor struct{ name, v string }

// cursors are next-page cursors of A's and B's lists, and tampered ones.
func (w *world) cursors(t *testing.T) []cursor {
	t.Helper()
	next := func(key, path string) string {
		var p struct {
			Pagination struct{ NextCursor string } `json:"pagination"`
		}
		w.env.Do(t, apitest.Request{Path: path, Key: key}).Decode(t, &p)
		return p.Pagination.NextCursor
	}
	out := []cursor{{"garbage", "!!!"}, {"base64 of nothing", base64.RawURLEncoding.EncodeToString([]byte("{}"))},
		{"NUL", "\x00"}}
	if cur := next(w.b.Secret, "/users?limit=1"); cur != "" {
		out = append(out, cursor{"company B's", cur})
	}
	if cur := next(w.a.Secret, "/contacts?limit=1"); cur != "" {
		b := []byte(cur)
		b[len(b)/2] ^= 1
		out = append(out, cursor{"of the contact list", cur}, cursor{"tampered", string(b)})
	}
	return out
}
