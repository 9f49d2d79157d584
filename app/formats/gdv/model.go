package gdv

// The output model: what a GDV file holds for an importer, JSON-able (camelCase, as the API).

// Package is one Datenpaket: a Vorsatz (0001), the data, a Nachsatz (9999). A file can hold
// several, from several insurers; the Vorsatz names the sender, which need not be the insurer
// of the records (VUNumber of a Contract comes from its own records).
type Package struct {
	Number int   `json:"number"` // 1-based, in file order
	Line   int64 `json:"line"`   // line of the Vorsatz; of the first record when it is missing
	// Source names the document inside a container (a BiPRO shipment, a ZIP archive) the
	// package was read from; "" for a plain file.
	Source string `json:"source,omitempty"`
	// HeaderMissing is set for data that came without a Vorsatz (before the first 0001 or
	// after a 9999): the package has no sender data.
	HeaderMissing bool   `json:"headerMissing,omitempty"`
	VUNumber      string `json:"vuNumber"`  // VU-Nummer of the Vorsatz (sender)
	Sender        string `json:"sender"`    // Absender
	Addressee     string `json:"addressee"` // Adressat (the broker, often empty)
	PeriodFrom    Date   `json:"periodFrom"`
	PeriodTo      Date   `json:"periodTo"`
	Agency        string `json:"agency,omitempty"` // Geschäftsstelle/Vermittler: the broker's number at the insurer
	SenderKind    Code   `json:"senderKind"`
	AddresseeKind Code   `json:"addresseeKind"`
	// Versions holds the record type versions the Vorsatz declares ("0100": "2.3",
	// "0210.050": "2.7"); Release is the GDV release they match, "" when none.
	Versions map[string]string `json:"versions,omitempty"`
	Release  string            `json:"release,omitempty"`
	// Encoding the package was read with (with Options.Encoding auto, detected for each
	// package: one file may join deliveries of several senders).
	Encoding string `json:"encoding"`

	// Set when the package ends (KindPackageEnd).
	Records   int64    `json:"records"`   // records between Vorsatz and Nachsatz
	Contracts int64    `json:"contracts"` // contracts read
	Insurers  []string `json:"insurers"`  // VU numbers of the records (at most 100)
	Trailer   *Trailer `json:"trailer"`   // nil when the Nachsatz is missing
	Check     Check    `json:"check"`
}

// Trailer is the Nachsatz (9999) as the file states it.
type Trailer struct {
	Line         int64    `json:"line"`
	RecordCount  *int64   `json:"recordCount"` // Anzahl der Sätze
	Agency       string   `json:"agency,omitempty"`
	TotalPremium *Decimal `json:"totalPremium"` // Gesamtbeitrag: Σ 0200 Gesamtbeitrag (netto)
	GrossPremium *Decimal `json:"grossPremium,omitempty"`
	Commission   *Decimal `json:"commission,omitempty"`
	Benefits     *Decimal `json:"benefits,omitempty"`
	ClaimsCosts  *Decimal `json:"claimsCosts,omitempty"`
	// Truncated is set when the record ends before Gesamtbeitrag (real files cut 9999 to 24
	// characters): what is missing is not checked.
	Truncated bool `json:"truncated,omitempty"`
}

// Check statuses: the verdict on a package's Nachsatz.
const (
	CheckConsistent   = "consistent"   // count and Gesamtbeitrag agree with the data
	CheckInconsistent = "inconsistent" // a declared value disagrees (an excerpt, or data lost)
	CheckTruncated    = "truncated"    // the Nachsatz is cut short; what it has agrees
	CheckMissing      = "missing"      // no Nachsatz
)

// Check compares the Nachsatz with the package: the count of records strictly between Vorsatz
// and Nachsatz, and Σ Gesamtbeitrag of the 0200 records. Disagreement is a warning, never a
// failure: excerpts of larger deliveries keep the original Nachsatz.
type Check struct {
	Status          string   `json:"status"`
	RecordsCounted  int64    `json:"recordsCounted"`
	RecordsDeclared *int64   `json:"recordsDeclared"`
	PremiumCounted  Decimal  `json:"premiumCounted"`
	PremiumDeclared *Decimal `json:"premiumDeclared"`
}

