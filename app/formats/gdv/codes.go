package gdv

import (
	"slices"
	"strings"
)

// Code is a GDV code with its labels. The code is kept as the file had it (trimmed); De and
// En are empty for a code the GDV lists do not know.
type Code struct {
	Code string `json:"code"`
	De   string `json:"de,omitempty"`
	En   string `json:"en,omitempty"`
}

// Known reports whether the code is in its GDV list.
func (c Code) Known() bool { return c.De != "" }

// codeList is a GDV code list ("Anlage"), sorted by code. Lists are read-only data.
type codeList []Code

func (l codeList) find(code string) (Code, bool) {
	i, ok := slices.BinarySearchFunc(l, code, func(c Code, s string) int { return strings.Compare(c.Code, s) })
	if !ok {
		return Code{Code: code}, false
	}
	return l[i], true
}

// Role is what a person is to a contract, from the GDV Adresskennzeichen ("Partnerrolle"),
// with a stable English kind for the importer.
type Role struct {
	Code
	Kind string `json:"kind"`
}

// Role kinds. The GDV repeats its roles for other contexts (31-56 and 61-86: the same roles
// for a second and third context); they map to the same kinds.
const (
	RolePolicyholder    = "policyholder"      // 01 Versicherungsnehmer
	RoleCreditor        = "creditor"          // 02 Sicherungsgläubiger
	RolePayer           = "payer"             // 03 Beitragszahler
	RoleAuthorizedAgent = "authorized_agent"  // 04 Zustellungsbevollmächtigter
	RoleBeneficiary     = "beneficiary"       // 05 Leistungsempfänger
	RoleCorrespondent   = "correspondent"     // 06 Korrespondenzpartner
	RoleInsuredPerson   = "insured_person"    // 09 Versicherte Person
	RoleVehicleOwner    = "vehicle_owner"     // 11 Fahrzeughalter
	RoleDriver          = "driver"            // 12 Fahrer
	RoleBroker          = "broker"            // 14 Vermittler
	RolePremiumRefundee = "premium_refundee"  // 08 Empfänger Beitragsrückerstattung
	RoleCoInsuredPerson = "co_insured_person" // B1/E1/H1 Mitversicherte Person
	RoleOther           = "other"
	RoleUnknown         = "unknown"
)

// roleCodes is the Adresskennzeichen list for the roles of a portfolio (the claims roles 13-26 included so a
// claims delivery reads as well).
var roleCodes = codeList{
	{"01", "Versicherungsnehmer", "Policyholder"},
	{"02", "Sicherungsgläubiger", "Secured creditor"},
	{"03", "Beitragszahler", "Premium payer"},
	{"04", "Zustellungsbevollmächtigter", "Authorised recipient"},
	{"05", "Leistungsempfänger", "Benefit recipient"},
	{"06", "Korrespondenzpartner", "Correspondence partner"},
	{"07", "GV-Partner", "Business event partner"},
	{"08", "Empfänger Beitragsrückerstattung", "Premium refund recipient"},
	{"09", "Versicherte Person", "Insured person"},
	{"10", "SFR-Berechtigter", "No-claims bonus holder"},
	{"11", "Fahrzeughalter", "Vehicle owner"},
	{"12", "Fahrer", "Driver"},
	{"13", "Abschleppfirma", "Towing company"},
	{"14", "Vermittler", "Broker"},
	{"15", "Anspruchsteller", "Claimant"},
	{"16", "Mietwagenfirma", "Car rental company"},
	{"17", "Polizeidienststelle", "Police station"},
	{"18", "Zeuge", "Witness"},
	{"19", "Werkstatt", "Garage"},
	{"20", "Schadenmanager", "Claims manager"},
	{"21", "Sachverständiger", "Loss adjuster"},
	{"22", "Melder (Notruf meldende Person)", "Reporting person"},
	{"23", "Rettungsleitstelle", "Emergency control centre"},
	{"24", "Autobahnmeisterei", "Motorway maintenance office"},
	{"25", "Pannenhelfer", "Breakdown service"},
	{"26", "Assisteur", "Assistance provider"},
	{"B1", "Mitversicherte Person", "Co-insured person"},
	{"B2", "Bezugsberechtigter im Todesfall", "Beneficiary on death"},
	{"B3", "Bezugsberechtigter im Erlebensfall", "Beneficiary on survival"},
	{"B4", "Wirtschaftlich Berechtigter", "Beneficial owner"},
	{"B5", "Vertrauensperson", "Person of trust"},
	{"B6", "Kontoinhaber", "Account holder"},
	{"B7", "Gesetzlicher Vertreter VN", "Legal representative of the policyholder"},
	{"B8", "Gesetzlicher Vertreter VP", "Legal representative of the insured person"},
}

