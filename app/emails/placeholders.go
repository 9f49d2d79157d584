package emails

import (
	"slices"
	"strings"
)

// Placeholders in templates are {{key}} (spaces inside the braces allowed: {{ key }}), the key
// letters, digits, '_' and '.', starting with a letter: contact.firstName, user.name,
// company.name. Anything else between braces is text and stays as it is.

// Placeholders lists the keys texts use, sorted and each once (what GET /email-templates shows
// and what the operator stores with a template).
func Placeholders(texts ...string) []string {
	keys := []string{}
	for _, t := range texts {
		scan(t, func(lit string) {}, func(key, _ string) {
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		})
	}
	slices.Sort(keys)
	return keys
}

// Fill replaces each {{key}} of text with values[key] in one pass over text: a value is never
// scanned again, so a value holding "{{company.iban}}" is printed literally and never
// expanded (a contact's name cannot pull other data into a mail). A key without a value
// becomes empty: a customer reads "Sehr geehrte Frau ," rather than a raw "{{contact.lastName}}".
func Fill(text string, values map[string]string) string {
	var b strings.Builder
	b.Grow(len(text))
	scan(text, func(lit string) { b.WriteString(lit) }, func(key, _ string) { b.WriteString(values[key]) })
	return b.String()
}

// scan walks t once, handing literal runs to lit and each placeholder (its key and its raw
// text) to ph.
func scan(t string, lit func(string), ph func(key, raw string)) {
	for {
		i := strings.Index(t, "{{")
		if i < 0 {
			lit(t)
			return
		}
		j := strings.Index(t[i+2:], "}}")
		if j < 0 {
			lit(t)
			return
		}
		raw := t[i : i+2+j+2]
		key := strings.TrimSpace(t[i+2 : i+2+j])
		if !validKey(key) {
			// Not a placeholder: keep "{{" as text and look again after it, so "{{{{a}}" still
			// finds {{a}}.
			lit(t[:i+2])
			t = t[i+2:]
			continue
		}
		lit(t[:i])
		ph(key, raw)
		t = t[i+len(raw):]
	}
}

func validKey(k string) bool {
	if k == "" || len(k) > 100 {
		return false
	}
	for i, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '_' || r == '.'):
		default:
			return false
		}
	}
	return true
}
