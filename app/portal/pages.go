package portal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The signed-in pages: what a customer sees (my data, contracts, released documents) and
// where it signs (signatures). Each runs in the transaction signedIn gives it, pinned to the
// customer's contact by the database (role brokerdesk_portal, row-level security) and the ent
// rules; each query also names the session's contact itself, so a page stays the customer's
// own even if a layer below were wrong, and an id of anything else is the same 404 page as an
// id that does not exist. The templates get strings formatted here (German dates and amounts),
// so they need no functions.

// dateLayout is how the pages write a date.
const dateLayout = "02.01.2006"

// germanDate is t as a German date in Berlin ("" for nil).
func germanDate(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.In(httpx.Berlin).Format(dateLayout)
}

// myData is the overview page's data.
type myData struct {
	Name     string
	Address  []string // lines; none when nothing is stored
	Email    string
	Phones   []string
	Birth    string
	IBAN     string // masked
	BIC      string
	Holder   string
	Business bool
}

// overview handles GET /portal/{companyId}/: the customer's own data, with a link to ask for a
// change of each part.
func (m *Module) overview(c *fiber.Ctx) error {
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		v, err := m.contactView(ctx, s)
		if err != nil {
			return err
		}
		d := myData{Name: displayName(v), Business: v.Type == contacts.TypeBusiness}
		if v.Email != nil {
			d.Email = *v.Email
		}
		for _, p := range v.Phones {
			d.Phones = append(d.Phones, p.Number+" ("+phoneTypeLabel(p.Type)+")")
		}
		a := v.Groups["address"]
		if line := strings.TrimSpace(str(a, "street") + " " + str(a, "houseNumber")); line != "" {
			d.Address = append(d.Address, line)
		}
		if line := strings.TrimSpace(str(a, "zipCode") + " " + str(a, "city")); line != "" {
			d.Address = append(d.Address, line)
		}
		if cc := str(a, "country"); cc != "" && cc != "DE" {
			d.Address = append(d.Address, cc)
		}
		if b, err := time.Parse(time.DateOnly, str(v.Groups["personal"], "dateOfBirth")); err == nil {
			d.Birth = b.Format(dateLayout)
		}
		bank := v.Groups["bank"]
		d.IBAN, d.BIC, d.Holder = MaskIBAN(str(bank, "iban")), str(bank, "bic"), str(bank, "accountHolder")
		return m.render(c, fiber.StatusOK, "overview", PageData{Title: "Meine Daten", SignedIn: true, Nav: "data", Data: d})
	})
}

// contactView reads the session's contact with the groups the portal shows (the bank group
// decrypted by the contacts service, which holds the keys).
func (m *Module) contactView(ctx context.Context, s *Session) (contacts.View, error) {
	ct, err := m.d.Contacts.Find(ctx, s.ContactID)
	if err != nil {
		return contacts.View{}, fmt.Errorf("portal: contact %s of session %s: %w", s.ContactID, s.ID, err)
	}
	return m.d.Contacts.View(ct, contacts.Selection{"address": true, "personal": true, "bank": true})
}

// displayName is how the portal names the customer: the company for a business, else first
// and last name.
func displayName(v contacts.View) string {
	if v.Type == contacts.TypeBusiness {
		if n := str(v.Groups["business"], "companyName"); n != "" {
			return n
		}
	}
	return strings.TrimSpace(v.FirstName + " " + v.LastName)
}

// str is the string value of key in a field group ("" when absent or not a string).
func str(g map[string]any, key string) string {
	s, _ := g[key].(string)
	return s
}

// phoneTypeLabels are the German names of the phone types.
var phoneTypeLabels = map[string]string{contacts.PhoneMobile: "Mobil", contacts.PhoneLandline: "Festnetz",
	contacts.PhoneFax: "Fax", contacts.PhoneOther: "Sonstige"}

func phoneTypeLabel(t string) string {
	if l, ok := phoneTypeLabels[t]; ok {
		return l
	}
	return t
}

// contractRow is one contract on the contracts page.
type contractRow struct {
	Insurer, PolicyNumber, Type, Premium, Status, Start, End string
}

// contractStatusLabels are the German names of the contract statuses.
var contractStatusLabels = map[contract.Status]string{contract.StatusActive: "aktiv", contract.StatusOffer: "Angebot",
	contract.StatusApplication: "beantragt", contract.StatusSuspended: "ruhend", contract.StatusCancelled: "gekündigt",
	contract.StatusEnded: "beendet"}

// frequencyLabels are the German names of the payment frequencies, as a premium is read
// ("120,00 € monatlich").
var frequencyLabels = map[contract.PaymentFrequency]string{contract.PaymentFrequencyMonthly: "monatlich",
	contract.PaymentFrequencyQuarterly: "vierteljährlich", contract.PaymentFrequencyHalfYearly: "halbjährlich",
	contract.PaymentFrequencyYearly: "jährlich", contract.PaymentFrequencySingle: "einmalig"}

