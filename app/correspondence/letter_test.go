package correspondence

import (
	"os"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// sample is a value of field f that passes checkForm.
func sample(f Field) any {
	switch {
	case f.Type == FieldBoolean:
		return true
	case f.Type == FieldNumber:
		return 12.5
	case f.Type == FieldDate:
		return "2026-12-01"
	case f.Type == FieldIBAN:
		return "DE89370400440532013000"
	case f.Type == FieldEmail:
		return "a@example.com"
	case len(f.Options) > 0:
		return f.Options[0].Value
	}
	v := "Wert-" + f.Key
	if f.MaxLength > 0 && len(v) > f.MaxLength {
		v = v[:f.MaxLength]
	}
	return v
}

// TestRender_EveryType renders each type's letter with every field given and with the
// required ones only: catches a template that fails at execution (a misspelt field, a function
// on the wrong type), a form value missing from the letter, and a letter without the policy
// numbers or the signature.
func TestRender_EveryType(t *testing.T) {
	ct := &ent.Contact{Type: "private", FirstName: "Erika", LastName: "Mustermann",
		Groups: schematype.ContactGroups{"address": {"street": "Weg", "houseNumber": "1", "zipCode": "12345", "city": "Ort"},
			"personal": {"dateOfBirth": "1980-02-01"}}}
	contracts := []*ent.Contract{{PolicyNumber: "HR-1", Type: "130"}, {PolicyNumber: "KV-2", Type: "010"}}
	for _, typ := range catalog {
		for _, all := range []bool{true, false} {
			form := map[string]any{}
			for _, f := range typ.Fields {
				if all || f.Required {
					form[f.Key] = sample(f)
				}
			}
			var v errs.Invalid
			form = checkForm(&v, typ, form)
			if err := v.Err(); err != nil {
				t.Fatalf("%s: sample form refused: %v", typ.Key, err)
			}
			subject, body, err := render(typ, newLetter(typ, ct, contracts, "Versicherer AG", "Max Makler", "Makler GmbH", form))
			if err != nil {
				t.Fatalf("%s: %v", typ.Key, err)
			}
			for _, want := range []string{"HR-1", "KV-2", "Erika Mustermann", "Makler GmbH", "Max Makler", "01.02.1980", "Weg 1, 12345 Ort"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s: body lacks %q:\n%s", typ.Key, want, body)
				}
			}
			if !strings.Contains(subject, "HR-1, KV-2") || strings.ContainsAny(subject, "\r\n") {
				t.Errorf("%s: subject %q", typ.Key, subject)
			}
			for k, val := range form {
				f, _ := typ.field(k)
				if s := formText(f, val); f.Type != FieldBoolean && !strings.Contains(body, s) {
					t.Errorf("%s: body lacks %s = %q:\n%s", typ.Key, k, s, body)
				}
			}
			if strings.Contains(body, "<no value>") || strings.Contains(body, "\n\n\n") {
				t.Errorf("%s: body has a gap or a missing value:\n%s", typ.Key, body)
			}
			if os.Getenv("SHOW_LETTERS") != "" && all {
				t.Logf("%s\n%s\n%s", typ.Key, subject, body)
			}
		}
	}
}
