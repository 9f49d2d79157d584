package doctemplates

import (
	"context"
	"fmt"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	entdocument "github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestGenerate_PDF: a broker agreement generated for "Jürgen Müßig-Öztürk" is filed with the
// contact as broker_agreement with both signature fields, and its PDF reads back, umlauts and
// ß included, with embedded fonts and valid for pdfcpu. Catches a document not filed (or
// filed without its signature fields, which a signature request then lacks), a type not
// mapped from the category, text drawn with a core font (umlauts lost, fonts not embedded),
// and a PDF other readers reject.
func TestGenerate_PDF(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	user := env.NewUser(t, co, "manager")
	key := co.UserKey(t, user, "documents:write")
	contact := newContact(t, env, co.ID, "Jürgen", "Müßig-Öztürk", nil)
	tpl := templates(t, env, key)
	d := generate(t, env, key, map[string]any{"templateId": tpl["Maklervertrag"].ID, "contactId": contact})
	if d.ContactID != contact || d.Type != "broker_agreement" || d.Filename != "Maklervertrag.pdf" || d.ContractID != nil {
		t.Errorf("document %+v", d)
	}
	body := content(t, env, key, "/documents/"+d.ID+"/content")
	txt := pdftest.Text(t, body)
	for _, w := range []string{"Maklervertrag", "Jürgen Müßig-Öztürk", "Königsallee 5a", "40212 Düsseldorf", "§ 34d Abs. 1 GewO"} {
		if !strings.Contains(txt, w) {
			t.Errorf("text lacks %q:\n%s", w, txt)
		}
	}
	pdftest.AssertFontsEmbedded(t, body)
	if err := pdf.Validate(body); err != nil {
		t.Errorf("pdfcpu: %v", err)
	}
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		row, err := db.Document.Query().Where(entdocument.ID(uuid.MustParse(d.ID))).Only(ctx)
		if err != nil {
			return err
		}
		if len(row.SignatureFields) != 2 || row.SignatureFields[0].Role != "contact" || row.SignatureFields[1].Role != "broker" ||
			row.SignatureFields[0].Page < 1 || row.SignatureFields[0].Width <= 0 {
			t.Errorf("signature fields %+v", row.SignatureFields)
		}
		return nil
	})

	// A letter: variables in, the acting user's name and today's date (Europe/Berlin) out, a
	// given file name with .pdf appended, filed as correspondence.
	letter := generate(t, env, key, map[string]any{"templateId": tpl["Anschreiben"].ID, "contactId": contact,
		"variables": map[string]string{"subject": "Ihre Kfz-Versicherung", "text": "anbei Ihre Unterlagen."}, "filename": "Brief an Jürgen"})
	if letter.Type != "correspondence" || letter.Filename != "Brief an Jürgen.pdf" {
		t.Errorf("letter %+v", letter)
	}
	txt = pdftest.Text(t, content(t, env, key, "/documents/"+letter.ID+"/content"))
	today := time.Now().In(mustBerlin(t)).Format("02.01.2006")
	for _, w := range []string{"Ihre Kfz-Versicherung", "Sehr geehrter Herr Müßig-Öztürk,", "anbei Ihre Unterlagen.", "Test manager", today} {
		if !strings.Contains(txt, w) {
			t.Errorf("letter lacks %q:\n%s", w, txt)
		}
	}
}

func mustBerlin(t *testing.T) *time.Location {
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestGenerate_Literal: values are printed as they are, never read as placeholders or markup.
// Catches a second expansion pass (a contact named {{company.iban}} pulling other data into
// the PDF, a variable expanding {{contact.lastName}}) and a value starting with "# " turned
// into a heading.
func TestGenerate_Literal(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	contact := newContact(t, env, co.ID, "Eva", "{{company.iban}}", nil)
	tpl := templates(t, env, co.Secret)
	d := generate(t, env, co.Secret, map[string]any{"templateId": tpl["Anschreiben"].ID, "contactId": contact,
		"variables": map[string]string{"subject": "{{contact.lastName}}", "text": "# keine Überschrift\n{{signature:contact}}"}})
	txt := pdftest.Text(t, content(t, env, co.Secret, "/documents/"+d.ID+"/content"))
	for _, w := range []string{"Eva {{company.iban}}", "{{contact.lastName}}", "# keine Überschrift", "{{signature:contact}}"} {
		if !strings.Contains(txt, w) {
			t.Errorf("text lacks the literal %q:\n%s", w, txt)
		}
	}
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		row, err := db.Document.Get(ctx, uuid.MustParse(d.ID))
		if err == nil && len(row.SignatureFields) != 0 {
			t.Errorf("a variable placed a signature field: %+v", row.SignatureFields)
		}
		return err
	})
}

