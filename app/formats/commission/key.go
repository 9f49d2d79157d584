package commission

import (
	"strings"
	"unicode"
)

// PolicyKey normalises a policy number for matching a statement's entry to a contract: upper
// case, every character that is not a letter or digit dropped (spaces, dashes, dots, slashes,
// and the rest: insurers print the same number as "12-345/6", "12 345.6" or "123456"), then
// leading zeros dropped (GDV right-aligns and zero-fills some numbers: "0012345" is 12345).
// A number of zeros only has the key "": it matches nothing. The SQL side reads the same rule
// from this function's results (the matcher compares keys computed here), so there is one rule.
func PolicyKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	lead := true
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		if lead && r == '0' {
			continue
		}
		lead = false
		b.WriteString(strings.ToUpper(string(r)))
	}
	return b.String()
}
