package correspondence

import (
	"slices"
	"strings"
	"text/template"
)

// The catalog of transaction types (GET /correspondence/transaction-types): what a broker asks
// an insurer for, the form fields the request needs, and the German letter a case is
// prefilled with. Letters to German insurers are German whatever the caller's language;
// labels and descriptions follow Accept-Language (de by default, en).

// Form field types.
const (
	FieldString  = "string"
	FieldDate    = "date" // YYYY-MM-DD
	FieldNumber  = "number"
	FieldBoolean = "boolean"
	FieldIBAN    = "iban"
	FieldEmail   = "email"
)

// text is a text in German and English.
type text struct{ De, En string }

func (t text) in(lang string) string {
	if lang == "en" {
		return t.En
	}
	return t.De
}

// Option is one allowed value of a string field: the machine value and its labels.
type Option struct {
	Value string
	Label text
}

// Field is one form field of a transaction type.
type Field struct {
	Key       string
	Label     text
	Type      string
	Required  bool
	MaxLength int      // string fields; 0: no bound beyond the value's type
	Options   []Option // string fields limited to these values
}

// Type is a transaction type: its form fields, the contract types it applies to (none: all)
// and the letter. Subject is the subject's first part (German); Intro and Details are
// text/template texts of the letter around the contract block (data: letter).
type Type struct {
	Key           string
	Label         text
	Description   text
	Fields        []Field
	ContractTypes []string
	Subject       string
	Intro         string
	Details       string

	body *template.Template
}

// field returns the form field with key k.
func (t *Type) field(k string) (Field, bool) {
	i := slices.IndexFunc(t.Fields, func(f Field) bool { return f.Key == k })
	if i < 0 {
		return Field{}, false
	}
	return t.Fields[i], true
}

// appliesTo reports whether the type may be used for a contract of GDV Sparte code.
func (t *Type) appliesTo(code string) bool {
	return len(t.ContractTypes) == 0 || slices.Contains(t.ContractTypes, code)
}

// lookup returns the transaction type with key k.
func lookup(k string) (*Type, bool) {
	i := slices.IndexFunc(catalog, func(t *Type) bool { return t.Key == k })
	if i < 0 {
		return nil, false
	}
	return catalog[i], true
}

// typeKeys are the keys of the catalog in its order.
func typeKeys() []string {
	out := make([]string, len(catalog))
	for i, t := range catalog {
		out[i] = t.Key
	}
	return out
}

// frame is the letter around a type's Intro and Details: salutation, the policyholder and the
// contracts the insurer needs to find the case, the request to answer in the same thread (so
// the reply lands on the case's thread and the contact's timeline), the signature.
const frame = `Sehr geehrte Damen und Herren,

{{template "intro" .}}

Versicherungsnehmer: {{.Contact.Name}}
{{- with .Contact.BirthDate}}
Geburtsdatum: {{.}}{{end}}
{{- with .Contact.Address}}
Anschrift laut unseren Unterlagen: {{.}}{{end}}
{{if eq (len .Contracts) 1}}Vertrag{{else}}Verträge{{end}}:
{{- range .Contracts}}
- Versicherungsschein-Nr. {{.PolicyNumber}}{{with .TypeLabel}} ({{.}}){{end}}{{end}}
{{with trim (include "details" .)}}
{{.}}
{{end}}
Bitte antworten Sie auf diese E-Mail, damit Ihre Antwort dem Vorgang zugeordnet wird.

Mit freundlichen Grüßen
{{with .Sender}}{{.}}
{{end}}{{.Company}}`

// Contract types (GDV Sparten) of life and motor insurance.
var (
	lifeTypes  = []string{"010", "011", "012", "013", "014"}
	motorTypes = []string{"050", "051", "052", "053", "054", "055", "059"}
)

var validFrom = Field{Key: "validFrom", Label: text{"Gültig ab", "Valid from"}, Type: FieldDate}

