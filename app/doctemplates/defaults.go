package doctemplates

// The product's German defaults: the templates every company gets when it is created (and that
// `brokerdesk doc-template seed` adds back by name), and the standard documents rendered from
// two of them with the company's data. Bodies are in the markup of app/platform/pdf. Texts
// follow what a German Versicherungsmakler uses (§ 34d GewO, §§ 59–62 VVG, § 15 VersVermV,
// Art. 6, 7, 9 DSGVO); a brokerage replaces them with its own through the operator.

// Default is a template as the product ships it.
type Default struct {
	Name     string
	Category string
	Body     string
}

// Default template names: the advice area and the standard documents name them.
const (
	NameBrokerAgreement = "Maklervertrag"
	NamePowerOfAttorney = "Maklervollmacht"
	NamePrivacy         = "Datenschutzeinwilligung"
	NameAdviceProtocol  = "Beratungsprotokoll"
	NameLetter          = "Anschreiben"
	NameCoverNote       = "Deckungsbestätigung"
	NameFirstInfo       = "Erstinformation"
)

// DefaultTemplates are the templates a new company gets, by name.
func DefaultTemplates() []Default {
	return []Default{
		{NameLetter, "letter", letterBody},
		{NameAdviceProtocol, "advice_protocol", adviceProtocolBody},
		{NamePrivacy, "privacy", privacyBody},
		{NameCoverNote, "cover_note", coverNoteBody},
		{NameFirstInfo, "other", firstInfoBody},
		{NameBrokerAgreement, "broker_agreement", brokerAgreementBody},
		{NamePowerOfAttorney, "power_of_attorney", powerOfAttorneyBody},
	}
}

// DefaultStandard is a standard document the product renders for a company from a default
// template: company.* from the company, every other placeholder a line to fill in by hand
// (a blank form).
type DefaultStandard struct {
	Name     string
	Filename string
	Body     string
}

// DefaultStandardDocuments are the standard documents a new company gets, by name.
func DefaultStandardDocuments() []DefaultStandard {
	return []DefaultStandard{
		{"Erstinformation nach § 15 VersVermV", "Erstinformation.pdf", firstInfoBody},
		{"Einwilligung Datenschutz (Blanko)", "Einwilligung-Datenschutz.pdf", privacyBody},
	}
}

// BlankLine is what a blank form prints where a value is written by hand.
const BlankLine = "______________________________"

