// Package portfoliocsv reads a broker's portfolio from a CSV file (semicolon-separated, German
// number and date formats, as spreadsheet and broker software exports write them) into the
// output model of package gdv: one package, contracts with their persons, issues. A Mapping
// says which column holds which field. Streaming: one contract in memory at a time.
package portfoliocsv

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Target is a field of the output model a CSV column can fill.
type Target struct {
	Name        string `json:"name"` // "contract.policyNumber"
	Type        string `json:"type"` // text, date, decimal, code
	Description string `json:"description"`
}

// The targets. A mapping must map contract.policyNumber; everything else is optional.
var targets = []Target{
	{"contract.policyNumber", "text", "policy number (Versicherungsschein-Nummer); required"},
	{"contract.insurer", "text", "insurer: GDV VU-Nummer"},
	{"contract.insurerName", "text", "insurer: name"},
	{"contract.sparte", "code", "line of business: GDV Sparte (\"030\") or its German label"},
	{"contract.status", "code", "active, suspended, cancelled, ended, offer, application; German words (aktiv, ruhend, storniert, gekündigt, beendet, Angebot, Antrag) or the GDV Vertragsstatus"},
	{"contract.startDate", "date", "start (Vertragsbeginn)"},
	{"contract.endDate", "date", "end (Vertragsablauf)"},
	{"contract.mainRenewalDate", "date", "main renewal date (Hauptfälligkeit)"},
	{"contract.cancellationDate", "date", "cancellation date (Abgangsdatum)"},
	{"contract.premium", "decimal", "premium per payment period"},
	{"contract.grossPremium", "decimal", "premium with insurance tax"},
	{"contract.currency", "text", "ISO 4217 code; default EUR"},
	{"contract.paymentFrequency", "code", "monthly, quarterly, half-yearly, yearly, single; German words (monatlich …) or the GDV Zahlungsweise"},
	{"contract.productName", "text", "product or tariff"},
	{"contract.agency", "text", "broker number at the insurer (Vermittlernummer)"},
	{"contract.customerNumber", "text", "the insurer's customer number"},
	{"person.role", "code", "policyholder (default), insured person, payer …: English kind, German word or GDV Adresskennzeichen"},
	{"person.kind", "code", "private or business (Privat, Firma)"},
	{"person.salutation", "code", "Herr, Frau, Firma … or the GDV Anredeschlüssel"},
	{"person.title", "text", "title"},
	{"person.firstName", "text", "first name"},
	{"person.lastName", "text", "last name"},
	{"person.companyName", "text", "company name"},
	{"person.birthDate", "date", "birth date"},
	{"person.street", "text", "street (with house number, or see person.houseNumber)"},
	{"person.houseNumber", "text", "house number, appended to the street"},
	{"person.postalCode", "text", "postal code"},
	{"person.city", "text", "city"},
	{"person.country", "text", "country"},
	{"person.email", "text", "e-mail address"},
	{"person.phone", "text", "phone"},
	{"person.mobile", "text", "mobile phone"},
	{"person.iban", "text", "IBAN"},
	{"person.bic", "text", "BIC"},
	{"person.customerNumber", "text", "the broker's customer number"},
}

// Targets lists the fields a mapping can fill.
func Targets() []Target { return slices.Clone(targets) }

func isTarget(name string) bool {
	return slices.ContainsFunc(targets, func(t Target) bool { return t.Name == name })
}

// Mapping says which CSV column fills which field: Columns maps a column header (compared
// without case and surrounding blanks) to a target. Defaults fill targets for every row
// (a file from one insurer: {"contract.insurer": "5015"}); a column wins over a default.
type Mapping struct {
	Columns  map[string]string `json:"columns"`
	Defaults map[string]string `json:"defaults,omitempty"`
}

// Problem is one thing wrong with a mapping.
type Problem struct {
	Field  string `json:"field"` // "columns.Vertragsnummer", "defaults.contract.status"
	Code   string `json:"code"`  // unknown_target, duplicate_target, required
	Detail string `json:"detail"`
}

// MappingError lists every problem of a mapping.
type MappingError struct{ Problems []Problem }

func (e *MappingError) Error() string {
	var parts []string
	for _, p := range e.Problems {
		parts = append(parts, p.Field+": "+p.Detail)
	}
	return "portfoliocsv: invalid mapping: " + strings.Join(parts, "; ")
}

// Validate checks a mapping: every target known, none filled by two columns,
// contract.policyNumber mapped. It returns a *MappingError listing every problem.
func (m Mapping) Validate() error {
	var ps []Problem
	seen := map[string]string{}
	cols := make([]string, 0, len(m.Columns))
	for c := range m.Columns {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	for _, c := range cols {
		t := m.Columns[c]
		switch {
		case strings.TrimSpace(c) == "":
			ps = append(ps, Problem{"columns", "required", "a column name is empty"})
		case !isTarget(t):
			ps = append(ps, Problem{"columns." + c, "unknown_target", fmt.Sprintf("%q is not a target field", t)})
		case seen[t] != "":
			ps = append(ps, Problem{"columns." + c, "duplicate_target", fmt.Sprintf("%s is already filled by column %q", t, seen[t])})
		default:
			seen[t] = c
		}
	}
	for t := range m.Defaults {
		if !isTarget(t) {
			ps = append(ps, Problem{"defaults." + t, "unknown_target", fmt.Sprintf("%q is not a target field", t)})
		}
	}
	if seen["contract.policyNumber"] == "" && m.Defaults["contract.policyNumber"] == "" {
		ps = append(ps, Problem{"columns", "required", "no column fills contract.policyNumber"})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Field < ps[j].Field })
	if len(ps) > 0 {
		return &MappingError{Problems: ps}
	}
	return nil
}

// normColumn is how column names compare.
func normColumn(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
