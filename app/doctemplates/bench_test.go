package doctemplates

import (
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

var benchCompany = &ent.Company{Name: "Makler Müller GmbH", Address: schematype.Address{Street: "Hauptstraße",
	HouseNumber: "1", ZipCode: "20095", City: "Hamburg"}}

// BenchmarkSeedStandardDocuments: what company creation adds to render the two default
// standard documents (once for a company and its sandbox twin).
func BenchmarkSeedStandardDocuments(b *testing.B) {
	values := CompanyValues(benchCompany)
	at := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		for _, d := range DefaultStandardDocuments() {
			if _, err := RenderStandard(d, values, at); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRenderBrokerAgreement: the render step of POST /documents/generate for the
// default Maklervertrag with a contact's values (no database).
func BenchmarkRenderBrokerAgreement(b *testing.B) {
	v := CompanyValues(benchCompany)
	contactValues(v, &ent.Contact{FirstName: "Jürgen", LastName: "Müßig-Öztürk", Groups: schematype.ContactGroups{
		"personal": {"salutation": "Herr"}, "address": {"street": "Königsallee", "houseNumber": "5a", "zipCode": "40212",
			"city": "Düsseldorf"}}}, "")
	userValues(v, "Anna", "Schmidt", "anna@example.com")
	dateValues(v, time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC))
	for b.Loop() {
		if _, err := pdf.Render(brokerAgreementBody, v, pdf.Meta{Title: NameBrokerAgreement}); err != nil {
			b.Fatal(err)
		}
	}
}
