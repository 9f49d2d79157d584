package doctemplates

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// TestDefaults_Valid: every default template passes the operator's checks (markup, known
// placeholders, signature roles, a trial render), has the category the brief gives and the
// signature roles it needs. Catches a typo in a default's placeholder ({{contact.lastname}})
// that would print nothing or 422 on every generation, a default in a category outside the
// spec's seven, and a mandate without the contact's signature field.
func TestDefaults_Valid(t *testing.T) {
	roles := map[string][]string{
		NameBrokerAgreement: {"contact", "broker"}, NamePowerOfAttorney: {"contact"}, NamePrivacy: {"contact"},
		NameAdviceProtocol: {"contact", "broker"}, NameLetter: nil, NameCoverNote: nil, NameFirstInfo: nil,
	}
	seen := map[string]bool{}
	for _, d := range DefaultTemplates() {
		t.Run(d.Name, func(t *testing.T) {
			if err := (NewTemplate{Name: d.Name, Category: d.Category, Body: d.Body}).Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if got := pdf.SignatureRoles(d.Body); !slices.Equal(got, roles[d.Name]) {
				t.Errorf("signature roles %v, want %v", got, roles[d.Name])
			}
		})
		seen[d.Category] = true
	}
	for _, c := range schema.DocumentTemplateCategories {
		if !seen[c] {
			t.Errorf("no default template of category %s", c)
		}
	}
	names := pdf.Placeholders(firstInfoBody)
	for _, n := range names {
		if !strings.HasPrefix(n, "company.") && n != "registerNumber" {
			t.Errorf("Erstinformation uses %s: it is the company's status information, rendered without a contact", n)
		}
	}
	for _, n := range pdf.Placeholders(adviceProtocolBody) {
		if ns, _, _ := strings.Cut(n, "."); ns == "advice" && !slices.Contains(Computed["advice"], n[len("advice."):]) {
			t.Errorf("advice protocol uses %s, which the advice area does not fill", n)
		}
	}
}

