package signatures

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSignatures_Create: a request over a contact document (3 pages) and a standard document
// (the seeded privacy consent with a contact signature field), signed by the contact, the
// company's admin as broker and another person. The merged PDF has every page (pdfinfo), the
// standard document's field moves to its page in the merged PDF and goes to the contact
// signer, each signer gets one German mail with a link of their own over SMTP, the stored copy
// of the mail shows "[entfernt]" instead of the link and took no points, and
// signature_request.created is recorded once. Catches a document left out of the merge, fields
// on the wrong page or signer, a mail to the wrong address or without the link, one link for
// two signers, a link readable through GET /emails/{id}, and points taken for the links.
func TestSignatures_Create(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	doc := upload(t, env, f.co.Secret, f.contact, "Maklervertrag.pdf", render(t, "Maklervertrag", 3))
	std := standardDocuments(t, env, f.co.Secret)["Einwilligung-Datenschutz.pdf"]
	if std == "" {
		t.Fatal("the seeded standard document Einwilligung-Datenschutz.pdf is missing")
	}
	admin := f.co.Admin.ID.String()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/signature-requests", Key: f.co.Secret, Body: map[string]any{
		"contactId": f.contact, "message": "Bitte bis Freitag unterschreiben.",
		"documents": []map[string]any{{"documentId": doc}, {"standardDocumentId": std}},
		"signers": []map[string]any{{"role": "contact"}, {"role": "broker", "userId": admin},
			{"role": "other", "name": "Max Zeuge", "email": "zeuge@example.org"}}}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var got request
	r.Decode(t, &got)
	if r.Header.Get("Location") != "/api/public/v1/signature-requests/"+got.ID || r.Header.Get("ETag") == "" {
		t.Errorf("Location %q, ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
	}
	if got.Status != "pending" || got.Provider != "builtin" || got.Title != "Maklervertrag" || got.ContactID != f.contact ||
		got.Message != "Bitte bis Freitag unterschreiben." || len(got.Documents) != 2 || got.Documents[0].Pages != 3 ||
		got.MailboxID == nil || *got.MailboxID != f.mailbox.ID.String() || got.CreatorID != nil {
		t.Fatalf("request %+v", got)
	}
	if got.PageCount != 3+got.Documents[1].Pages || got.Documents[1].Pages < 1 {
		t.Errorf("pageCount %d, documents %+v", got.PageCount, got.Documents)
	}
	if n := pdfPages(t, env, f.co.ID, got.ID); n != got.PageCount {
		t.Errorf("the merged PDF has %d pages, pageCount %d", n, got.PageCount)
	}
	if len(got.Signers) != 3 {
		t.Fatalf("signers %+v", got.Signers)
	}
	want := [][2]string{{"contact", f.contactEmail}, {"broker", f.co.Admin.Email}, {"other", "zeuge@example.org"}}
	for i, s := range got.Signers {
		if s.Role != want[i][0] || s.Email != want[i][1] || s.Status != "pending" || s.NotifiedAt == nil || s.Name == "" {
			t.Errorf("signer %d: %+v", i, s)
		}
	}
	if got.Signers[0].Name != "Erika Mustermann" || got.Signers[1].UserID == nil || *got.Signers[1].UserID != admin {
		t.Errorf("signers %+v", got.Signers)
	}
	// The privacy consent carries one contact field: on its page in the merged PDF, the contact's.
	if len(got.Fields) == 0 {
		t.Fatal("no fields from the standard document")
	}
	for _, fl := range got.Fields {
		if fl.Signer != 0 || fl.Role != "contact" || fl.Page <= 3 || fl.Page > got.PageCount {
			t.Errorf("field %+v", fl)
		}
	}
	if n := apitest.EventsAbout(t, env, f.co.Secret, "signature_request.created", got.ID); n != 1 {
		t.Errorf("%d signature_request.created, want 1", n)
	}

	// One mail per signer, each with a link of its own.
	mails := received(t, f.srv, 3)
	links := map[string]string{}
	for _, m := range mails {
		if len(m.To) != 1 || m.Subject != "Bitte unterschreiben: Maklervertrag" || !strings.Contains(m.Text, "Bitte bis Freitag unterschreiben.") ||
			!strings.Contains(m.Text, "Der Link gilt bis") {
			t.Errorf("mail to %v, subject %q:\n%s", m.To, m.Subject, m.Text)
			continue
		}
		links[m.To[0].Email] = linkIn(t, m.Text)
	}
	if len(links) != 3 || links[f.contactEmail] == links["zeuge@example.org"] {
		t.Fatalf("links %v", links)
	}
	// The stored copies: link redacted, not linked to the contact, no points.
	var stored []*ent.Email
	env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		stored, err = db.Email.Query().Where(email.SubjectEQ("Bitte unterschreiben: Maklervertrag")).All(ctx)
		return err
	})
	if len(stored) != 3 {
		t.Fatalf("%d stored mails, want 3", len(stored))
	}
	for _, s := range stored {
		var v struct {
			Text *string `json:"text"`
		}
		rr := env.Do(t, apitest.Request{Path: "/emails/" + s.ID.String(), Key: f.co.Secret})
		if rr.Status != 200 {
			t.Fatalf("GET /emails/%s: %d %s", s.ID, rr.Status, rr.Body)
		}
		rr.Decode(t, &v)
		// The e-mail area links a mail to the contacts whose address it goes to: the contact's
		// copy is on its timeline, redacted like every other.
		if v.Text == nil || !strings.Contains(*v.Text, "[entfernt]") || strings.Contains(*v.Text, "/sign/") {
			t.Errorf("stored copy shows %q", deref(v.Text))
		}
		if s.Points != 0 {
			t.Errorf("a link mail took %d points", s.Points)
		}
	}
	// The signer rows keep the SHA-256 of their link's token.
	env.InCompany(t, f.co.ID, func(ctx context.Context, db *ent.Client) error {
		rows, err := db.SignatureSigner.Query().Where(signaturesigner.RequestID(uuid.MustParse(got.ID))).All(ctx)
		for _, s := range rows {
			if len(s.TokenHash) != 32 {
				t.Errorf("signer %s token hash %x", s.ID, s.TokenHash)
			}
		}
		return err
	})
}

