package extractions

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
)

var (
	hanse = InsurerName{ID: uuid.MustParse("00000000-0000-0000-0000-000000005501"), Name: "HanseMerkur Allgemeine Versicherung AG"}
	stutt = InsurerName{ID: uuid.MustParse("00000000-0000-0000-0000-000000001104"), Name: "Stuttgarter Lebensversicherung a.G."}
)

func values(pages []string, ct string) map[string]any {
	out := map[string]any{}
	for _, f := range Extract(pages, []InsurerName{hanse, stutt}, ct) {
		out[f.Key] = f.Value
	}
	return out
}

// Catches: a label rule that reads only the same line (label proximity lost), "jährlich"
// matched inside "halbjährlich", German amounts read as English ones, an insurer found by a
// generic word ("Versicherung"), and the title keyword losing to a body mention.
func TestExtract(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages []string
		ct    string
		want  map[string]any
	}{
		{"labels on the same line", []string{"HanseMerkur Allgemeine Versicherung AG\nVersicherungsschein Privathaftpflichtversicherung\n" +
			"Versicherungsschein-Nr.: PHV-2026-004711\nVersicherungsnehmer: Frau Erika Mustermann\n" +
			"Versicherungsbeginn: 01.02.2026\nVertragsende: 01.02.2029\nGesamtbeitrag: 1.234,56 EUR halbjährlich\n" +
			"Der Beitrag für Hausrat ist nicht enthalten."}, "",
			map[string]any{KeyInsurer: hanse.ID.String(), KeyPolicyNumber: "PHV-2026-004711", KeyType: "041",
				KeyStartDate: "2026-02-01", KeyEndDate: "2029-02-01", KeyPremium: "1234.56", KeyPaymentFrequency: "half-yearly",
				KeyHolder: "Frau Erika Mustermann"}},
		{"values on the next line, period and Zahlungsweise", []string{"Stuttgarter\nLebensversicherung\nIhre Rentenversicherung\n" +
			"Vertragsnummer\n12/345.678-9\nVersicherungsnehmer\nHerr Max Müller\n" +
			"Versicherungsdauer: vom 01.12.2025 bis 01.12.2055\nMonatsbeitrag 89,90 €\nZahlungsweise: monatlich"}, "",
			map[string]any{KeyInsurer: stutt.ID.String(), KeyPolicyNumber: "12/345.678-9", KeyType: "010", KeyStartDate: "2025-12-01",
				KeyEndDate: "2055-12-01", KeyPremium: "89.90", KeyPaymentFrequency: "monthly", KeyHolder: "Herr Max Müller"}},
		{"given type wins, insurer by its words", []string{"Stuttgarter Lebensversicherung\nPolicen-Nr. LV 778899\nBeitrag 12,00 jährlich"}, "011",
			map[string]any{KeyInsurer: stutt.ID.String(), KeyPolicyNumber: "LV 778899", KeyType: "011", KeyPremium: "12.00",
				KeyPaymentFrequency: "yearly"}},
		{"nothing to read", []string{"Sehr geehrte Damen und Herren, vielen Dank."}, "", map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := values(tc.pages, tc.ct)
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s = %v, want %v", k, got[k], w)
				}
			}
			for k := range got {
				if _, ok := tc.want[k]; !ok {
					t.Errorf("unexpected %s = %v", k, got[k])
				}
			}
		})
	}
}

// Catches: apply accepting holder.name, unknown keys or values for fields it does not write.
func TestApplyInput_Validate(t *testing.T) {
	for _, tc := range []struct {
		in   ApplyInput
		bad  bool
		name string
	}{
		{ApplyInput{Fields: []string{"policyNumber"}}, false, "one field"},
		{ApplyInput{}, true, "no field"},
		{ApplyInput{Fields: []string{"holder.name"}}, true, "holder"},
		{ApplyInput{Fields: []string{"colour"}}, true, "unknown"},
		{ApplyInput{Fields: []string{"premium"}, Values: map[string]json.RawMessage{"type": json.RawMessage(`"010"`)}}, true, "value not in fields"},
		{ApplyInput{Fields: []string{"premium"}, Values: map[string]json.RawMessage{"premium": json.RawMessage(`{"a":1}`)}}, true, "object value"},
	} {
		if err := tc.in.Validate(); (err != nil) != tc.bad {
			t.Errorf("%s: err %v, want bad %v", tc.name, err, tc.bad)
		}
	}
}