// RoleOf returns the Role of an Adresskennzeichen ("01", "09", "31" …); ok is false for a code
// the GDV list does not have (Kind is then "unknown").
func RoleOf(code string) (r Role, ok bool) { return roleOf(code) }

// roleOf maps an Adresskennzeichen to its Role. 31-56 and 61-86 are 01-26 in another context;
// E1-E8 and H1-H8 are B1-B8.
func roleOf(code string) (Role, bool) {
	base := code
	if len(code) == 2 && code[0] >= '3' && code[0] <= '8' && code[1] >= '0' && code[1] <= '9' {
		n := int(code[0]-'0')*10 + int(code[1]-'0')
		switch {
		case n >= 31 && n <= 56:
			n -= 30
		case n >= 61 && n <= 86:
			n -= 60
		}
		base = string([]byte{byte('0' + n/10), byte('0' + n%10)})
	}
	if len(code) == 2 && (code[0] == 'E' || code[0] == 'H') {
		base = "B" + code[1:]
	}
	c, ok := roleCodes.find(base)
	c.Code = code
	r := Role{Code: c, Kind: RoleUnknown}
	if !ok {
		return r, false
	}
	switch base {
	case "01":
		r.Kind = RolePolicyholder
	case "02":
		r.Kind = RoleCreditor
	case "03":
		r.Kind = RolePayer
	case "04":
		r.Kind = RoleAuthorizedAgent
	case "05":
		r.Kind = RoleBeneficiary
	case "06":
		r.Kind = RoleCorrespondent
	case "08":
		r.Kind = RolePremiumRefundee
	case "09":
		r.Kind = RoleInsuredPerson
	case "11":
		r.Kind = RoleVehicleOwner
	case "12":
		r.Kind = RoleDriver
	case "14":
		r.Kind = RoleBroker
	case "B1":
		r.Kind = RoleCoInsuredPerson
	default:
		r.Kind = RoleOther
	}
	return r, true
}

// salutationCodes is the Anredeschlüssel of 0100.
var salutationCodes = codeList{
	{"0", "ohne Anrede", "No salutation"},
	{"1", "Herr", "Mr"},
	{"2", "Frau", "Ms"},
	{"3", "Firma", "Company"},
	{"4", "Herr und Frau", "Mr and Ms"},
	{"5", "Fräulein", "Miss"},
	{"6", "Vereinigung", "Association"},
}

// genderCodes is the Geschlecht of 0100.
var genderCodes = codeList{
	{"0", "juristische Person", "Legal entity"},
	{"1", "männlich", "Male"},
	{"2", "weiblich", "Female"},
}

// maritalCodes is the Familienstand of 0100 part 2.
var maritalCodes = codeList{
	{"1", "ledig", "Single"},
	{"2", "verheiratet", "Married"},
	{"3", "geschieden", "Divorced"},
	{"4", "verwitwet", "Widowed"},
	{"5", "getrennt lebend", "Separated"},
	{"9", "sonstiges", "Other"},
}

// legalFormCodes is the Rechtsform of 0100 part 3.
var legalFormCodes = codeList{
	{"01", "natürliche Person", "Natural person"},
	{"02", "Gesellschaft bürgerlichen Rechts (GbR)", "Civil-law partnership (GbR)"},
	{"03", "OHG", "General partnership (OHG)"},
	{"04", "KG", "Limited partnership (KG)"},
	{"05", "GmbH", "Limited liability company (GmbH)"},
	{"06", "gGmbH", "Non-profit limited liability company (gGmbH)"},
	{"07", "GmbH & Co. KG", "GmbH & Co. KG"},
	{"08", "KGaA", "Partnership limited by shares (KGaA)"},
	{"09", "AG", "Stock corporation (AG)"},
	{"10", "e.V.", "Registered association (e.V.)"},
	{"11", "Verein nach BGB", "Association under civil law"},
	{"12", "eG", "Registered cooperative (eG)"},
	{"13", "Gesellschaft des öffentlichen Rechts", "Public-law body"},
	{"99", "Sonstiges", "Other"},
}

// paymentMethodCodes is the Zahlungsart/-weg of 0100 part 2.
var paymentMethodCodes = codeList{
	{"1", "Lastschrift", "Direct debit"},
	{"2", "Rechnung", "Invoice"},
	{"3", "Dauerauftrag", "Standing order"},
	{"4", "Depot", "Deposit"},
	{"5", "Gehaltsabzug", "Payroll deduction"},
	{"9", "sonstige", "Other"},
}

// Communication kinds.
const (
	CommPhone  = "phone"
	CommMobile = "mobile"
	CommFax    = "fax"
	CommEmail  = "email"
	CommOther  = "other"
)