const brokerAgreementBody = `# Maklervertrag

zwischen

{{contact.fullName}}
{{contact.street}} {{contact.houseNumber}}
{{contact.zipCode}} {{contact.city}}
– nachfolgend „Auftraggeber“ –

und

{{company.name}}
{{company.street}} {{company.houseNumber}}
{{company.zipCode}} {{company.city}}
– nachfolgend „Makler“ –

## § 1 Gegenstand des Vertrags

Der Auftraggeber beauftragt den Makler, ihm Versicherungsverträge zu vermitteln, seine bestehenden Versicherungsverträge zu betreuen und ihn in Versicherungsangelegenheiten zu beraten. Der Makler ist Versicherungsmakler im Sinne von § 59 Abs. 3 VVG mit Erlaubnis nach § 34d Abs. 1 GewO. Er steht im Lager des Auftraggebers und ist an keinen Versicherer gebunden.

## § 2 Umfang des Auftrags

Der Auftrag umfasst die Versicherungssparten, für die der Auftraggeber den Makler im Einzelfall beauftragt, sowie die Verträge, deren Betreuung der Makler übernimmt. Bestehende Verträge betreut der Makler erst, wenn der Versicherer ihn als Betreuer anerkannt hat. Rechts- und Steuerberatung schuldet der Makler nicht.

## § 3 Pflichten des Maklers

- Ermittlung des Versicherungsbedarfs des Auftraggebers anhand seiner Angaben
- Auswahl geeigneten Versicherungsschutzes auf der Grundlage einer hinreichenden Zahl von auf dem Markt angebotenen Verträgen und Versicherern (§ 60 Abs. 1 VVG)
- Beratung und Dokumentation der Beratung vor Vertragsschluss (§§ 61, 62 VVG)
- Prüfung von Versicherungsscheinen, Nachträgen und Beitragsrechnungen
- Unterstützung bei der Meldung und Regulierung von Schäden

## § 4 Pflichten des Auftraggebers

Der Auftraggeber macht dem Makler alle Angaben, die für die Beratung und den Versicherungsschutz erheblich sind, wahrheitsgemäß und vollständig. Er teilt Änderungen, insbesondere von Anschrift, Beruf und versicherten Risiken, unverzüglich mit. Die vorvertragliche Anzeigepflicht gegenüber dem Versicherer (§ 19 VVG) erfüllt der Auftraggeber selbst. Er leitet Schreiben der Versicherer, die ihm unmittelbar zugehen, dem Makler zu, soweit sie dessen Aufgaben betreffen.

## § 5 Vergütung

Der Makler erhält für seine Tätigkeit eine Courtage von den Versicherern, die in den Versicherungsbeiträgen enthalten ist. Eine Vergütung durch den Auftraggeber schuldet dieser nur, wenn sie gesondert in Textform vereinbart ist.

## § 6 Haftung

Der Makler haftet für Schäden aus der Verletzung seiner Pflichten nach den gesetzlichen Vorschriften. Er unterhält eine Berufshaftpflichtversicherung nach § 34d Abs. 5 GewO. Für leicht fahrlässig verursachte Vermögensschäden ist die Haftung auf die Mindestversicherungssumme dieser Berufshaftpflichtversicherung begrenzt; dies gilt nicht für Schäden aus der Verletzung des Lebens, des Körpers oder der Gesundheit und nicht für die Verletzung wesentlicher Vertragspflichten.

## § 7 Datenschutz

Der Makler verarbeitet die personenbezogenen Daten des Auftraggebers zur Erfüllung dieses Vertrags (Art. 6 Abs. 1 lit. b DSGVO). Für die Verarbeitung von Gesundheitsdaten und die Weitergabe an Versicherer gilt die gesonderte Einwilligung des Auftraggebers.

## § 8 Laufzeit und Kündigung

Der Vertrag gilt auf unbestimmte Zeit. Beide Seiten können ihn mit einer Frist von drei Monaten zum Ende eines Kalendermonats in Textform kündigen. Das Recht zur Kündigung aus wichtigem Grund bleibt unberührt.

## § 9 Schlussbestimmungen

Änderungen und Ergänzungen dieses Vertrags bedürfen der Textform. Sollte eine Bestimmung unwirksam sein, bleibt der Vertrag im Übrigen wirksam. Der Auftraggeber bestätigt, die Erstinformation nach § 15 VersVermV vor Abschluss dieses Vertrags erhalten zu haben.

{{contact.city}}, {{date.today}}

{{signature:contact}}
Auftraggeber: {{contact.fullName}}

{{signature:broker}}
Makler: {{company.name}}
`

const powerOfAttorneyBody = `# Maklervollmacht

Vollmachtgeber/in: {{contact.fullName}}
Geburtsdatum: {{contact.dateOfBirth}}
Anschrift: {{contact.street}} {{contact.houseNumber}}, {{contact.zipCode}} {{contact.city}}

Ich bevollmächtige hiermit

{{company.name}}
{{company.street}} {{company.houseNumber}}, {{company.zipCode}} {{company.city}}

(nachfolgend „Makler“), mich in allen meinen Versicherungsangelegenheiten gegenüber Versicherern zu vertreten. Die Vollmacht umfasst insbesondere:

- die Abgabe und Entgegennahme von Willenserklärungen zum Abschluss, zur Änderung, zur Kündigung und zum Widerruf von Versicherungsverträgen
- die Entgegennahme von Versicherungsscheinen, Nachträgen, Beitragsrechnungen und sonstiger Korrespondenz der Versicherer
- die Einholung von Auskünften über bestehende Verträge und Schäden
- die Anmeldung und Begleitung von Schäden; Zahlungen der Versicherer nimmt der Makler nur mit gesonderter Inkassovollmacht entgegen
- die Erteilung von Untervollmachten an Personen mit Erlaubnis nach § 34d GewO

Die Vollmacht gilt, solange der Maklervertrag besteht. Ich kann sie jederzeit in Textform widerrufen.

{{contact.city}}, {{date.today}}

{{signature:contact}}
Vollmachtgeber: {{contact.fullName}}
`