// TestSignatures_GeneratedFields: a generated Maklervertrag (fields for contact and broker)
// after a one-page upload, signed by broker then contact, without explicit fields: each field
// goes to the first signer of its role and moves one page on. A company-level key names the
// broker by userId. Explicit fields replace the documents' fields. Catches fields given by
// position instead of role, pages not offset by the documents before, and explicit fields
// merged with the tagged ones.
func TestSignatures_GeneratedFields(t *testing.T) {
	t.Parallel()
	env := setup(t)
	f := newFixture(t, env)
	var tpls struct {
		Data []struct{ ID, Name string }
	}
	rr := env.Do(t, apitest.Request{Path: "/document-templates", Key: f.co.Secret})
	rr.Decode(t, &tpls)
	var tpl string
	for _, d := range tpls.Data {
		if d.Name == "Maklervertrag" {
			tpl = d.ID
		}
	}
	if tpl == "" {
		t.Fatalf("no Maklervertrag template: %s", rr.Body)
	}
	gen := env.Do(t, apitest.Request{Method: "POST", Path: "/documents/generate", Key: f.co.Secret,
		Body: map[string]any{"templateId": tpl, "contactId": f.contact}})
	if gen.Status != 201 {
		t.Fatalf("generate: %d %s", gen.Status, gen.Body)
	}
	var generated struct{ ID string }
	gen.Decode(t, &generated)
	cover := upload(t, env, f.co.Secret, f.contact, "Anschreiben.pdf", render(t, "Anschreiben", 1))
	admin := f.co.Admin.ID.String()
	got := create(t, env, f.co.Secret, map[string]any{"contactId": f.contact, "title": "Ihr Maklervertrag",
		"documents": []map[string]any{{"documentId": cover}, {"documentId": generated.ID}},
		"signers":   []map[string]any{{"role": "broker", "userId": admin}, {"role": "contact"}}})
	roles := map[string]int{}
	for _, fl := range got.Fields {
		roles[fl.Role]++
		wantSigner := map[string]int{"broker": 0, "contact": 1}[fl.Role]
		if fl.Signer != wantSigner || fl.Page < 2 || fl.Page > got.PageCount || fl.X+fl.Width > 1 || fl.Y+fl.Height > 1 {
			t.Errorf("field %+v (pages %d)", fl, got.PageCount)
		}
	}
	if roles["broker"] == 0 || roles["contact"] == 0 || got.Title != "Ihr Maklervertrag" {
		t.Errorf("fields %+v, title %q", got.Fields, got.Title)
	}
	explicit := create(t, env, f.co.Secret, map[string]any{"contactId": f.contact,
		"documents": []map[string]any{{"documentId": generated.ID}},
		"fields":    []map[string]any{{"signer": 0, "page": 1, "x": 0.7, "y": 0.8, "width": 0.3, "height": 0.1}}})
	if len(explicit.Fields) != 1 || explicit.Fields[0].Page != 1 || explicit.Fields[0].Role != "contact" || explicit.Fields[0].X != 0.7 {
		t.Errorf("explicit fields %+v", explicit.Fields)
	}
	if !strings.HasPrefix(explicit.Title, "Maklervertrag") || strings.HasSuffix(explicit.Title, ".pdf") {
		t.Errorf("default title %q", explicit.Title)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