// communicationCodes is the Kommunikationstyp of 0100 parts 2 and 3.
var communicationCodes = codeList{
	{"10", "Telefonnummer privat", "Phone (private)"},
	{"20", "Telefonnummer geschäftlich", "Phone (business)"},
	{"30", "Telefonnummer mobil", "Mobile phone"},
	{"40", "Telefax", "Fax"},
	{"41", "Telefax privat", "Fax (private)"},
	{"42", "Telefax geschäftlich", "Fax (business)"},
	{"50", "E-Mail", "E-mail"},
	{"51", "E-Mail privat", "E-mail (private)"},
	{"52", "E-Mail geschäftlich", "E-mail (business)"},
}

func communicationKind(code string) string {
	if len(code) != 2 {
		return CommOther
	}
	switch code[0] {
	case '1', '2':
		return CommPhone
	case '3':
		return CommMobile
	case '4':
		return CommFax
	case '5':
		return CommEmail
	}
	return CommOther
}

// Payment frequencies, the API's paymentFrequency.
const (
	FrequencyMonthly    = "monthly"
	FrequencyQuarterly  = "quarterly"
	FrequencyHalfYearly = "half-yearly"
	FrequencyYearly     = "yearly"
	FrequencySingle     = "single"
)

// paymentFrequencyCodes is the Zahlungsweise of 0200.
var paymentFrequencyCodes = codeList{
	{"1", "jährlich", "Yearly"},
	{"2", "halbjährlich", "Half-yearly"},
	{"4", "vierteljährlich", "Quarterly"},
	{"5", "Sonstiges", "Other"},
	{"6", "Einmalbetrag", "Single payment"},
	{"8", "monatlich", "Monthly"},
	{"9", "beitragsfrei", "Premium-free"},
}

// PaymentFrequencyOf maps a GDV Zahlungsweise ("1", "2", "4", "6", "8") to paymentFrequency and
// the payments a year ("" and 0 for none).
func PaymentFrequencyOf(code string) (freq string, perYear int64) { return paymentFrequency(code) }

// paymentFrequency maps a Zahlungsweise to paymentFrequency and the number of payments a
// year. "5" (other) and "9" (premium-free) have no frequency.
func paymentFrequency(code string) (freq string, perYear int64) {
	switch code {
	case "1":
		return FrequencyYearly, 1
	case "2":
		return FrequencyHalfYearly, 2
	case "4":
		return FrequencyQuarterly, 4
	case "8":
		return FrequencyMonthly, 12
	case "6":
		return FrequencySingle, 0
	}
	return "", 0
}

// Contract statuses, the API's contract status.
const (
	StatusActive      = "active"
	StatusSuspended   = "suspended"
	StatusCancelled   = "cancelled"
	StatusEnded       = "ended"
	StatusOffer       = "offer"
	StatusApplication = "application"
)

// contractStatusCodes is the Vertragsstatus of 0200 (Anlage 24).
var contractStatusCodes = codeList{
	{"1", "lebend", "In force"},
	{"2", "lebend / kurzfristig / unterjährig", "In force (short-term)"},
	{"3", "ruhend / Anwartschaft", "Dormant / entitlement"},
	{"4", "storniert", "Cancelled"},
	{"5", "ruhend / beitragsfrei", "Dormant / premium-free"},
	{"6", "beitragsfrei", "Paid-up (premium-free)"},
	{"7", "beitragsfrei durch Leistung", "Premium-free due to benefit"},
	{"8", "Beitragsstundung", "Premium deferral"},
	{"9", "Sonstiges", "Other"},
}

// ContractStatusOf maps a GDV Vertragsstatus and Abgangsgrund to the API's status ("" when
// there is none to map): see contractStatus.
func ContractStatusOf(code, reason string) string { return contractStatus(code, reason) }

// contractStatus maps Vertragsstatus (and, for cancelled contracts, the Abgangsgrund) to the
// API's status. In force, paid-up and deferred contracts still cover: active. Dormant
// contracts do not: suspended. A cancelled contract that ran out (expiry, end age, death,
// maturity payout) ended; any other cancellation is cancelled. "9" (other) and unknown codes
// map to "" and the importer decides.
func contractStatus(code, reason string) string {
	switch code {
	case "1", "2", "6", "7", "8":
		return StatusActive
	case "3", "5":
		return StatusSuspended
	case "4":
		switch reason {
		case "09", "15", "17", "21", "22", "23":
			return StatusEnded
		}
		return StatusCancelled
	}
	return ""
}

