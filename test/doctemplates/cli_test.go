package doctemplates

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/doctemplates"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestDocTemplateCLI: `brokerdesk doc-template set` stores a template from a file that the API
// then lists and generates from, a second set of the same name replaces it, `seed` adds back a
// removed default, and bodies with unknown placeholders or broken markup are refused before
// anything is stored. Catches the commands not wired into run, the body file not read, set
// making a second template of the same name, a seed that adds nothing or everything, and a
// template stored with a placeholder nothing will ever fill (every generation a 422).
func TestDocTemplateCLI(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	file := filepath.Join(t.TempDir(), "body.txt")
	write := func(body string) {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# Kündigung\n\n{{contact.fullName}}\nVertrag {{contract.policyNumber}}\n{{grund}}\n\n{{signature:contact}}\n")
	var set doctemplates.TemplateView
	out := env.CLI(t, "doc-template", "set", "--company", co.ID.String(), "--name", "Kündigung", "--category", "letter",
		"--file", file, "--json")
	if err := json.Unmarshal([]byte(out), &set); err != nil {
		t.Fatalf("doc-template set printed %q: %v", out, err)
	}
	listed := templates(t, env, co.Secret)["Kündigung"]
	if listed.ID != set.ID.String() || !slices.Equal(listed.Placeholders, []string{"contact.fullName", "contract.policyNumber", "grund"}) ||
		!slices.Equal(listed.SignatureRoles, []string{"contact"}) {
		t.Fatalf("listed %+v", listed)
	}
	write("# Kündigung\n\n{{contact.fullName}}\n{{grund}}\n")
	env.CLI(t, "doc-template", "set", "--company", co.ID.String(), "--name", "Kündigung", "--category", "other", "--file", file)
	again := templates(t, env, co.Secret)["Kündigung"]
	if again.ID != listed.ID || again.Category != "other" || again.HasSignatureFields {
		t.Errorf("replaced: %+v", again)
	}
	contact := newContact(t, env, co.ID, "Jürgen", "Müßig-Öztürk", nil)
	d := generate(t, env, co.Secret, map[string]any{"templateId": again.ID, "contactId": contact, "variables": map[string]string{"grund": "Umzug"}})
	if d.Type != "other" || d.Filename != "Kündigung.pdf" {
		t.Errorf("generated %+v", d)
	}

	ctx := context.Background()
	for body, code := range map[string]string{
		"{{contact.iban}}":               "unknown_placeholder", // a key the service never fills
		"{{kontakt.name}}":               "unknown_placeholder", // an unknown namespace
		"{{signature:notar}}":            "unknown_placeholder", // nobody signs as notary
		"Hallo {{signature:contact}} da": "invalid_markup",      // a signature box inline
		"{{contact name}}":               "invalid_markup",
	} {
		_, _, err := env.Ops.SetDocTemplate(ctx, co.ID, doctemplates.NewTemplate{Name: "Kaputt", Category: "other", Body: body})
		var inv *errs.Invalid
		if !errors.As(err, &inv) || len(inv.Errors) != 1 || inv.Errors[0].Field != "file" || inv.Errors[0].Code != code {
			t.Errorf("%q: %v (%+v), want file:%s", body, err, inv, code)
		}
	}
	if _, ok := templates(t, env, co.Secret)["Kaputt"]; ok {
		t.Error("a refused template was stored")
	}

	err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM document_templates WHERE company_id = $1 AND name = 'Maklervollmacht'`, co.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var added []doctemplates.TemplateView
	out = env.CLI(t, "doc-template", "seed", "--company", co.ID.String(), "--json")
	if err := json.Unmarshal([]byte(out), &added); err != nil || len(added) != 1 || added[0].Name != "Maklervollmacht" {
		t.Fatalf("doc-template seed printed %q (%v)", out, err)
	}
	var all []doctemplates.TemplateView
	if err := json.Unmarshal([]byte(env.CLI(t, "doc-template", "list", "--company", co.ID.String(), "--json")), &all); err != nil || len(all) != 8 {
		t.Errorf("doc-template list: %d templates (%v), want 8", len(all), err)
	}
}

// TestStandardDocumentCLI: `brokerdesk standard-document add` stores a PDF with its fields
// that the API lists and serves, remove deletes it, seed adds back a removed default, and a
// PDF with JavaScript or fields off the page is refused. Catches the commands not wired, the
// --fields JSON not stored, a hostile PDF stored as a signature source, and remove by name not
// finding the document.
func TestStandardDocumentCLI(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := signing(t, env)
	key := co.KeyWithScopes(t, "signatures:read")
	dir := t.TempDir()
	// A PDF of our own renderer: the seeded Erstinformation.
	first := standardDocs(t, env, key)["Erstinformation nach § 15 VersVermV"]
	pdfFile := filepath.Join(dir, "Vollmacht Blanko.pdf")
	if err := os.WriteFile(pdfFile, content(t, env, key, "/standard-documents/"+first.ID+"/content"), 0o600); err != nil {
		t.Fatal(err)
	}
	var added doctemplates.StandardDocumentView
	out := env.CLI(t, "standard-document", "add", "--company", co.ID.String(), "--name", "Vollmacht (Blanko)", "--file", pdfFile,
		"--fields", `[{"role":"contact","page":1,"x":0.1,"y":0.8,"width":0.35,"height":0.07}]`, "--json")
	if err := json.Unmarshal([]byte(out), &added); err != nil {
		t.Fatalf("standard-document add printed %q: %v", out, err)
	}
	got := standardDocs(t, env, key)["Vollmacht (Blanko)"]
	if got.ID != added.ID.String() || !got.HasSignatureFields || got.Filename != "Vollmacht Blanko.pdf" || got.SizeBytes != first.SizeBytes {
		t.Fatalf("listed %+v", got)
	}
	if body := content(t, env, key, "/standard-documents/"+got.ID+"/content"); int64(len(body)) != got.SizeBytes {
		t.Errorf("content %d bytes", len(body))
	}

	ctx := context.Background()
	js := pdftest.Hand("<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>", "<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\)) >>")
	for name, c := range map[string]struct {
		in   doctemplates.NewStandardDocument
		want string
	}{
		"javascript":      {doctemplates.NewStandardDocument{Name: "JS", Filename: "js.pdf", Content: js}, "file:javascript"},
		"not a pdf":       {doctemplates.NewStandardDocument{Name: "Text", Filename: "t.pdf", Content: []byte("hello")}, "file:not_pdf"},
		"empty file":      {doctemplates.NewStandardDocument{Name: "F", Filename: "f.pdf"}, "file:required"},
		"name with slash": {doctemplates.NewStandardDocument{Name: "a/b", Filename: "f.pdf", Content: []byte("x")}, "name:invalid_character"},
	} {
		_, err := env.Ops.AddStandardDocument(ctx, co.ID, c.in)
		var inv *errs.Invalid
		if !errors.As(err, &inv) || !slices.ContainsFunc(inv.Errors, func(e errs.FieldError) bool { return e.Field+":"+e.Code == c.want }) {
			t.Errorf("%s: %v (%+v), want %s", name, err, inv, c.want)
		}
	}
	_, err := env.Ops.AddStandardDocument(ctx, co.ID, doctemplates.NewStandardDocument{Name: "Off", Filename: "o.pdf",
		Content: content(t, env, key, "/standard-documents/"+first.ID+"/content"),
		Fields:  []schematype.SignatureField{{Role: "contact", Page: 2, X: 0.9, Y: 0.1, Width: 0.2, Height: 0.1}}})
	var inv *errs.Invalid
	if !errors.As(err, &inv) || len(inv.Errors) != 2 {
		t.Errorf("fields off the page: %v (%+v), want page and box refused", err, inv)
	}

	env.CLI(t, "standard-document", "remove", "--company", co.ID.String(), "Vollmacht (Blanko)")
	env.CLI(t, "standard-document", "remove", "--company", co.ID.String(), first.ID)
	if docs := standardDocs(t, env, key); len(docs) != 1 {
		t.Errorf("after remove: %+v", docs)
	}
	var seeded []doctemplates.StandardDocumentView
	out = env.CLI(t, "standard-document", "seed", "--company", co.ID.String(), "--json")
	if err := json.Unmarshal([]byte(out), &seeded); err != nil || len(seeded) != 1 || seeded[0].Name != first.Name {
		t.Fatalf("standard-document seed printed %q (%v)", out, err)
	}
}