const privacyBody = `# Einwilligung in die Verarbeitung personenbezogener Daten

## Verantwortlicher

{{company.name}}
{{company.street}} {{company.houseNumber}}, {{company.zipCode}} {{company.city}}

## Betroffene Person

{{contact.fullName}}
Geburtsdatum: {{contact.dateOfBirth}}
{{contact.street}} {{contact.houseNumber}}, {{contact.zipCode}} {{contact.city}}

## 1. Personenbezogene Daten

Ich willige ein, dass der Verantwortliche meine personenbezogenen Daten (Name, Anschrift, Kontaktdaten, Geburtsdatum, Angaben zu Beruf, Einkommen und Vermögen sowie Vertrags- und Schadendaten) verarbeitet, soweit dies für die Vermittlung und Betreuung meiner Versicherungsverträge erforderlich ist, und dass er sie hierzu an Versicherer, Maklerpools und Dienstleister für Vergleich und Verwaltung übermittelt (Art. 6 Abs. 1 lit. a DSGVO). Die Verarbeitung zur Erfüllung des Maklervertrags beruht daneben auf Art. 6 Abs. 1 lit. b DSGVO.

## 2. Gesundheitsdaten

Ich willige ausdrücklich ein, dass der Verantwortliche Angaben über meine Gesundheit verarbeitet und an Versicherer und deren Rückversicherer übermittelt, soweit dies für die Beurteilung des Risikos, die Antragstellung und die Prüfung von Leistungen in der Kranken-, Lebens-, Berufsunfähigkeits-, Unfall- und Pflegeversicherung erforderlich ist (Art. 9 Abs. 2 lit. a DSGVO). Angaben bei Ärzten, Krankenhäusern und anderen Stellen, die der Schweigepflicht unterliegen, werden nur mit einer gesonderten Schweigepflichtentbindung erhoben.

## 3. Freiwilligkeit und Widerruf

Diese Einwilligung ist freiwillig. Ich kann sie jederzeit mit Wirkung für die Zukunft gegenüber dem Verantwortlichen widerrufen (Art. 7 Abs. 3 DSGVO); die Rechtmäßigkeit der bis zum Widerruf erfolgten Verarbeitung bleibt unberührt. Ohne die Einwilligung kann der Verantwortliche Verträge, für die diese Daten erforderlich sind, nicht vermitteln oder betreuen.

## 4. Speicherdauer und Rechte

Die Daten werden gespeichert, solange der Maklervertrag besteht, und danach, solange gesetzliche Aufbewahrungsfristen (§ 257 HGB, § 147 AO) es verlangen. Ich habe das Recht auf Auskunft (Art. 15 DSGVO), Berichtigung (Art. 16), Löschung (Art. 17), Einschränkung der Verarbeitung (Art. 18), Datenübertragbarkeit (Art. 20) und Widerspruch (Art. 21) sowie das Recht, mich bei einer Datenschutz-Aufsichtsbehörde zu beschweren (Art. 77 DSGVO).

{{contact.city}}, {{date.today}}

{{signature:contact}}
{{contact.fullName}}
`