// cancellationReasonCodes is the Abgangsgrund of 0200 (Anlage 5).
var cancellationReasonCodes = codeList{
	{"01", "Kündigung VN zum Ablauf", "Cancelled by policyholder at expiry"},
	{"02", "Kündigung VN im Schadenfall / allgemeine Differenzen", "Cancelled by policyholder after a claim or dispute"},
	{"03", "Kündigung VN bei Beitragserhöhung / Tarifaktion", "Cancelled by policyholder after a premium increase"},
	{"04", "Kündigung VU zum Ablauf", "Cancelled by insurer at expiry"},
	{"05", "Kündigung VU im Schadenfall", "Cancelled by insurer after a claim"},
	{"06", "Kündigung VU mangels Beitragszahlung (Folgebeitrag)", "Cancelled by insurer for non-payment"},
	{"07", "Kündigung Risikofortfall / Besitzerwechsel / Umzug ins Ausland / Totalschaden", "Risk ceased (change of owner, moved abroad, total loss)"},
	{"08", "Ersatzversicherung / Umstellung Einzel- und Gruppenversicherung", "Replaced by another contract"},
	{"09", "Storno zum Ablauf kurzfristiger Verträge", "Short-term contract expired"},
	{"10", "Vertragsunterbrechung mit Reservierung (Kfz)", "Suspended with reservation (motor)"},
	{"11", "Vertragsunterbrechung ohne Reservierung (Kfz)", "Suspended without reservation (motor)"},
	{"12", "nicht in Kraft getretener Vertrag / Storno ab Beginn", "Never took effect / cancelled from inception"},
	{"13", "Kündigung des Erwerbers bei Besitzwechsel", "Cancelled by the acquirer after change of owner"},
	{"14", "Tod Versicherungsnehmer", "Death of the policyholder"},
	{"15", "Altersablauf / Endalter", "End age reached"},
	{"16", "Kündigungsklausel gestrichen", "Cancellation clause removed"},
	{"17", "Erlebensfallauszahlung", "Maturity payout"},
	{"18", "Abgang aus Rahmenvertrag", "Left a framework contract"},
	{"19", "Beitragsfreistellung vom VN beantragt", "Paid-up status requested by policyholder"},
	{"20", "Beitragsfreistellung", "Made paid-up"},
	{"21", "Vertragsende durch Tod der versicherten Person", "Ended by death of the insured person"},
	{"22", "Vertragsende durch Ablauf", "Ended at expiry"},
	{"23", "Vertragsende durch Heirat (mitversichertes Kind)", "Ended by marriage (co-insured child)"},
	{"24", "Rückkauf", "Surrendered"},
	{"25", "Verfall", "Lapsed"},
	{"26", "Wechsel zu anderem privaten Krankenversicherer", "Moved to another private health insurer"},
	{"27", "Wechsel zur gesetzlichen Krankenversicherung – pflichtig", "Moved to statutory health insurance (mandatory)"},
	{"28", "Wechsel zur gesetzlichen Krankenversicherung – freiwillig", "Moved to statutory health insurance (voluntary)"},
	{"29", "Vertragstrennung / -zusammenlegung", "Contract split or merged"},
	{"30", "Agentur- und/oder Geschäftsstellenwechsel", "Change of agency or branch"},
	{"31", "Rücktritt (z. B. Verletzung der vorvertraglichen Anzeigepflicht / Anfechtung)", "Rescinded (breach of pre-contractual disclosure)"},
	{"32", "Abgang nach Tarifwechsel", "Left after a tariff change"},
	{"33", "Rücktritt wegen Verletzung der Informationspflicht", "Rescinded for breach of the duty to inform"},
	{"34", "Fristlose Kündigung wegen Verletzung der Anzeigepflicht", "Terminated without notice for breach of disclosure"},
	{"35", "Kündigung wegen leicht fahrlässiger Verletzung der Anzeigepflicht", "Terminated for slight breach of disclosure"},
	{"36", "Kündigung VN wegen Ausschluss der Gefahr durch VU", "Cancelled by policyholder after exclusion of a risk"},
	{"37", "Storno mit Übergang auf anderes VU (Fusion, Zukauf)", "Transferred to another insurer (merger)"},
	{"38", "Storno wegen Fortführung unter neuer Versicherungsscheinnummer", "Continued under a new policy number"},
	{"99", "sonstige Stornogründe", "Other reason"},
}

// collectionCodes is the Inkassoart of 0200.
var collectionCodes = codeList{
	{"1", "Vermittlerinkasso", "Collected by the broker"},
	{"2", "Zentralinkasso / direktes Inkasso", "Collected by the insurer"},
}

// senderKindCodes is the Art des Absenders / Adressaten of 0001.
var senderKindCodes = codeList{
	{"1", "VU", "Insurer"},
	{"2", "Vermittler", "Broker"},
	{"3", "VU (kein GDV-Schlüssel)", "Insurer (no GDV key)"},
	{"9", "Sonstige", "Other"},
}

// lookup returns the code with its labels; known is false for a non-blank code the list does
// not have.
func lookup(l codeList, code string) (c Code, known bool) {
	if code == "" {
		return Code{}, true
	}
	return l.find(code)
}
