package advice

import (
	"strings"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// The protocol PDF (Beratungsprotokoll): the company's advice_protocol template filled with
// the values below. The placeholder names are the contract with app/doctemplates, whose
// default Beratungsprotokoll uses exactly these; the texts are German as the document is.

// ProtocolCategory is the template category the protocol is rendered from.
const ProtocolCategory = "advice_protocol"

// ProtocolDocType is the document type the protocol is filed as.
const ProtocolDocType = "advice_documentation"

// channelLabels are the German names of the channels on the protocol.
var channelLabels = map[string]string{
	"in_person": "persönliches Gespräch",
	"phone":     "Telefon",
	"video":     "Videogespräch",
	"email":     "E-Mail",
	"other":     "Sonstiges",
}

// protocolValues are the placeholder values of a's protocol; advisor is the advising user's
// name ("" when the record names none).
func protocolValues(a *ent.AdviceRecord, advisor string) map[string]string {
	lines := make([]string, len(a.Products))
	for i, p := range a.Products {
		lines[i] = productLine(p)
	}
	waived := "Nein"
	if a.AdviceWaived {
		waived = "Ja"
	}
	channel := channelLabels[string(a.Channel)]
	if channel == "" {
		channel = string(a.Channel)
	}
	return map[string]string{
		"advice.subject":        a.Subject,
		"advice.consultedAt":    a.ConsultedAt.In(httpx.Berlin).Format("02.01.2006 15:04"),
		"advice.channel":        channel,
		"advice.customerWishes": a.CustomerWishes,
		"advice.customerNeeds":  a.CustomerNeeds,
		"advice.advice":         a.Advice,
		"advice.reasons":        a.Reasons,
		"advice.products":       strings.Join(lines, "\n"),
		"advice.waived":         waived,
		"advice.notes":          a.Notes,
		"advisor.name":          advisor,
	}
}

// protocolFilename is the name the protocol is filed under: the day of the consultation in
// Berlin, so two protocols of one record keep one name (the newest is the record's).
func protocolFilename(a *ent.AdviceRecord) string {
	return "Beratungsprotokoll " + a.ConsultedAt.In(httpx.Berlin).Format("02.01.2006") + ".pdf"
}

// productLine is one product on the protocol: "Versicherer – Produkt (Typ), Beitrag 12,34 €,
// empfohlen, gewählt", the parts the product lacks left out. Typ is the German name of the
// contract type (its code when the catalog lacks it).
func productLine(p schematype.AdviceProduct) string {
	var b strings.Builder
	b.WriteString(p.Insurer + " – " + p.Product)
	if p.ContractType != "" {
		name := p.ContractType
		if c, ok := gdv.Sparte(p.ContractType); ok && c.De != "" {
			name = c.De
		}
		b.WriteString(" (" + name + ")")
	}
	if p.Premium != nil {
		b.WriteString(", Beitrag " + p.Premium.German())
	}
	if p.Recommended {
		b.WriteString(", empfohlen")
	}
	if p.Chosen {
		b.WriteString(", gewählt")
	}
	return b.String()
}