// TestGenerate_Contract: a cover note for a contract prints the contract's data in German
// formats and is filed with the contract. Catches contract.* not filled, amounts and dates
// in English formats, and the document not linked to the contract.
func TestGenerate_Contract(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	contact := newContact(t, env, co.ID, "Jürgen", "Müßig-Öztürk", nil)
	contract := newContract(t, env, co.Secret, contact, "KF-4711")
	tpl := templates(t, env, co.Secret)
	d := generate(t, env, co.Secret, map[string]any{"templateId": tpl["Deckungsbestätigung"].ID, "contactId": contact, "contractId": contract})
	if d.Type != "policy" || d.ContractID == nil || *d.ContractID != contract {
		t.Errorf("document %+v", d)
	}
	txt := pdftest.Text(t, content(t, env, co.Secret, "/documents/"+d.ID+"/content"))
	for _, w := range []string{"KF-4711", "Nordstern Versicherung AG", "01.01.2025", "1.234,50 € (jährlich)", "Jürgen Müßig-Öztürk"} {
		if !strings.Contains(txt, w) {
			t.Errorf("cover note lacks %q:\n%s", w, txt)
		}
	}
}

// TestGenerate_Errors: every bad request is a 422 (or 400, 403) naming what is wrong, and
// none files a document. Catches placeholders printed empty instead of refused, variables
// that are not the template's accepted (or overriding computed values), a contract of another
// contact or a template or contact of another company used, the 255-character bound not
// enforced (also after ".pdf" is appended), a render error that half-writes a document.
func TestGenerate_Errors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	key := a.Secret
	contact := newContact(t, env, a.ID, "Jürgen", "Müßig-Öztürk", nil)
	other := newContact(t, env, a.ID, "Ida", "Anders", nil)
	contractOfOther := newContract(t, env, key, other, "X-1")
	bContact := newContact(t, env, b.ID, "Bea", "Bert", nil)
	tpl, bTpl := templates(t, env, key), templates(t, env, b.Secret)
	letter, cover := tpl["Anschreiben"].ID, tpl["Deckungsbestätigung"].ID
	ok := map[string]string{"subject": "S", "text": "T"}
	body := func(kv ...any) map[string]any {
		m := map[string]any{"templateId": letter, "contactId": contact, "variables": ok}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	post := func(name string, b any, status int, check func(*testing.T, *apitest.Response)) apitest.Case {
		return apitest.Case{Name: name, Key: key, Method: "POST", Path: "/documents/generate", Body: b, Status: status, Check: check}
	}
	env.Run(t, []apitest.Case{
		post("unfilled variables", body("variables", nil), 422,
			apitest.FieldErrors("variables.subject:unfilled_placeholders", "variables.text:unfilled_placeholders")),
		post("unknown and computed variables", body("variables", map[string]string{"subject": "S", "text": "T", "foo": "x",
			"contact.lastName": "y"}), 422, apitest.FieldErrors("variables.contact.lastName:unknown_variables", "variables.foo:unknown_variables")),
		post("a contract template without contract", body("templateId", cover, "variables", nil), 422,
			func(t *testing.T, r *apitest.Response) {
				p := r.Problem(t)
				named := map[string]bool{}
				for _, e := range p.Errors {
					if e.Code != "unfilled_placeholders" || !strings.HasPrefix(e.Field, "variables.contract.") {
						t.Errorf("error %+v", e)
					}
					named[e.Field] = true
				}
				if !named["variables.contract.policyNumber"] || !named["variables.contract.insurer"] {
					t.Errorf("errors %+v", p.Errors)
				}
			}),
		post("an advice protocol outside its advice record", body("templateId", tpl["Beratungsprotokoll"].ID, "variables", nil), 422,
			func(t *testing.T, r *apitest.Response) {
				if !strings.Contains(string(r.Body), "variables.advice.subject") {
					t.Errorf("advice.subject not named: %s", r.Body)
				}
			}),
		post("contract of another contact", body("templateId", cover, "contractId", contractOfOther, "variables", nil), 422,
			apitest.FieldErrors("contractId:unknown_contract")),
		post("unknown contract", body("contractId", uuid.NewString()), 422, apitest.FieldErrors("contractId:unknown_contract")),
		post("template of another company", body("templateId", bTpl["Anschreiben"].ID), 422, apitest.FieldErrors("templateId:unknown_template")),
		post("contact of another company", body("contactId", bContact), 422, apitest.FieldErrors("contactId:unknown_contact")),
		post("filename of 256 characters", body("filename", strings.Repeat("a", 256)), 422, apitest.FieldErrors("filename:too_long")),
		post("filename too long with .pdf", body("filename", strings.Repeat("a", 252)), 422, apitest.FieldErrors("filename:too_long")),
		post("blank filename", body("filename", "  "), 422, apitest.FieldErrors("filename:required")),
		post("ids missing", map[string]any{}, 422, apitest.FieldErrors("templateId:required", "contactId:required")),
		post("ids malformed", body("templateId", "x", "contactId", "y", "contractId", "z"), 422,
			apitest.FieldErrors("templateId:invalid_uuid", "contactId:invalid_uuid", "contractId:invalid_uuid")),
		post("a variable that is not a string", body("variables", map[string]any{"subject": 5}), 422, nil),
		post("too many variables", body("variables", manyVariables(51)), 422, apitest.FieldErrors("variables:too_many")),
		post("unknown member", body("owner", "x"), 422, apitest.FieldErrors("owner:unknown_field")),
		post("malformed JSON", `{"templateId":`, 400, nil),
		{Name: "read scope only", Key: a.KeyWithScopes(t, "documents:read"), Method: "POST", Path: "/documents/generate", Body: body(), Status: 403,
			Problem: "insufficient_scope"},
	})
	for _, c := range []string{contact, other} {
		r := env.Do(t, apitest.Request{Path: "/documents?contactId=" + c, Key: key})
		var p apitest.Page[document]
		r.Decode(t, &p)
		if len(p.Data) != 0 {
			t.Errorf("a refused generation filed %d documents", len(p.Data))
		}
	}
}

