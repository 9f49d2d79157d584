package extractions

import (
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestExtraction_Start covers the start's answers and its errors.
func TestExtraction_Start(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, contact := company(t, env, 10)
	b, _ := company(t, env, 10)
	poor, poorContact := company(t, env, 0)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	keyA := a.UserKey(t, agentA)
	ofB := apitest.Create[idOnly](t, env, a.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Bea", "lastName": "B",
		"ownerId": agentB.ID.String()})
	pdfDoc := upload(t, env, a.Secret, contact, "police.pdf", "application/pdf", Policies[0].Render(t))
	ofBDoc := upload(t, env, a.Secret, ofB.ID, "police.pdf", "application/pdf", Policies[0].Render(t))
	textDoc := upload(t, env, a.Secret, contact, "notiz.txt", "text/plain", []byte("Bitte Police prüfen.\n"))
	poorDoc := upload(t, env, poor.Secret, poorContact, "police.pdf", "application/pdf", Policies[0].Render(t))
	otherContact := apitest.Create[idOnly](t, env, a.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Olaf", "lastName": "Other"})
	ins := insurerID(t, env, a, "HanseMerkur Allgemeine Versicherung AG")
	otherContract := apitest.Create[idOnly](t, env, a.Secret, "/contracts", map[string]any{"contactId": otherContact.ID,
		"insurerId": ins, "policyNumber": "X-1", "type": "041", "status": "active"})
	path := "/documents/" + pdfDoc + "/extractions"

	env.Run(t, []apitest.Case{
		// Catches: the start answering 201 or a body not the ContractExtraction schema.
		{Name: "queued with 202", Key: a.Secret, Method: "POST", Path: path, Body: map[string]any{}, Status: 202,
			Check: func(t *testing.T, r *apitest.Response) {
				var e extraction
				r.Decode(t, &e)
				if e.Status != "queued" || e.Points != 1 || len(e.Fields) != 0 {
					t.Errorf("got %+v, want queued, 1 point, no fields", e)
				}
			}},
		// Catches: a document id of another company answered (leak) instead of 404.
		{Name: "other company gets 404", Key: b.Secret, Method: "POST", Path: path, Body: map[string]any{}, Status: 404},
		// Catches: an agent starting on another agent's contact's document (visibility).
		{Name: "agent cannot start on another agent's contact's document", Key: keyA, Method: "POST",
			Path: "/documents/" + ofBDoc + "/extractions", Body: map[string]any{}, Status: 404},
		// Catches: the route under the wrong scope.
		{Name: "documents:read only is 403", Key: a.KeyWithScopes(t, "documents:read"), Method: "POST", Path: path,
			Body: map[string]any{}, Status: 403},
		// Catches: a malformed path id reaching the database (500).
		{Name: "malformed document id is 400", Key: a.Secret, Method: "POST", Path: "/documents/nope/extractions",
			Body: map[string]any{}, Status: 400},
		// Catches: an unknown document answered 202 with a dangling row.
		{Name: "unknown document is 404", Key: a.Secret, Method: "POST", Path: "/documents/" + uuid.NewString() + "/extractions",
			Body: map[string]any{}, Status: 404},
		// Catches: a text file sent to the OCR (it cannot be read: the points would be lost).
		{Name: "not a PDF or image is 422", Key: a.Secret, Method: "POST", Path: "/documents/" + textDoc + "/extractions",
			Body: map[string]any{}, Status: 422, Check: apitest.FieldErrors("documentId:not_readable")},
		// Catches: a contract type that is no Sparte stored and later refused by apply only.
		{Name: "unknown contract type is 422", Key: a.Secret, Method: "POST", Path: path,
			Body: map[string]any{"contractType": "999x"}, Status: 422, Check: apitest.FieldErrors("contractType:unknown_type")},
		// Catches: autoApply with contractId accepted (the spec: not combinable).
		{Name: "autoApply with contractId is 422", Key: a.Secret, Method: "POST", Path: path,
			Body: map[string]any{"autoApply": true, "contractId": otherContract.ID}, Status: 422, Check: apitest.FieldErrors("autoApply:not_combinable")},
		// Catches: a malformed contract id reaching the database.
		{Name: "malformed contractId is 422", Key: a.Secret, Method: "POST", Path: path,
			Body: map[string]any{"contractId": "nope"}, Status: 422, Check: apitest.FieldErrors("contractId:invalid_uuid")},
		// Catches: a contract of another contact taken as the target (apply would move data).
		{Name: "contract of another contact is 422", Key: a.Secret, Method: "POST", Path: path,
			Body: map[string]any{"contractId": otherContract.ID}, Status: 422, Check: apitest.FieldErrors("contractId:other_contact")},
		// Catches: an unknown contract accepted.
		{Name: "unknown contract is 404", Key: a.Secret, Method: "POST", Path: path,
			Body: map[string]any{"contractId": uuid.NewString()}, Status: 404},
		// Catches: an unknown body field ignored.
		{Name: "unknown body field is 422", Key: a.Secret, Method: "POST", Path: path,
			Body: map[string]any{"colour": "red"}, Status: 422},
		// Catches: the start with no points queued anyway (the ledger would go negative).
		{Name: "no points is 402", Key: poor.Secret, Method: "POST", Path: "/documents/" + poorDoc + "/extractions",
			Body: map[string]any{}, Status: 402, Problem: "insufficient_points"},
	})
	// Catches: a 402 that still wrote the extraction row (the charge rolled back, the row not).
	if n := countExtractions(t, env, poor); n != 0 {
		t.Errorf("company without points has %d extractions, want 0", n)
	}
	if got := balance(t, env, poor); got != 0 {
		t.Errorf("balance %d after a refused start, want 0", got)
	}
}

// TestExtraction_Idempotent: a start repeated with the same Idempotency-Key is replayed: one
// extraction, one point. Catches the start mounted without the idempotency middleware (a retry
// pays twice).
func TestExtraction_Idempotent(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co, contact := company(t, env, 5)
	doc := upload(t, env, co.Secret, contact, "police.pdf", "application/pdf", Policies[1].Render(t))
	key := uuid.NewString()
	var ids []string
	for range 2 {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/documents/" + doc + "/extractions", Key: co.Secret,
			Body: map[string]any{}, Header: map[string]string{"Idempotency-Key": key}})
		if r.Status != 202 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		var e extraction
		r.Decode(t, &e)
		ids = append(ids, e.ID)
	}
	if ids[0] != ids[1] || balance(t, env, co) != 4 || countExtractions(t, env, co) != 1 {
		t.Errorf("ids %v, balance %d, extractions %d; want one extraction and 4 points left", ids, balance(t, env, co),
			countExtractions(t, env, co))
	}
}

