package advice

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/pdftest"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type document struct {
	ID        string  `json:"id"`
	ContactID string  `json:"contactId"`
	Contract  *string `json:"contractId"`
	Type      string  `json:"type"`
	Filename  string  `json:"filename"`
}

// pdfText is poppler's pdftotext of the document id's content as key downloads it (a tool
// nobody here wrote; never skipped: testsvc.Poppler installs it or fails).
func pdfText(t *testing.T, env *apitest.Env, key, id string) string {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/documents/" + id + "/content", Key: key})
	if r.Status != 200 {
		t.Fatalf("GET document content: %d %s", r.Status, r.Body)
	}
	return pdftest.Must(t, "pdftotext", r.Body, "-enc", "UTF-8") // lines kept: the product line's shape is tested
}

// TestAdvice_Document: the protocol PDF. Catches a document filed with the wrong type, name or
// contract, the record not pointing to it (or its version not moving), no
// advice_record.updated, the record's fields or the advisor missing from the PDF, umlauts
// lost, the product line in another shape than the template's contract, a route that needs
// only one of its two scopes.
func TestAdvice_Document(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	advisor := env.NewUser(t, co, "agent") // "Test agent"
	contact := newContact(t, env, co.ID, "Müßig", nil)
	contract := newContract(t, env, co.Secret, contact)
	key := co.Secret
	rec := create(t, env, key, body(contact, map[string]any{"contractId": contract, "advisorId": advisor.ID.String(),
		"subject": "Absicherung des Hausrats nach Umzug in die Gärtnerstraße", "channel": "phone",
		"customerWishes": "Fahrräder mitversichern", "customerNeeds": "Wohnung 85 m²", "advice": "Hausrat mit Fahrradbaustein",
		"reasons": "Größter Leistungsumfang", "adviceWaived": true, "notes": "Rückruf im März",
		"products": []map[string]any{{"insurer": "Württembergische", "product": "Hausrat Premium", "contractType": "130",
			"premium": "1234.50", "recommended": true, "chosen": true}}}))
	path := "/advice-records/" + rec.ID + "/document"

	r := env.Do(t, apitest.Request{Method: "POST", Path: path, Key: key})
	if r.Status != 201 {
		t.Fatalf("render: %d %s", r.Status, r.Body)
	}
	var doc document
	r.Decode(t, &doc)
	if r.Header.Get("Location") != "/api/public/v1/documents/"+doc.ID {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}
	if doc.Type != "advice_documentation" || doc.ContactID != contact || doc.Contract == nil || *doc.Contract != contract ||
		doc.Filename != "Beratungsprotokoll 30.11.2026.pdf" {
		t.Errorf("document %+v", doc)
	}
	after := env.Do(t, apitest.Request{Path: "/advice-records/" + rec.ID, Key: key})
	var got record
	after.Decode(t, &got)
	if got.DocumentID == nil || *got.DocumentID != doc.ID || after.Header.Get("ETag") != `"2"` || got.Status != "draft" {
		t.Errorf("record after rendering %+v (ETag %s)", got, after.Header.Get("ETag"))
	}
	if n := apitest.EventsAbout(t, env, key, "advice_record.updated", rec.ID); n != 1 {
		t.Errorf("%d advice_record.updated, want 1", n)
	}
	text := strings.Join(strings.Fields(pdfText(t, env, key, doc.ID)), " ") // lines broken where the layout wraps
	for _, want := range []string{
		"Absicherung des Hausrats nach Umzug in die Gärtnerstraße",
		"Württembergische – Hausrat Premium (Verbundene Hausratversicherung), Beitrag 1.234,50 €, empfohlen, gewählt",
		"30.11.2026 14:30", "Telefon", "Fahrräder mitversichern", "Wohnung 85 m²", "Hausrat mit Fahrradbaustein",
		"Größter Leistungsumfang", "Rückruf im März", "Test agent", "Müßig",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the protocol lacks %q:\n%s", want, text)
		}
	}
	// A second rendering files a second document and points the record to it.
	again := apitest.Create[document](t, env, key, path, nil)
	if again.ID == doc.ID || get(t, env, key, rec.ID).DocumentID == nil || *get(t, env, key, rec.ID).DocumentID != again.ID {
		t.Errorf("second rendering %s, record points to %v", again.ID, get(t, env, key, rec.ID).DocumentID)
	}
	env.Run(t, []apitest.Case{
		{Name: "advice scope only", Key: co.KeyWithScopes(t, "advice:write"), Method: "POST", Path: path, Status: 403, Problem: "insufficient_scope"},
		{Name: "documents scope only", Key: co.KeyWithScopes(t, "documents:write", "advice:read"), Method: "POST", Path: path,
			Status: 403, Problem: "insufficient_scope"},
		{Name: "both scopes", Key: co.KeyWithScopes(t, "documents:write", "advice:write"), Method: "POST", Path: path, Status: 201},
		{Name: "other company gets 404", Key: b.Secret, Method: "POST", Path: path, Status: 404},
		{Name: "unknown record", Key: key, Method: "POST", Path: "/advice-records/" + uuid.NewString() + "/document", Status: 404},
		{Name: "malformed id", Key: key, Method: "POST", Path: "/advice-records/nope/document", Status: 400, Problem: "invalid_id"},
	})
}

// TestAdvice_DocumentWithoutTemplate: a company whose advice_protocol template the operator
// removed gets 409 template_missing and nothing changes. Catches a 500, or a record pointing to
// a document that was never filed.
func TestAdvice_DocumentWithoutTemplate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	rec := create(t, env, co.Secret, body(newContact(t, env, co.ID, "Ohne", nil), nil))
	if err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		// The operator role is not narrowed to the pinned company: name it.
		_, err := tx.ExecContext(context.Background(), `DELETE FROM document_templates WHERE company_id = $1 AND category = 'advice_protocol'`, co.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	env.Run(t, []apitest.Case{{Name: "no template", Key: co.Secret, Method: "POST", Path: "/advice-records/" + rec.ID + "/document",
		Status: 409, Problem: "template_missing"}})
	if got := get(t, env, co.Secret, rec.ID); got.DocumentID != nil {
		t.Errorf("record points to %s", *got.DocumentID)
	}
}
