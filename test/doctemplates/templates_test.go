package doctemplates

import (
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestTemplates_List: a new company has the German defaults, listed by name with their
// placeholders and signature roles, and only its own. Catches the seeding left out of company
// creation (or of the sandbox twin), a view that loses placeholders or signature roles, another
// company's templates listed, and the scope check missing.
func TestTemplates_List(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	got := templates(t, env, a.KeyWithScopes(t, "documents:read"))
	want := map[string]string{"Maklervertrag": "broker_agreement", "Maklervollmacht": "power_of_attorney",
		"Datenschutzeinwilligung": "privacy", "Beratungsprotokoll": "advice_protocol", "Anschreiben": "letter",
		"Deckungsbestätigung": "cover_note", "Erstinformation": "other"}
	if len(got) != len(want) {
		t.Errorf("%d templates, want %d: %v", len(got), len(want), got)
	}
	for name, cat := range want {
		if got[name].Category != cat {
			t.Errorf("%s: category %q, want %s", name, got[name].Category, cat)
		}
	}
	if mv := got["Maklervertrag"]; !mv.HasSignatureFields || !slices.Equal(mv.SignatureRoles, []string{"contact", "broker"}) ||
		!slices.Contains(mv.Placeholders, "contact.fullName") {
		t.Errorf("Maklervertrag: %+v", mv)
	}
	if an := got["Anschreiben"]; an.HasSignatureFields || !slices.Contains(an.Placeholders, "subject") || !slices.Contains(an.Placeholders, "text") {
		t.Errorf("Anschreiben: %+v", an)
	}
	sandbox := templates(t, env, a.TestSecret)
	if len(sandbox) != len(want) || sandbox["Maklervertrag"].ID == got["Maklervertrag"].ID {
		t.Errorf("sandbox twin: %d templates, its own rows expected", len(sandbox))
	}
	for _, x := range templates(t, env, b.Secret) {
		if x.ID == got[x.Name].ID {
			t.Errorf("company B lists A's template %s", x.Name)
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: "/document-templates", Status: 403, Problem: "insufficient_scope"},
		{Name: "no credential", Path: "/document-templates", Status: 401},
	})
}

// TestStandardDocuments: the seeded standard documents are listed and downloadable as PDFs
// with the company's name, the consent with a signature field; feature and scope are enforced;
// another company's document is 404. Catches the feature gate missing (standard documents
// without digital_signature), content served for another company's id, a download that is not
// a valid PDF with embedded fonts, and a consent seeded without its contact field.
func TestStandardDocuments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := signing(t, env), signing(t, env)
	key := a.KeyWithScopes(t, "signatures:read")
	docs := standardDocs(t, env, key)
	first, consent := docs["Erstinformation nach § 15 VersVermV"], docs["Einwilligung Datenschutz (Blanko)"]
	if len(docs) != 2 || first.ID == "" || consent.ID == "" || first.HasSignatureFields || !consent.HasSignatureFields ||
		first.Filename != "Erstinformation.pdf" || first.SizeBytes == 0 {
		t.Fatalf("standard documents %+v", docs)
	}
	body := content(t, env, key, "/standard-documents/"+first.ID+"/content")
	if int64(len(body)) != first.SizeBytes {
		t.Errorf("content %d bytes, listed %d", len(body), first.SizeBytes)
	}
	txt := pdftest.Text(t, body)
	company := env.Do(t, apitest.Request{Path: "/company", Key: a.Secret})
	var co struct{ Name string }
	company.Decode(t, &co)
	for _, w := range []string{"Erstinformation nach § 15 VersVermV", co.Name, "Versicherungsombudsmann", "§ 34d Abs. 1"} {
		if !strings.Contains(txt, w) {
			t.Errorf("Erstinformation text lacks %q:\n%s", w, txt)
		}
	}
	pdftest.AssertFontsEmbedded(t, body)
	if err := pdf.Validate(body); err != nil {
		t.Errorf("pdfcpu: %v", err)
	}
	if txt := pdftest.Text(t, content(t, env, key, "/standard-documents/"+consent.ID+"/content")); !strings.Contains(txt, "Art. 9 Abs. 2 lit. a DSGVO") {
		t.Errorf("consent text: %s", txt)
	}
	noFeature := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		{Name: "other company's document is 404", Key: b.Secret, Path: "/standard-documents/" + first.ID + "/content", Status: 404},
		{Name: "other company lists its own", Key: b.Secret, Path: "/standard-documents", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if strings.Contains(string(r.Body), first.ID) || strings.Contains(string(r.Body), consent.ID) {
					t.Error("company B lists A's standard documents")
				}
			}},
		{Name: "bad id", Key: key, Path: "/standard-documents/nope/content", Status: 400},
		{Name: "feature not licensed", Key: noFeature.Secret, Path: "/standard-documents", Status: 403, Problem: "feature_not_licensed"},
		{Name: "feature not licensed (content)", Key: noFeature.Secret, Path: "/standard-documents/" + first.ID + "/content", Status: 403,
			Problem: "feature_not_licensed"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "documents:read"), Path: "/standard-documents", Status: 403, Problem: "insufficient_scope"},
	})
}
