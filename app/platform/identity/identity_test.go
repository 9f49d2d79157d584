package identity

import (
	"slices"
	"testing"
)

func TestNameKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Müller", "mueller"},
		{"Mueller", "mueller"},
		{"MÜLLER", "mueller"},
		{"Mu\u0308ller", "mueller"}, // decomposed ü (NFD, as macOS sends it)
		{"  Müller \t", "mueller"},
		{"Strauß", "strauss"},
		{"STRAUẞ", "strauss"},
		{"Weiß", "weiss"},
		{"Öztürk", "oeztuerk"},
		{"Müller-Lüdenscheidt", "mueller luedenscheidt"},
		{"Müller – Lüdenscheidt", "mueller luedenscheidt"},
		{"müller  lüdenscheidt", "mueller luedenscheidt"},
		{"van der  Berg", "van der berg"},
		{"-Berg-", "berg"},
		{"Ber\u200bg", "berg"},       // zero-width space
		{"\u202eBerg\u202c", "berg"}, // bidi override
		{"Muller", "muller"},         // other accents and their absence are kept apart
		{"Müller-", "mueller"},
		{"", ""},
		{" - ", ""},
	} {
		if got := NameKey(c.in); got != c.want {
			t.Errorf("NameKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMatchedBy(t *testing.T) {
	const landline = "+49 30 1234567"
	for _, c := range []struct {
		name string
		a, b Person
		want []string
	}{
		{"household: one landline, two names, two e-mails", Of("anna@example.com", "", "Berger", landline),
			Of("paul@example.com", "", "Schmidt", "030 1234567"), nil},
		{"household: one landline, one name, two e-mails", Of("anna@example.com", "", "Berger", landline),
			Of("paul@example.com", "", "Berger", "030 1234567"), nil},
		{"household: one landline, two names, no e-mails", Of("", "", "Berger", landline), Of("", "", "Schmidt", landline), nil},
		{"married name is another name", Of("", "", "Müller", landline), Of("", "", "Müller-Lüdenscheidt", landline), nil},
		{"same person with and without e-mail", Of("anna@example.com", "", "Müller", landline),
			Of("", "", " mueller ", "030 1234567"), []string{"phone"}},
		{"same person, both without e-mail", Of("", "", "Berger", landline), Of("", "", "BERGER", "030/1234567"), []string{"phone"}},
		{"e-mail match with a changed phone", Of("Anna@Example.com ", "", "Berger", "0170 1111111"),
			Of("anna@example.com", "", "Berger", "0170 2222222"), []string{"email"}},
		{"e-mail match merges whatever the names", Of("anna@example.com", "", "Berger", ""),
			Of("anna@example.com", "", "Schmidt", ""), []string{"email"}},
		{"e-mail and phone", Of("anna@example.com", "", "Berger", landline), Of("ANNA@example.com", "", "Berger", landline),
			[]string{"email", "phone"}},
		{"e-mail match, phone shared but names differ", Of("anna@example.com", "", "Berger", landline),
			Of("anna@example.com", "", "Schmidt", landline), []string{"email", "phone"}},
		{"a missing last name is no agreement", Of("", "", "", landline), Of("", "", "Berger", landline), nil},
		{"two missing last names are no agreement", Of("", "", "", landline), Of("", "", "", landline), nil},
		{"no phone number is no match", Of("", "", "Berger", "abc"), Of("", "", "Berger", "abc"), nil},
		{"nothing shared", Of("a@example.com", "", "Berger", "0170 1111111"), Of("b@example.com", "", "Berger", "0170 2222222"), nil},
		{"empty records never match", Of("", "", "", ""), Of("", "", "", ""), nil},
		{"household of one last name: two first names, no e-mails", Of("", "Anna", "Berger", landline),
			Of("", "Petra", "Berger", landline), nil},
		{"same first name written differently", Of("", "Hans-Peter", "Müller", landline),
			Of("", "hans peter", "Mueller", landline), []string{"phone"}},
		{"a first name on one side only", Of("", "Anna", "Berger", landline), Of("", "", "Berger", landline), []string{"phone"}},
		{"a contact with several phones", Of("", "", "Berger", "0170 1111111", landline), Of("", "", "Berger", "030 1234567"), []string{"phone"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := MatchedBy(c.a, c.b)
			if !slices.Equal(got, c.want) {
				t.Errorf("MatchedBy = %v, want %v", got, c.want)
			}
			if rev := MatchedBy(c.b, c.a); !slices.Equal(rev, got) {
				t.Errorf("not symmetric: %v one way, %v the other", got, rev)
			}
			if Same(c.a, c.b) != (len(c.want) > 0) {
				t.Errorf("Same = %v", Same(c.a, c.b))
			}
		})
	}
}

func TestKeys(t *testing.T) {
	if got := EmailKey("  Anna.Berger@Example.COM "); got != "anna.berger@example.com" {
		t.Errorf("EmailKey = %q", got)
	}
	for in, want := range map[string]string{"0170 1234567": "+491701234567", "+49 (30) 123 45 67": "+49301234567", "030/1234567": "+49301234567",
		"+49 170 1234567": "+491701234567", "0049 (170) 123-4567": "+491701234567", "030/12345678": "+493012345678", "+43 1 234567": "+431234567"} {
		if got, ok := PhoneKey(in); !ok || got != want {
			t.Errorf("PhoneKey(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "  ", "abc", "12"} {
		if got, ok := PhoneKey(in); ok {
			t.Errorf("PhoneKey(%q) = %q, want none", in, got)
		}
	}
}

func TestCompanyKey(t *testing.T) {
	for _, tc := range [][2]string{
		{"Müller GmbH", "Mueller Gesellschaft mit beschränkter Haftung"},
		{"Schmidt e.K.", "schmidt eingetragener Kaufmann"},
		{"Bau AG", "BAU Aktiengesellschaft"},
		{"Alpha GmbH & Co. KG", "alpha gmbh & co kg"},
		{"Nord UG (haftungsbeschränkt)", "Nord Unternehmergesellschaft (haftungsbeschränkt)"},
	} {
		if a, b := CompanyKey(tc[0]), CompanyKey(tc[1]); a != b {
			t.Errorf("CompanyKey(%q) = %q, CompanyKey(%q) = %q", tc[0], a, tc[1], b)
		}
	}
	if CompanyKey("Müller GmbH") == CompanyKey("Müller AG") {
		t.Error("GmbH and AG agree")
	}
}