// Contract is one insurance contract: its 0200 record, the people of its 0100 records and
// its line-specific records (0210, 0220, …) as Details.
type Contract struct {
	Package int   `json:"package"`
	Line    int64 `json:"line"` // line of the 0200 record

	VUNumber string `json:"vuNumber"` // insurer (VU-Nummer of the record)
	// InsurerName is the sender of the Vorsatz when it is this insurer (same VU-Nummer), or
	// the name a CSV file gives; "" when unknown.
	InsurerName string `json:"insurerName,omitempty"`
	// PolicyNumber is the Versicherungsschein-Nummer, trimmed (the file right-aligns it);
	// PolicyNumberPrinted is the insurer's printed form ("druckaufbereitet", 0200 part 2).
	PolicyNumber        string `json:"policyNumber"`
	PolicyNumberPrinted string `json:"policyNumberPrinted,omitempty"`
	SequenceNumber      string `json:"sequenceNumber,omitempty"` // Folgenummer
	Agency              string `json:"agency,omitempty"`         // Geschäftsstelle/Vermittler
	Sparte              Code   `json:"sparte"`
	Bundled             bool   `json:"bundled,omitempty"` // Bündelungskennzeichen: Sparte 000 holds sub-contracts in Details
	// Application is set for contract data inside an application (Geschäftsvorfall 0052 …
	// 9952) rather than a portfolio: Status is then "application".
	Application bool `json:"application,omitempty"`

	// Status is the API's status: active, suspended, cancelled, ended, application; "" when
	// the Vertragsstatus has no meaning to map (9 "Sonstiges", unknown codes).
	Status             string `json:"status"`
	StatusCode         Code   `json:"statusCode"` // Vertragsstatus as delivered
	CancellationReason Code   `json:"cancellationReason"`
	CancellationDate   Date   `json:"cancellationDate"`
	StartDate          Date   `json:"startDate"`
	EndDate            Date   `json:"endDate"`
	MainRenewalDate    Date   `json:"mainRenewalDate"` // Hauptfälligkeit
	ApplicationDate    Date   `json:"applicationDate"`

	// Premium is the Gesamtbeitrag (netto) per payment period (for health insurance the
	// monthly amount); GrossPremium the Gesamtbeitrag (brutto, with insurance tax) when the
	// file has part 2. AnnualPremium is Premium per year (×12 monthly, ×4 quarterly, ×2
	// half-yearly, ×1 yearly; health insurance ×12); nil when the frequency gives none.
	Premium              *Decimal `json:"premium"`
	GrossPremium         *Decimal `json:"grossPremium,omitempty"`
	AnnualPremium        *Decimal `json:"annualPremium"`
	Currency             string   `json:"currency,omitempty"`
	PaymentFrequency     string   `json:"paymentFrequency"` // monthly, quarterly, half-yearly, yearly, single; "" for none
	PaymentFrequencyCode Code     `json:"paymentFrequencyCode"`
	Collection           Code     `json:"collection"` // Inkassoart
	ProductName          string   `json:"productName,omitempty"`
	CustomerNumber       string   `json:"customerNumber,omitempty"`       // the insurer's customer number
	BrokerCustomerNumber string   `json:"brokerCustomerNumber,omitempty"` // the broker's customer number

	Persons []Person `json:"persons"`
	Details []Detail `json:"details"`
}

// PolicyHolders returns the persons holding the policyholder role.
func (c *Contract) PolicyHolders() []*Person {
	var out []*Person
	for i := range c.Persons {
		if c.Persons[i].Has(RolePolicyholder) {
			out = append(out, &c.Persons[i])
		}
	}
	return out
}

// Person kinds.
const (
	KindPrivate  = "private"
	KindBusiness = "business"
)