func manyVariables(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("v%d", i)] = "x"
	}
	return m
}

// TestGenerate_Visibility: an agent generates for its own contacts only; a contact outside
// its visibility is a 422 unknown_contact, like another company's. Catches the contact read
// outside the request's visibility (a document filed with a contact the agent cannot see).
func TestGenerate_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent, other := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	key := co.UserKey(t, agent)
	mine := newContact(t, env, co.ID, "Mia", "Mein", &agent.ID)
	theirs := newContact(t, env, co.ID, "Tom", "Fremd", &other.ID)
	tpl := templates(t, env, key)
	generate(t, env, key, map[string]any{"templateId": tpl["Maklervollmacht"].ID, "contactId": mine})
	env.Run(t, []apitest.Case{
		{Name: "contact outside the agent's visibility", Key: key, Method: "POST", Path: "/documents/generate", Status: 422,
			Body:  map[string]any{"templateId": tpl["Maklervollmacht"].ID, "contactId": theirs},
			Check: apitest.FieldErrors("contactId:unknown_contact")},
	})
}

// TestGenerate_Idempotency: the same Idempotency-Key returns the same document and files no
// second one. Catches the route mounted without the idempotency middleware.
func TestGenerate_Idempotency(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	contact := newContact(t, env, co.ID, "Jürgen", "Müßig-Öztürk", nil)
	tpl := templates(t, env, co.Secret)
	req := apitest.Request{Method: "POST", Path: "/documents/generate", Key: co.Secret,
		Body:   map[string]any{"templateId": tpl["Maklervollmacht"].ID, "contactId": contact},
		Header: map[string]string{"Idempotency-Key": "gen-" + uuid.NewString()}}
	r1, r2 := env.Do(t, req), env.Do(t, req)
	var d1, d2 document
	r1.Decode(t, &d1)
	r2.Decode(t, &d2)
	if r1.Status != 201 || r2.Status != 201 || d1.ID != d2.ID || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s (replayed %q)", r1.Status, d1.ID, r2.Status, d2.ID, r2.Header.Get("Idempotent-Replayed"))
	}
	var p apitest.Page[document]
	env.Do(t, apitest.Request{Path: "/documents?contactId=" + contact, Key: co.Secret}).Decode(t, &p)
	if len(p.Data) != 1 {
		t.Errorf("%d documents, want 1", len(p.Data))
	}
}

// TestGenerate_Deterministic: the same input at the same clock gives the same bytes. Catches
// the renderer or the service reading the wall clock (or a random id) into the PDF.
func TestGenerate_Deterministic(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)
	env := apitest.New(t, app.WithClock(func() time.Time { return at }))
	co := env.NewCompany(t)
	contact := newContact(t, env, co.ID, "Jürgen", "Müßig-Öztürk", nil)
	tpl := templates(t, env, co.Secret)
	in := map[string]any{"templateId": tpl["Maklervertrag"].ID, "contactId": contact}
	d1, d2 := generate(t, env, co.Secret, in), generate(t, env, co.Secret, in)
	if d1.ID == d2.ID || d1.Sha256 != d2.Sha256 {
		t.Errorf("two generations: %s %s / %s %s", d1.ID, d1.Sha256, d2.ID, d2.Sha256)
	}
	if txt := pdftest.Text(t, content(t, env, co.Secret, "/documents/"+d1.ID+"/content")); !strings.Contains(txt, "08.12.2026") {
		t.Errorf("date.today from the service clock missing:\n%s", txt)
	}
}