// contracts handles GET /portal/{companyId}/contracts: every contract of the customer, newest
// start first.
func (m *Module) contracts(c *fiber.Ctx) error {
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		rows, err := tenancy.Client(ctx).Contract.Query().Where(contract.ContactID(s.ContactID)).WithInsurer().
			Order(ent.Desc(contract.FieldStartDate), ent.Asc(contract.FieldPolicyNumber), ent.Asc(contract.FieldID)).All(ctx)
		if err != nil {
			return fmt.Errorf("portal: contracts of %s: %w", s.ContactID, err)
		}
		out := make([]contractRow, 0, len(rows))
		for _, r := range rows {
			row := contractRow{PolicyNumber: r.PolicyNumber, Status: contractStatusLabels[r.Status],
				Start: germanDate(r.StartDate), End: germanDate(r.EndDate), Type: r.Type}
			if sp, ok := gdv.Sparte(r.Type); ok {
				row.Type = sp.De
			}
			if r.Edges.Insurer != nil {
				row.Insurer = r.Edges.Insurer.Name
			}
			if r.Premium != nil {
				row.Premium = r.Premium.German()
				if r.PaymentFrequency != nil {
					row.Premium += " " + frequencyLabels[*r.PaymentFrequency]
				}
			}
			out = append(out, row)
		}
		return m.render(c, fiber.StatusOK, "contracts", PageData{Title: "Meine Verträge", SignedIn: true, Nav: "contracts",
			Data: out})
	})
}

// documentRow is one document on the documents page.
type documentRow struct {
	ID, Filename, Type, Released, Size string
}

// documentTypeLabels are the German names of the document types.
var documentTypeLabels = map[document.Type]string{document.TypeAdviceDocumentation: "Beratungsdokumentation",
	document.TypePolicy: "Police", document.TypeApplication: "Antrag", document.TypeOffer: "Angebot",
	document.TypeInvoice: "Rechnung", document.TypeBrokerAgreement: "Maklervertrag",
	document.TypePowerOfAttorney: "Vollmacht", document.TypePrivacyConsent: "Datenschutzeinwilligung",
	document.TypeCorrespondence: "Schriftverkehr", document.TypeIdentification: "Ausweisdokument",
	document.TypeOther: "Sonstiges"}

// released narrows a document query to what the customer may see: its own documents that
// were released to it (docs/decisions/portal.md). The policy portal_released_documents says
// the same in the database.
func released(q *ent.DocumentQuery, s *Session) *ent.DocumentQuery {
	return q.Where(document.ContactID(s.ContactID), document.ReleasedAtNotNil())
}

// documents handles GET /portal/{companyId}/documents: the customer's released documents,
// most recently released first.
func (m *Module) documents(c *fiber.Ctx) error {
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		rows, err := released(tenancy.Client(ctx).Document.Query(), s).
			Order(ent.Desc(document.FieldReleasedAt), ent.Desc(document.FieldID)).All(ctx)
		if err != nil {
			return fmt.Errorf("portal: documents of %s: %w", s.ContactID, err)
		}
		out := make([]documentRow, 0, len(rows))
		for _, d := range rows {
			out = append(out, documentRow{ID: d.ID.String(), Filename: d.Filename, Type: documentTypeLabels[d.Type],
				Released: germanDate(d.ReleasedAt), Size: germanSize(d.Size)})
		}
		return m.render(c, fiber.StatusOK, "documents", PageData{Title: "Meine Dokumente", SignedIn: true, Nav: "documents",
			Data: out})
	})
}

// germanSize is a file size as the documents page shows it ("1,2 MB", "34 KB").
func germanSize(n int64) string {
	switch {
	case n >= 1_000_000:
		return strings.Replace(fmt.Sprintf("%.1f MB", float64(n)/1e6), ".", ",", 1)
	case n >= 1000:
		return fmt.Sprintf("%d KB", n/1000)
	}
	return fmt.Sprintf("%d Bytes", n)
}

// download handles GET /portal/{companyId}/documents/{documentId}: a released document of the
// customer as an attachment, with the type sniffed at upload (nosniff). Another contact's
// document, one not released, or a malformed id: the 404 page. The content is streamed after
// the transaction ended, checked against its sha256 on the way (documents.Service.Open).
func (m *Module) download(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("documentId"))
	if err != nil {
		return m.notFound(c)
	}
	var d *ent.Document
	err = m.signedIn(c, func(ctx context.Context, s *Session) error {
		d, err = released(tenancy.Client(ctx).Document.Query(), s).Where(document.ID(id)).Only(ctx)
		if ent.IsNotFound(err) {
			return m.notFound(c)
		}
		if err != nil {
			return fmt.Errorf("portal: document %s: %w", id, err)
		}
		return nil
	})
	if err != nil || d == nil { // d is nil when a page (sign-in, 404) was rendered
		return err
	}
	content, err := m.d.Docs.Open(c.UserContext(), d)
	if err != nil { // Open logged why (missing, corrupted, storage not answering)
		return m.render(c, fiber.StatusServiceUnavailable, "message", PageData{Title: "Dokument nicht verfügbar",
			SignedIn: true, Nav: "documents",
			Notice: "Das Dokument kann gerade nicht geladen werden. Bitte versuchen Sie es später erneut."})
	}
	Headers(c)
	return httpx.SendStreamAs(c, d.Filename, d.ContentType, content, d.Size)
}
