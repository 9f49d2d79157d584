package emails

import (
	"slices"
	"testing"
)

// TestFill_OnePass would catch a Fill that expands the values it inserted (strings.Replace
// per key in a loop): a contact named "{{company.iban}}" must not print the company's IBAN.
func TestFill_OnePass(t *testing.T) {
	values := map[string]string{"contact.firstName": "{{company.iban}}", "company.iban": "DE89 3704 0044 0532 0130 00",
		"a": "{{b}}", "b": "B"}
	cases := []struct{ in, want string }{
		{"Hallo {{contact.firstName}}", "Hallo {{company.iban}}"},
		{"{{a}}{{b}}", "{{b}}B"},
		{"Hallo {{ contact.firstName }}!", "Hallo {{company.iban}}!"},
		{"Unbekannt: [{{contact.unknown}}]", "Unbekannt: []"},
		{"kein {{ Platz-halter }} {{1x}} {{a b}}", "kein {{ Platz-halter }} {{1x}} {{a b}}"},
		{"{{{{b}}", "{{B"},
		{"offen {{b", "offen {{b"},
		{"", ""},
	}
	for _, c := range cases {
		if got := Fill(c.in, values); got != c.want {
			t.Errorf("Fill(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPlaceholders would catch an unsorted or duplicated list, or one that counts text in
// braces that is no placeholder.
func TestPlaceholders(t *testing.T) {
	got := Placeholders("Hallo {{contact.salutation}} {{contact.lastName}}", "{{user.name}} {{ contact.lastName }} {{a b}}", "")
	want := []string{"contact.lastName", "contact.salutation", "user.name"}
	if !slices.Equal(got, want) {
		t.Fatalf("Placeholders = %v, want %v", got, want)
	}
	if got := Placeholders(); got == nil || len(got) != 0 {
		t.Fatalf("Placeholders() = %#v, want empty non-nil", got)
	}
}