const adviceProtocolBody = `# Beratungsprotokoll

Dokumentation der Beratung nach §§ 61, 62 VVG

## Kunde

{{contact.fullName}}
Geburtsdatum: {{contact.dateOfBirth}}
{{contact.street}} {{contact.houseNumber}}, {{contact.zipCode}} {{contact.city}}

## Gespräch

Anlass: {{advice.subject}}
Datum: {{advice.consultedAt}}
Art des Gesprächs: {{advice.channel}}
Berater: {{advisor.name}}, {{company.name}}

## Wünsche des Kunden

{{advice.customerWishes}}

## Bedarf des Kunden

{{advice.customerNeeds}}

## Rat des Maklers

{{advice.advice}}

## Gründe für den Rat

{{advice.reasons}}

## Besprochene Produkte

{{advice.products}}

## Verzicht auf Beratung oder Dokumentation

{{advice.waived}}

## Anmerkungen

{{advice.notes}}

---

Der Kunde erhält eine Abschrift dieses Protokolls.

{{contact.city}}, {{date.today}}

{{signature:contact}}
Kunde: {{contact.fullName}}

{{signature:broker}}
Berater: {{advisor.name}}
`

const letterBody = `{{company.name}} · {{company.address}}

{{contact.fullName}}
{{contact.street}} {{contact.houseNumber}}
{{contact.zipCode}} {{contact.city}}

{{date.today}}

## {{subject}}

{{contact.greeting}},

{{text}}

Mit freundlichen Grüßen

{{user.name}}
{{company.name}}
`

const coverNoteBody = `# Deckungsbestätigung

Wir bestätigen, dass für den nachstehend bezeichneten Vertrag Versicherungsschutz beim genannten Versicherer besteht.

## Versicherungsnehmer

{{contact.fullName}}
{{contact.street}} {{contact.houseNumber}}, {{contact.zipCode}} {{contact.city}}

## Vertrag

Versicherer: {{contract.insurer}}
Sparte: {{contract.typeLabel}}
Versicherungsschein-Nr.: {{contract.policyNumber}}
Versicherungsbeginn: {{contract.startDate}}
Ablauf: {{contract.endDate}}
Beitrag: {{contract.premium}} ({{contract.paymentFrequency}})

Der Umfang des Versicherungsschutzes richtet sich nach den Bedingungen und Vereinbarungen des Versicherungsvertrags; maßgeblich ist allein der Versicherungsschein des Versicherers. Diese Bestätigung begründet keine Ansprüche gegen den Makler.

{{company.city}}, {{date.today}}

{{company.name}}
`

const firstInfoBody = `# Erstinformation nach § 15 VersVermV

## Name und Anschrift

{{company.name}}
{{company.street}} {{company.houseNumber}}
{{company.zipCode}} {{company.city}}

## Status

Wir sind als Versicherungsmakler mit Erlaubnis nach § 34d Abs. 1 der Gewerbeordnung tätig. Die Erlaubnis hat die für uns zuständige Industrie- und Handelskammer erteilt.

## Vermittlerregister

Registrierungsnummer: {{registerNumber}}

Das Vermittlerregister führt der Deutsche Industrie- und Handelskammertag (DIHK) e. V., Breite Straße 29, 10178 Berlin, Telefon 0180 600 585 0 (20 Cent je Anruf aus dem deutschen Festnetz, höchstens 60 Cent je Anruf aus Mobilfunknetzen), www.vermittlerregister.info.

## Beteiligungen

Wir halten keine direkte oder indirekte Beteiligung von mehr als 10 % an den Stimmrechten oder am Kapital eines Versicherungsunternehmens. Kein Versicherungsunternehmen und kein Mutterunternehmen eines Versicherungsunternehmens hält eine solche Beteiligung an unserem Unternehmen.

## Beratung und Vergütung

Wir beraten auf der Grundlage einer objektiven und ausgewogenen Untersuchung einer hinreichenden Zahl von auf dem Markt angebotenen Versicherungsverträgen (§ 60 Abs. 1 VVG). Für die Vermittlung erhalten wir eine Courtage vom Versicherer, die in der Versicherungsprämie enthalten ist.

## Schlichtungsstellen

Versicherungsombudsmann e. V., Postfach 08 06 32, 10006 Berlin, www.versicherungsombudsmann.de

Ombudsmann Private Kranken- und Pflegeversicherung, Postfach 06 02 22, 10052 Berlin, www.pkv-ombudsmann.de
`
