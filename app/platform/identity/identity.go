// Package identity decides whether two records describe the same person: the one rule every
// area that matches people uses (intake duplicates, the duplicates of a lead conversion, and
// later contact matching and portfolio imports). It imports no area; areas import it.
//
// The rule (docs/decisions/leads-and-intake.md "Duplicates"): records sharing an e-mail address are one person.
// Records sharing only a phone number are one person only when nothing says otherwise: they do
// not hold two different e-mail addresses, both carry a last name and the last names are equal
// after NameKey, and their first names, where both give one, are equal after NameKey. A landline
// is shared by a household (often of one last name), an office number by a whole firm: a shared
// phone alone never makes two people one.
package identity

import (
	"slices"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/unicode/norm"
)

// Person is what the rule looks at: the values as stored or submitted ("" when unknown). The
// keys are computed by Of; records read from the database may fill them from stored keys.
type Person struct {
	EmailKey  string   // EmailKey of the e-mail address
	PhoneKeys []string // PhoneKey of each phone number (a contact has several, a lead one)
	FirstName string   // as entered; compared by NameKey
	LastName  string   // as entered; compared by NameKey
}

// Of builds a Person from raw values; phones that are no phone numbers are left out.
func Of(email, firstName, lastName string, phones ...string) Person {
	p := Person{FirstName: firstName, LastName: lastName}
	if strings.TrimSpace(email) != "" {
		p.EmailKey = EmailKey(email)
	}
	for _, ph := range phones {
		if k, ok := PhoneKey(ph); ok {
			p.PhoneKeys = append(p.PhoneKeys, k)
		}
	}
	return p
}

// PhoneKey returns the first phone key of p, or "".
func (p Person) PhoneKey() string {
	if len(p.PhoneKeys) == 0 {
		return ""
	}
	return p.PhoneKeys[0]
}

// MatchedBy names how a and b match, in the spec's matchedBy values: "email" when they share an
// e-mail key; "phone" when they share a phone key and are one person (by the e-mail, or because
// they do not disagree: see the package comment). Empty: two people, or nothing shared.
func MatchedBy(a, b Person) []string {
	var out []string
	email := a.EmailKey != "" && a.EmailKey == b.EmailKey
	if email {
		out = append(out, "email")
	}
	if sharePhone(a, b) && (email || !disagree(a, b)) {
		out = append(out, "phone")
	}
	return out
}

// Same reports whether a and b are one person: they share an e-mail address, or they share a
// phone number and do not disagree on who they are.
func Same(a, b Person) bool { return len(MatchedBy(a, b)) > 0 }

func sharePhone(a, b Person) bool {
	for _, k := range a.PhoneKeys {
		if k != "" && slices.Contains(b.PhoneKeys, k) {
			return true
		}
	}
	return false
}

// disagree reports whether two records sharing a phone number describe different people: two
// different e-mail addresses, last names that are missing on either side or differ, or two
// different first names.
func disagree(a, b Person) bool {
	if a.EmailKey != "" && b.EmailKey != "" && a.EmailKey != b.EmailKey {
		return true
	}
	la, lb := NameKey(a.LastName), NameKey(b.LastName)
	if la == "" || lb == "" || la != lb {
		return true
	}
	fa, fb := NameKey(a.FirstName), NameKey(b.FirstName)
	return fa != "" && fb != "" && fa != fb
}

// EmailKey is the matching key of an e-mail address: trimmed and lower-cased.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// PhoneKey is the matching key of a phone number: E.164, read as a German number when it has
// no country code ("0170 1234567" → "+491701234567"). ok is false for something that is no
// phone number (libphonenumber's rules, not ours). Leads and contacts share it, so a lead's
// phone finds the contact holding the same number.
func PhoneKey(phone string) (key string, ok bool) {
	n, err := phonenumbers.Parse(strings.TrimSpace(phone), "DE")
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", false
	}
	e164 := phonenumbers.Format(n, phonenumbers.E164)
	if len(e164) < 8 { // "+49" and at least five digits: shorter is no reachable number
		return "", false
	}
	return e164, true
}

// NameKey is the comparison key of a name: Unicode NFC, lower case, ä ö ü ß spelled out (ae, oe,
// ue, ss, so "Müller" and "Mueller" agree), format characters (zero-width, bidi controls)
// dropped, and every run of white space, hyphens and other dashes one space, trimmed: so
// "Müller-Lüdenscheidt", "mueller lüdenscheidt" and " MÜLLER – LÜDENSCHEIDT " agree, while
// "Müller" and "Müller-Lüdenscheidt" do not (a double name is another name). Other accents are
// kept: "Muller" is not "Müller".
func NameKey(name string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFC.String(name) {
		switch {
		case unicode.IsSpace(r) || unicode.Is(unicode.Pd, r):
			space = b.Len() > 0
			continue
		case unicode.Is(unicode.Cf, r) || unicode.IsControl(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		// ToLower makes ẞ ß, so SpellUmlaut's lower-case spellings are the only ones used here.
		r = unicode.ToLower(r)
		if spelled, ok := SpellUmlaut(r); ok {
			b.WriteString(spelled)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// umlauts are the German letters spelled out in ASCII (ä → ae, Ä → Ae, ß → ss), as Germans
// write them where the letter is not available.
var umlauts = map[rune]string{'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue", 'ß': "ss"}

// SpellUmlaut spells r out in ASCII when it is ä, ö, ü, Ä, Ö, Ü or ß: the one spelling of
// NameKey ("Müller" agrees with "Mueller") and of the ASCII name of a download.
func SpellUmlaut(r rune) (string, bool) {
	s, ok := umlauts[r]
	return s, ok
}

// legalForms are the spelled-out German legal forms and their short forms, longest first.
var legalForms = [][2]string{
	{"gesellschaft mit beschraenkter haftung und compagnie kommanditgesellschaft", "gmbh & co kg"},
	{"unternehmergesellschaft haftungsbeschraenkt", "ug"},
	{"ug haftungsbeschraenkt", "ug"},
	{"gesellschaft mit beschraenkter haftung", "gmbh"},
	{"gesellschaft buergerlichen rechts", "gbr"},
	{"kommanditgesellschaft auf aktien", "kgaa"},
	{"eingetragener kaufmann", "ek"},
	{"eingetragene kauffrau", "ek"},
	{"offene handelsgesellschaft", "ohg"},
	{"kommanditgesellschaft", "kg"},
	{"aktiengesellschaft", "ag"},
	{"eingetragener verein", "ev"},
	{"eingetragene genossenschaft", "eg"},
}

// CompanyKey is the comparison key of a company name: NameKey, punctuation (. , ( ) and "&"
// spaced) dropped, and a spelled-out legal form replaced by its short form, so "Müller GmbH",
// "mueller gmbh" and "Müller Gesellschaft mit beschränkter Haftung" agree, as do "Schmidt e.K."
// and "Schmidt eingetragener Kaufmann".
func CompanyKey(name string) string {
	s := NameKey(strings.Map(func(r rune) rune {
		switch r {
		case '.', ',', '(', ')', '"', '\'':
			return -1
		case '&', '+', '/':
			return ' '
		}
		return r
	}, name))
	for _, lf := range legalForms {
		s = strings.ReplaceAll(s, lf[0], lf[1])
	}
	s = strings.ReplaceAll(s, "&", " ")
	s = strings.ReplaceAll(s, "co kg", "cokg")
	return strings.Join(strings.Fields(s), " ")
}