// TestDefaults_StandardDocuments: the default standard documents render for a company with
// company data only, the consent with one contact signature field and the Erstinformation
// with none. Catches a standard document whose render needs contact data (unfilled at seed
// time: company creation would fail) and a field without its role.
func TestDefaults_StandardDocuments(t *testing.T) {
	co := CompanyValues(&ent.Company{Name: "Makler Müller GmbH", Address: schematype.Address{Street: "Hauptstraße",
		HouseNumber: "1", ZipCode: "20095", City: "Hamburg"}})
	for _, d := range DefaultStandardDocuments() {
		doc, err := RenderStandard(d, co, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate(); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		want := 0
		if strings.Contains(d.Name, "Einwilligung") {
			want = 1
		}
		if len(doc.Fields) != want {
			t.Errorf("%s: %d fields, want %d", d.Name, len(doc.Fields), want)
		}
		for _, f := range doc.Fields {
			if f.Role != "contact" {
				t.Errorf("%s: field role %q, want contact", d.Name, f.Role)
			}
		}
	}
}

// TestValues: the German formats of computed values. Catches amounts with a decimal point
// (1234.50 €), dates in ISO order, a date of birth shifted by the time zone, a business
// contact without a full name, and a greeting that ignores the salutation.
func TestValues(t *testing.T) {
	dob := "1961-03-01"
	v := map[string]string{}
	contactValues(v, &ent.Contact{FirstName: "Jürgen", LastName: "Müßig-Öztürk", Groups: schematype.ContactGroups{
		"personal": {"salutation": "Herr", "title": "Dr.", "dateOfBirth": dob},
		"address":  {"street": "Königsallee", "houseNumber": "5a", "zipCode": "40212", "city": "Düsseldorf"},
	}}, "+49 211 123")
	want := map[string]string{
		"contact.fullName": "Dr. Jürgen Müßig-Öztürk", "contact.greeting": "Sehr geehrter Herr Dr. Müßig-Öztürk",
		"contact.dateOfBirth": "01.03.1961", "contact.addressLines": "Königsallee 5a\n40212 Düsseldorf",
		"contact.phone": "+49 211 123", "contact.email": "",
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	for _, k := range Computed["contact"] {
		if _, ok := v["contact."+k]; !ok {
			t.Errorf("contact.%s not set: a computed placeholder must never be unfilled", k)
		}
	}
	biz := map[string]string{}
	contactValues(biz, &ent.Contact{CompanyName: "Bäckerei Groß KG"}, "")
	if biz["contact.fullName"] != "Bäckerei Groß KG" || biz["contact.greeting"] != "Sehr geehrte Damen und Herren" {
		t.Errorf("business contact: %q, %q", biz["contact.fullName"], biz["contact.greeting"])
	}

	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	premium, annual := schematype.MustMoney("1234.5"), schematype.MustMoney("-1234567.89")
	freq := contract.PaymentFrequency("half-yearly")
	k := map[string]string{}
	contractValues(k, &ent.Contract{PolicyNumber: "KFZ-1", Type: "050", Status: "active", StartDate: &start,
		Premium: &premium, AnnualPremium: &annual, PaymentFrequency: &freq}, "Allianz Versicherungs-AG")
	for key, w := range map[string]string{"contract.premium": "1.234,50 €", "contract.annualPremium": "-1.234.567,89 €",
		"contract.startDate": "01.01.2025", "contract.endDate": "", "contract.paymentFrequency": "halbjährlich",
		"contract.status": "aktiv", "contract.insurer": "Allianz Versicherungs-AG"} {
		if k[key] != w {
			t.Errorf("%s = %q, want %q", key, k[key], w)
		}
	}
	if k["contract.typeLabel"] == "" || k["contract.typeLabel"] == "050" {
		t.Errorf("typeLabel %q: want the Sparte's German label", k["contract.typeLabel"])
	}
	for _, key := range Computed["contract"] {
		if _, ok := k["contract."+key]; !ok {
			t.Errorf("contract.%s not set", key)
		}
	}

	d := map[string]string{}
	dateValues(d, time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC)) // already 1 January in Berlin
	if d["date.today"] != "01.01.2027" {
		t.Errorf("date.today = %q, want 01.01.2027 (Europe/Berlin)", d["date.today"])
	}
}

// TestPDFName: the default and the extension. Catches a name without .pdf, ".pdf.pdf", and a
// name that becomes longer than 255 characters through the appended extension.
func TestPDFName(t *testing.T) {
	for _, c := range []struct{ given, want string }{
		{"", "Maklervertrag.pdf"}, {"Vertrag Müller", "Vertrag Müller.pdf"}, {"a.PDF", "a.PDF"},
		{strings.Repeat("x", 251), strings.Repeat("x", 251) + ".pdf"},
	} {
		got, err := pdfName(c.given, "Maklervertrag")
		if err != nil || got != c.want {
			t.Errorf("pdfName(%q) = %q, %v; want %q", c.given, got, err, c.want)
		}
	}
	if _, err := pdfName(strings.Repeat("x", 252), "M"); err == nil {
		t.Error("252 characters + .pdf: want too_long")
	}
}

// TestCheckPlaceholders: the names a stored template may use. Catches a typo in a namespace
// passing (contcat.name), a namespaced key the service never fills passing, and a signature
// field of a role no signer has.
func TestCheckPlaceholders(t *testing.T) {
	if bad := checkPlaceholders([]string{"contact.lastName", "subject", "advice.reasons", "date.today"}, []string{"contact", "broker"}); len(bad) != 0 {
		t.Errorf("known names refused: %v", bad)
	}
	bad := checkPlaceholders([]string{"contcat.name", "contact.iban", "x"}, []string{"notary"})
	if len(bad) != 3 {
		t.Errorf("got %d problems, want 3: %v", len(bad), bad)
	}
}

// TestDocumentType: every category files as a document type the Document schema has.
// Catches a category mapped to a type the documents table refuses (a 500 at the insert).
func TestDocumentType(t *testing.T) {
	for _, c := range schema.DocumentTemplateCategories {
		if !slices.Contains(schema.DocumentTypes, DocumentType(c)) {
			t.Errorf("%s -> %s: not a document type", c, DocumentType(c))
		}
	}
	if DocumentType("privacy") != "privacy_consent" || DocumentType("cover_note") != "policy" {
		t.Error("privacy/cover_note mapped wrong")
	}
}
