package leads

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

func s(v string) *string { return &v }

func codes(err error) string {
	var inv *errs.Invalid
	if !errors.As(err, &inv) {
		return ""
	}
	var out []string
	for _, e := range inv.Errors {
		out = append(out, e.Field+":"+e.Code)
	}
	return strings.Join(out, " ")
}

func TestInput_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"e-mail only", Input{Email: s("a@example.com")}, ""},
		{"phone only", Input{Phone: s("0170 1234567")}, ""},
		{"neither", Input{FirstName: s("A")}, "email:email_or_phone_required phone:email_or_phone_required"},
		{"display name is no address", Input{Email: s("Anna <a@example.com>")}, "email:invalid_email"},
		{"blanks around an address", Input{Email: s(" a@example.com ")}, ""},
		{"no phone number", Input{Phone: s("12")}, "phone:invalid_phone"},
		{"100 characters with umlauts", Input{Email: s("a@example.com"), FirstName: s(strings.Repeat("ä", 100))}, ""},
		{"101 characters", Input{Email: s("a@example.com"), LastName: s(strings.Repeat("x", 101))}, "lastName:too_long"},
		{"NUL", Input{Email: s("a@example.com"), Notes: s("a\x00b")}, "notes:invalid_character"},
		{"source", Input{Email: s("a@example.com"), Source: s("tv")}, "source:invalid_enum"},
		{"ids", Input{Email: s("a@example.com"), OwnerID: s("1"), StageID: s("2")}, "ownerId:invalid_uuid stageId:invalid_uuid"},
		{"additional fields", Input{Email: s("a@example.com"), AdditionalFields: map[string]string{" ": "x", "k": strings.Repeat("v", 2001)}},
			"additionalFields:invalid_key additionalFields.k:too_long"},
		{"references", Input{Email: s("a@example.com"), ExternalReferences: []schematype.ExternalRef{
			{Source: "ams", ExternalID: "1"}, {Source: "ams", ExternalID: "1"}, {Source: "", ExternalID: ""}}},
			"externalReferences.1.externalId:duplicate_reference externalReferences.2.source:invalid_length externalReferences.2.externalId:invalid_length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := codes(tc.in.Validate()); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPatchInput_StageRequired(t *testing.T) {
	in := patchInput{Input{Email: s("a@example.com")}}
	if got := codes(in.Validate()); got != "stageId:required" {
		t.Errorf("got %q", got)
	}
}

func TestStageKey(t *testing.T) {
	for in, want := range map[string]string{
		"Termin vereinbart":       "termin_vereinbart",
		"  Verloren (Ärger)!  ":   "verloren_aerger",
		"Größe/Maß":               "groesse_mass",
		"2. Gespräch":             "2_gespraech",
		"!!!":                     "",
		"New":                     "new",
		strings.Repeat("ab ", 60): strings.TrimRight(strings.Repeat("ab_", 34)[:100], "_"),
	} {
		if got := stageKey(in); got != want {
			t.Errorf("stageKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeLike(t *testing.T) {
	if got := escapeLike(`100%_a\b`); got != `100\%\_a\\b` {
		t.Errorf("got %q", got)
	}
}

func TestConflictsWith(t *testing.T) {
	l := &ent.Lead{FirstName: "anna", LastName: "Schmidt", Email: s("ANNA@example.com")}
	c := &ent.Contact{FirstName: "Anna", LastName: "Berger", Email: s("anna@example.com")}
	if got := fmt.Sprint(conflictsWith(l, nil, c)); !strings.Contains(got, "lastName") || strings.Count(got, "{") != 1 {
		t.Errorf("got %s, want only lastName", got)
	}
	if got := conflictsWith(l, map[string]any{"lastName": "Berger-Schmidt"}, c); len(got) != 0 {
		t.Errorf("an override decides: got %+v", got)
	}
	if got := conflictsWith(l, map[string]any{"lastName": nil}, c); len(got) != 0 {
		t.Errorf("a null override decides too: got %+v", got)
	}
	empty := &ent.Contact{FirstName: "Anna"}
	if got := conflictsWith(l, nil, empty); len(got) != 0 {
		t.Errorf("empty contact fields are filled, not conflicts: got %+v", got)
	}
}