// catalog is the transaction types in the order the catalog lists them.
var catalog = []*Type{
	{
		Key: "address_change", Label: text{"Adressänderung", "Address change"},
		Description: text{"Neue Anschrift des Versicherungsnehmers an den Versicherer melden.",
			"Report the policyholder's new address to the insurer."},
		Fields: []Field{
			{Key: "street", Label: text{"Straße und Hausnummer", "Street and number"}, Type: FieldString, Required: true, MaxLength: 200},
			{Key: "zipCode", Label: text{"PLZ", "Postcode"}, Type: FieldString, Required: true, MaxLength: 10},
			{Key: "city", Label: text{"Ort", "City"}, Type: FieldString, Required: true, MaxLength: 100},
			{Key: "country", Label: text{"Land", "Country"}, Type: FieldString, MaxLength: 100},
			{Key: "validFrom", Label: text{"Gültig ab", "Valid from"}, Type: FieldDate, Required: true},
		},
		Subject: "Adressänderung",
		Intro: `unser Mandant ist umgezogen. Wir bitten Sie, die Anschrift in den unten genannten Verträgen ` +
			`zum {{.Form.validFrom}} zu ändern.`,
		Details: `Neue Anschrift:
{{.Form.street}}
{{.Form.zipCode}} {{.Form.city}}{{with .Form.country}}
{{.}}{{end}}

Bitte prüfen Sie, ob sich durch den Umzug Auswirkungen auf Beitrag oder Versicherungsschutz ergeben ` +
			`(z. B. in der Hausrat- oder Wohngebäudeversicherung), und teilen Sie uns diese mit.`,
	},
	{
		Key: "bank_details_change", Label: text{"Änderung der Bankverbindung (SEPA-Lastschriftmandat)", "Bank details change (SEPA direct debit mandate)"},
		Description: text{"Beiträge künftig von einem neuen Konto einziehen lassen.",
			"Have premiums collected from a new bank account."},
		Fields: []Field{
			{Key: "accountHolder", Label: text{"Kontoinhaber", "Account holder"}, Type: FieldString, Required: true, MaxLength: 200},
			{Key: "iban", Label: text{"IBAN", "IBAN"}, Type: FieldIBAN, Required: true},
			{Key: "bic", Label: text{"BIC", "BIC"}, Type: FieldString, MaxLength: 11},
			{Key: "bankName", Label: text{"Kreditinstitut", "Bank"}, Type: FieldString, MaxLength: 100},
			validFrom,
		},
		Subject: "Änderung der Bankverbindung",
		Intro: `unser Mandant hat seine Bankverbindung geändert. Bitte ziehen Sie die Beiträge der unten ` +
			`genannten Verträge {{with .Form.validFrom}}ab dem {{.}}{{else}}ab sofort{{end}} von folgendem Konto ein:

Kontoinhaber: {{.Form.accountHolder}}
IBAN: {{.Form.iban}}{{with .Form.bic}}
BIC: {{.}}{{end}}{{with .Form.bankName}}
Kreditinstitut: {{.}}{{end}}`,
		Details: `Sofern Sie hierfür ein neues SEPA-Lastschriftmandat benötigen, senden Sie uns bitte Ihr ` +
			`Formular zu; wir lassen es vom Kontoinhaber unterzeichnen.`,
	},
	{
		Key: "termination", Label: text{"Kündigung", "Contract termination"},
		Description: text{"Verträge im Auftrag des Kunden kündigen, fristgerecht oder außerordentlich.",
			"Terminate contracts on the customer's behalf, with notice or extraordinarily."},
		Fields: []Field{
			{Key: "terminationDate", Label: text{"Kündigung zum (leer: nächstmöglicher Zeitpunkt)", "Terminate as of (empty: next possible date)"}, Type: FieldDate},
			{Key: "reason", Label: text{"Kündigungsgrund", "Reason"}, Type: FieldString, MaxLength: 1000},
			{Key: "extraordinary", Label: text{"Außerordentliche Kündigung", "Extraordinary termination"}, Type: FieldBoolean},
		},
		Subject: "Kündigung",
		Intro: `im Auftrag und mit Vollmacht unseres Mandanten kündigen wir die unten genannten Verträge ` +
			`{{if .Form.extraordinary}}außerordentlich {{end}}{{with .Form.terminationDate}}zum {{.}}` +
			`{{else}}fristgerecht zum nächstmöglichen Zeitpunkt{{end}}.`,
		Details: `{{with .Form.reason}}Grund der Kündigung: {{.}}

{{end}}Bitte bestätigen Sie uns die Kündigung schriftlich unter Angabe des Vertragsendes. Eine Kopie ` +
			`der Maklervollmacht senden wir Ihnen auf Anforderung gern zu.`,
	},
	{
		Key: "document_request", Label: text{"Dokumentenanforderung", "Document request"},
		Description: text{"Versicherungsschein-Kopie, Beitragsrechnung, Bedingungen oder Bescheinigungen anfordern.",
			"Request a copy of the policy, a premium invoice, the terms or certificates."},
		Fields: []Field{
			{Key: "policyCopy", Label: text{"Kopie des Versicherungsscheins", "Copy of the policy"}, Type: FieldBoolean},
			{Key: "premiumInvoice", Label: text{"Aktuelle Beitragsrechnung", "Current premium invoice"}, Type: FieldBoolean},
			{Key: "termsAndConditions", Label: text{"Versicherungsbedingungen", "Terms and conditions"}, Type: FieldBoolean},
			{Key: "premiumCertificate", Label: text{"Beitragsbescheinigung (z. B. für die Steuererklärung)", "Premium certificate (e.g. for the tax return)"}, Type: FieldBoolean},
			{Key: "otherDocuments", Label: text{"Sonstige Unterlagen", "Other documents"}, Type: FieldString, MaxLength: 1000},
		},
		Subject: "Anforderung von Vertragsunterlagen",
		Intro:   `für die unten genannten Verträge bitten wir Sie um Zusendung folgender Unterlagen:`,
		Details: `{{if .Form.policyCopy}}- Kopie des Versicherungsscheins einschließlich aller Nachträge
{{end}}{{if .Form.premiumInvoice}}- aktuelle Beitragsrechnung
{{end}}{{if .Form.termsAndConditions}}- zugrunde liegende Versicherungsbedingungen
{{end}}{{if .Form.premiumCertificate}}- Beitragsbescheinigung für das vergangene Kalenderjahr
{{end}}{{with .Form.otherDocuments}}- {{.}}
{{end}}{{if not (or .Form.policyCopy .Form.premiumInvoice .Form.termsAndConditions .Form.premiumCertificate .Form.otherDocuments)}}- die aktuellen Vertragsunterlagen
{{end}}
Gern können Sie uns die Unterlagen als Antwort auf diese E-Mail senden.`,
	},
	{
		Key: "name_change", Label: text{"Namensänderung", "Name change"},
		Description: text{"Neuen Namen des Versicherungsnehmers melden (z. B. nach Heirat).",
			"Report the policyholder's new name (after a marriage, for instance)."},
		Fields: []Field{
			{Key: "newLastName", Label: text{"Neuer Nachname", "New last name"}, Type: FieldString, Required: true, MaxLength: 100},
			{Key: "newFirstName", Label: text{"Neuer Vorname (falls geändert)", "New first name (if changed)"}, Type: FieldString, MaxLength: 100},
			{Key: "reason", Label: text{"Anlass (z. B. Heirat)", "Occasion (e.g. marriage)"}, Type: FieldString, MaxLength: 200},
			validFrom,
		},
		Subject: "Namensänderung",
		Intro: `der Name unseres Mandanten hat sich {{with .Form.reason}}({{.}}) {{end}}geändert` +
			`{{with .Form.validFrom}}, gültig ab {{.}}{{end}}. Bitte ändern Sie den Namen in den unten genannten Verträgen.`,
		Details: `Neuer Name: {{with .Form.newFirstName}}{{.}}{{else}}{{$.Contact.FirstName}}{{end}} {{.Form.newLastName}}

Einen Nachweis (z. B. eine Kopie der Heiratsurkunde) reichen wir auf Anforderung nach.`,
	},
	{
		Key: "payment_frequency_change", Label: text{"Änderung der Zahlweise", "Payment frequency change"},
		Description: text{"Zahlweise der Beiträge umstellen (monatlich, vierteljährlich, halbjährlich, jährlich).",
			"Change how often premiums are paid (monthly, quarterly, half-yearly, yearly)."},
		Fields: []Field{
			{Key: "paymentFrequency", Label: text{"Neue Zahlweise", "New payment frequency"}, Type: FieldString, Required: true,
				Options: []Option{{"monthly", text{"monatlich", "monthly"}}, {"quarterly", text{"vierteljährlich", "quarterly"}},
					{"half-yearly", text{"halbjährlich", "half-yearly"}}, {"yearly", text{"jährlich", "yearly"}}}},
			validFrom,
		},
		Subject: "Änderung der Zahlweise",
		Intro: `unser Mandant wünscht für die unten genannten Verträge die Umstellung auf {{.Form.paymentFrequency}}e ` +
			`Zahlweise {{with .Form.validFrom}}ab dem {{.}}{{else}}zur nächsten Fälligkeit{{end}}.`,
		Details: `Bitte senden Sie uns einen Nachtrag mit dem neuen Beitrag und teilen Sie uns mit, ob sich ` +
			`ein Ratenzahlungszuschlag ändert.`,
	},
	{
		Key: "broker_mandate", Label: text{"Maklerwechsel / Übertragung der Betreuung", "Change of broker / transfer of servicing"},
		Description: text{"Dem Versicherer die Maklervollmacht anzeigen und die Übertragung der Verträge in den eigenen Bestand beantragen.",
			"Notify the insurer of the broker mandate and ask for the contracts to be transferred to the brokerage."},
		Fields: []Field{
			{Key: "mandateDate", Label: text{"Datum der Maklervollmacht", "Date of the broker mandate"}, Type: FieldDate, Required: true},
			{Key: "previousBroker", Label: text{"Bisheriger Vermittler", "Previous intermediary"}, Type: FieldString, MaxLength: 200},
			{Key: "brokerNumber", Label: text{"Unsere Vermittlernummer bei Ihnen", "Our intermediary number with the insurer"}, Type: FieldString, MaxLength: 50},
		},
		Subject: "Maklerwechsel – Übertragung der Betreuung",
		Intro: `unser Mandant hat uns mit Maklervertrag und Maklervollmacht vom {{.Form.mandateDate}} mit der ` +
			`Betreuung seiner Versicherungsverträge beauftragt{{with .Form.previousBroker}}; die Betreuung durch ` +
			`{{.}} endet damit{{end}}.`,
		Details: `Wir bitten Sie, die unten genannten Verträge in unseren Bestand zu übertragen` +
			`{{with .Form.brokerNumber}} (Vermittlernummer {{.}}){{end}}, uns künftig als betreuenden Makler zu ` +
			`führen und uns die Übertragung zu bestätigen. Eine Kopie der Maklervollmacht erhalten Sie als Anlage ` +
			`oder auf Anforderung.`,
	},
	{
		Key: "contract_change", Label: text{"Vertragsänderung / Beitragsanpassung", "Contract change / premium adjustment"},
		Description: text{"Änderung des Versicherungsumfangs, der Versicherungssumme oder des Beitrags beantragen.",
			"Ask for a change of cover, sum insured or premium."},
		Fields: []Field{
			{Key: "changeDescription", Label: text{"Gewünschte Änderung", "Requested change"}, Type: FieldString, Required: true, MaxLength: 2000},
			{Key: "effectiveDate", Label: text{"Gültig ab", "Effective from"}, Type: FieldDate},
			{Key: "requestOffer", Label: text{"Vorab ein Angebot anfordern", "Ask for an offer first"}, Type: FieldBoolean},
		},
		Subject: "Vertragsänderung",
		Intro: `für die unten genannten Verträge wünscht unser Mandant folgende Änderung{{with .Form.effectiveDate}} zum {{.}}{{end}}:

{{.Form.changeDescription}}`,
		Details: `{{if .Form.requestOffer}}Bitte senden Sie uns vor der Umstellung ein Angebot mit dem neuen Beitrag zu.` +
			`{{else}}Bitte bestätigen Sie uns die Änderung mit einem Nachtrag und teilen Sie uns den neuen Beitrag mit.{{end}}`,
	},
	{
		Key: "premium_exemption", Label: text{"Beitragsfreistellung", "Premium exemption"},
		Description: text{"Lebens- oder Rentenversicherung beitragsfrei stellen.",
			"Make a life or pension insurance paid-up (no further premiums)."},
		Fields: []Field{
			{Key: "exemptionDate", Label: text{"Beitragsfrei ab (leer: nächstmöglicher Zeitpunkt)", "Paid-up from (empty: next possible date)"}, Type: FieldDate},
			{Key: "requestValues", Label: text{"Werte vorab mitteilen lassen", "Ask for the values first"}, Type: FieldBoolean},
		},
		ContractTypes: lifeTypes,
		Subject:       "Beitragsfreistellung",
		Intro: `unser Mandant möchte die unten genannten Verträge {{with .Form.exemptionDate}}zum {{.}}` +
			`{{else}}zum nächstmöglichen Zeitpunkt{{end}} beitragsfrei stellen.`,
		Details: `{{if .Form.requestValues}}Bitte teilen Sie uns vorab die beitragsfreie Versicherungssumme bzw. Rente ` +
			`sowie den aktuellen Rückkaufswert mit; die Freistellung soll erst nach unserer Bestätigung erfolgen.` +
			`{{else}}Bitte bestätigen Sie uns die Beitragsfreistellung mit der beitragsfreien Versicherungssumme bzw. Rente.{{end}}`,
	},
	{
		Key: "vehicle_change", Label: text{"Fahrzeugwechsel", "Vehicle change"},
		Description: text{"Kfz-Versicherung auf ein neues Fahrzeug übertragen.",
			"Move a motor insurance to a new vehicle."},
		Fields: []Field{
			{Key: "changeDate", Label: text{"Datum des Fahrzeugwechsels", "Date of the change"}, Type: FieldDate, Required: true},
			{Key: "licensePlate", Label: text{"Amtliches Kennzeichen", "Licence plate"}, Type: FieldString, Required: true, MaxLength: 15},
			{Key: "vehicle", Label: text{"Hersteller und Modell", "Make and model"}, Type: FieldString, MaxLength: 100},
			{Key: "hsnTsn", Label: text{"HSN/TSN", "Manufacturer and type key (HSN/TSN)"}, Type: FieldString, MaxLength: 20},
			{Key: "vin", Label: text{"Fahrzeug-Identifizierungsnummer (FIN)", "Vehicle identification number (VIN)"}, Type: FieldString, MaxLength: 17},
		},
		ContractTypes: motorTypes,
		Subject:       "Fahrzeugwechsel",
		Intro: `unser Mandant hat zum {{.Form.changeDate}} das Fahrzeug gewechselt. Bitte übertragen Sie den ` +
			`Versicherungsschutz der unten genannten Verträge auf das neue Fahrzeug:

Kennzeichen: {{.Form.licensePlate}}{{with .Form.vehicle}}
Fahrzeug: {{.}}{{end}}{{with .Form.hsnTsn}}
HSN/TSN: {{.}}{{end}}{{with .Form.vin}}
FIN: {{.}}{{end}}`,
		Details: `Bitte senden Sie uns den Nachtrag mit dem neuen Beitrag zu.`,
	},
}

// init parses each type's letter once: a template error is a bug of this file, found by any
// test that starts the server.
func init() {
	for _, t := range catalog {
		tpl := template.New("letter").Option("missingkey=zero")
		tpl.Funcs(template.FuncMap{
			"trim": strings.TrimSpace,
			// include renders a named template into a string (for trimming an empty Details).
			"include": func(name string, data any) (string, error) {
				var b strings.Builder
				err := tpl.ExecuteTemplate(&b, name, data)
				return b.String(), err
			},
		})
		template.Must(tpl.Parse(frame))
		template.Must(tpl.New("intro").Parse(t.Intro))
		template.Must(tpl.New("details").Parse(t.Details))
		t.body = tpl.Lookup("letter")
	}
}