// Person is a person or company from 0100 records. One Person holds every role it has in the
// contract (the same person as policyholder, payer and insured person is one Person with
// three roles).
type Person struct {
	Line  int64  `json:"line"` // line of the first 0100 record
	Roles []Role `json:"roles"`
	Kind  string `json:"kind"` // private or business

	Salutation Code `json:"salutation"`
	// Name1 is the surname or company name, Name2 an addition, Name3 the first name of a
	// natural person (for companies a further name line). LastName/FirstName and
	// CompanyName are derived from them by Kind.
	Name1       string `json:"name1"`
	Name2       string `json:"name2,omitempty"`
	Name3       string `json:"name3,omitempty"`
	LastName    string `json:"lastName,omitempty"`
	FirstName   string `json:"firstName,omitempty"`
	CompanyName string `json:"companyName,omitempty"`
	Title       string `json:"title,omitempty"`
	BirthName   string `json:"birthName,omitempty"`
	BirthDate   Date   `json:"birthDate"` // unknown (null) for "00000000"
	BirthPlace  string `json:"birthPlace,omitempty"`
	Gender      Code   `json:"gender"`
	Nationality string `json:"nationality,omitempty"`
	Marital     Code   `json:"maritalStatus"`
	LegalForm   Code   `json:"legalForm"`

	Street     string `json:"street,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	City       string `json:"city,omitempty"`
	Country    string `json:"country,omitempty"` // Länderkennzeichen (vehicle code: D, A, CH)
	POBox      string `json:"poBox,omitempty"`

	CustomerNumber       string          `json:"customerNumber,omitempty"`       // the insurer's
	BrokerCustomerNumber string          `json:"brokerCustomerNumber,omitempty"` // the broker's
	Communications       []Communication `json:"communications"`
	BankAccounts         []BankAccount   `json:"bankAccounts"`
	PaymentMethod        Code            `json:"paymentMethod"`
	TaxNumber            string          `json:"taxNumber,omitempty"`
	VATID                string          `json:"vatId,omitempty"`
}

// Has reports whether the person holds a role of the kind.
func (p *Person) Has(kind string) bool {
	for _, r := range p.Roles {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// Communication is a phone number, fax or e-mail address of a person.
type Communication struct {
	Type  Code   `json:"type"`
	Kind  string `json:"kind"` // phone, mobile, fax, email, other
	Value string `json:"value"`
}

// BankAccount is a bank account of a person (0100 parts 2, 4 and 5).
type BankAccount struct {
	IBAN          string `json:"iban,omitempty"`
	BIC           string `json:"bic,omitempty"`
	AccountNumber string `json:"accountNumber,omitempty"`
	BankCode      string `json:"bankCode,omitempty"` // Bankleitzahl
	BankName      string `json:"bankName,omitempty"`
	Holder        string `json:"holder,omitempty"` // abweichender Kontoinhaber
}

// Detail is one further record of a contract (0210, 0211, 0220, 0221, 0230, 0300, 0400,
// 0500 …) with every field the GDV layout of its Satzart and Sparte defines, keyed by the
// field's technical name: strings for text and codes, Decimal for amounts, Date for dates.
// Blank fields are left out; so are the key fields every record repeats.
type Detail struct {
	Line    int64          `json:"line"`
	Type    string         `json:"type"` // the layout it was read with, e.g. "0220.030", "0220.010.13.1"
	Satzart string         `json:"satzart"`
	Sparte  string         `json:"sparte,omitempty"`
	Parts   []int          `json:"parts"` // Teildatensätze present
	Fields  map[string]any `json:"fields"`
	// Raw holds the records as text when no GDV layout fits (Type is then ""): kept, not
	// interpreted.
	Raw []string `json:"raw,omitempty"`
}

// Severity of an issue.
type Severity string

// Severities. A warning never costs data the importer needs: the record is read (a value may
// be left empty). An error means something was not imported: a record or a whole contract.
const (
	Warning Severity = "warning"
	Error   Severity = "error"
)

// Issue is something the reader found: where (line, Satzart, field), how bad, a stable code,
// a message and a short raw excerpt.
type Issue struct {
	Line     int64    `json:"line"` // 1-based line (record) of the file; 0 for the file as a whole
	Package  int      `json:"package,omitempty"`
	Source   string   `json:"source,omitempty"` // the document inside a container, as Package.Source
	Satzart  string   `json:"satzart,omitempty"`
	Field    string   `json:"field,omitempty"` // technical name of the GDV field
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Raw      string   `json:"raw,omitempty"`
}

// Summary counts what the reader has read so far.
type Summary struct {
	Encoding         string           `json:"encoding"`         // the encoding read with; "mixed" when packages differ (Package.Encoding)
	EncodingDetected bool             `json:"encodingDetected"` // detected by the reader, not set by Options.Encoding
	LineEnding       string           `json:"lineEnding"`       // lf, crlf, cr, none, mixed
	ShortRecords     int64            `json:"shortRecords"`     // records with fewer than 256 characters (trailing blanks stripped)
	Records          int64            `json:"records"`
	RecordsBySatzart map[string]int64 `json:"recordsBySatzart"`
	Packages         int              `json:"packages"`
	Insurers         []string         `json:"insurers"` // VU numbers of the records, sorted (at most 1,000)
	Contracts        int64            `json:"contracts"`
	Persons          int64            `json:"persons"` // persons over all contracts (one per contract they appear in)
	PersonsByRole    map[string]int64 `json:"personsByRole"`
	Warnings         int64            `json:"warnings"`
	Errors           int64            `json:"errors"`
	IssuesByCode     map[string]int64 `json:"issuesByCode"`
	// IssuesSuppressed counts issues not delivered as events because their code had
	// reached Options.MaxIssuesPerCode (they are counted above).
	IssuesSuppressed int64 `json:"issuesSuppressed"`
}