// TestExtraction_RefundOnFailure: a PDF the tools cannot read fails the extraction with the
// reason and gives the point back, with a refund line naming the extraction beside its charge.
// Catches: a failed extraction that keeps the points, a refund without a ledger line, or a
// ledger line without the extraction's id (one ledger for e-mails and extractions).
func TestExtraction_RefundOnFailure(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co, contact := company(t, env, 3)
	doc := upload(t, env, co.Secret, contact, "kaputt.pdf", "application/pdf", apitest.PDF)
	e := start(t, env, co.Secret, doc, map[string]any{})
	if got := balance(t, env, co); got != 2 {
		t.Errorf("balance %d after the start, want 2", got)
	}
	e = await(t, env, co.Secret, e.ID)
	if e.Status != "failed" || e.Error == nil || *e.Error == "" {
		t.Fatalf("extraction %+v, want failed with a reason", e)
	}
	if got := balance(t, env, co); got != 3 {
		t.Errorf("balance %d after the failure, want 3 (refunded)", got)
	}
	lines := ledger(t, env, co)
	if len(lines) != 2 || lines[0].Reason != "extraction" || lines[0].Delta != -1 || lines[1].Reason != "refund" ||
		lines[1].Delta != 1 || lines[0].ExtractionID == nil || lines[1].ExtractionID == nil ||
		lines[0].ExtractionID.String() != e.ID || lines[1].ExtractionID.String() != e.ID {
		t.Errorf("ledger %+v, want the charge and the refund of extraction %s", lines, e.ID)
	}
	// Catches: apply writing from a failed extraction.
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/extractions/" + e.ID + "/apply", Key: co.Secret,
		Body: map[string]any{"fields": []string{"policyNumber"}, "values": map[string]any{"policyNumber": "X"}}})
	if r.Status != 409 || r.Problem(t).Code != "not_completed" {
		t.Errorf("apply of a failed extraction: %d %s, want 409 not_completed", r.Status, r.Body)
	}
}
