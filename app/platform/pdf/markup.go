package pdf

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is what a template line is; it is decided on the template's line, before any value is
// filled in, so a value never turns into markup.
type kind int

const (
	kindText kind = iota
	kindBlank
	kindH1
	kindH2
	kindBullet
	kindRule
	kindPageBreak
	kindSignature
)

// line is one parsed template line: its kind and, for text-bearing kinds, the parts between
// which placeholders sit (parts[i] is literal text, names[i] the placeholder after it).
type line struct {
	no    int // 1-based line number in the body, for MarkupError
	kind  kind
	parts []string
	names []string
	role  string // kindSignature
}

// MarkupError is a template body the renderer cannot read: a {{…}} that is neither a
// placeholder name nor a signature field, or a signature field that does not stand alone on
// its line. Line is 1-based.
type MarkupError struct {
	Line   int
	Reason string
}

func (e *MarkupError) Error() string {
	return fmt.Sprintf("pdf: template line %d: %s", e.Line, e.Reason)
}

const signaturePrefix = "signature:"

// parse reads a body into lines. It stops at the first markup error.
func parse(body string) ([]line, error) {
	body = strings.ReplaceAll(strings.ToValidUTF8(body, "\uFFFD"), "\r\n", "\n")
	raw := strings.Split(body, "\n")
	out := make([]line, 0, len(raw))
	for i, s := range raw {
		l, err := parseLine(i+1, strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

func parseLine(no int, s string) (line, error) {
	l := line{no: no}
	switch {
	case s == "":
		l.kind = kindBlank
		return l, nil
	case s == "---":
		l.kind = kindRule
		return l, nil
	case s == "[[pagebreak]]":
		l.kind = kindPageBreak
		return l, nil
	case strings.HasPrefix(s, "## "):
		l.kind, s = kindH2, strings.TrimSpace(s[3:])
	case strings.HasPrefix(s, "# "):
		l.kind, s = kindH1, strings.TrimSpace(s[2:])
	case strings.HasPrefix(s, "- "):
		l.kind, s = kindBullet, strings.TrimSpace(s[2:])
	}
	parts, names, err := splitPlaceholders(s)
	if err != nil {
		return l, &MarkupError{Line: no, Reason: err.Error()}
	}
	for i, n := range names {
		role, ok := strings.CutPrefix(n, signaturePrefix)
		if !ok {
			continue
		}
		// A signature box is a block of its own: inline it would have no place to go.
		if l.kind != kindText || len(names) != 1 || parts[0] != "" || parts[1] != "" {
			return l, &MarkupError{Line: no, Reason: fmt.Sprintf("{{%s}} must stand alone on its line", names[i])}
		}
		l.kind, l.role = kindSignature, role
		return l, nil
	}
	l.parts, l.names = parts, names
	return l, nil
}

// splitPlaceholders cuts s at its {{name}} placeholders: len(parts) == len(names)+1. A "{{"
// without a closing "}}" is literal text; a closed one with anything but a name is an error
// (a typo such as {{contact name}} would otherwise print as it stands in every document).
func splitPlaceholders(s string) (parts, names []string, err error) {
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			break
		}
		inner := strings.TrimSpace(s[i+2 : i+2+j])
		if role, ok := strings.CutPrefix(inner, signaturePrefix); ok {
			if !validRole(role) {
				return nil, nil, fmt.Errorf("signature role %q: use lower-case letters and _", role)
			}
		} else if !validName(inner) {
			return nil, nil, fmt.Errorf("placeholder {{%s}}: a name has letters, digits, _ and . only", inner)
		}
		parts = append(parts, s[:i])
		names = append(names, inner)
		s = s[i+2+j+2:]
	}
	return append(parts, s), names, nil
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

func validRole(r string) bool {
	if r == "" {
		return false
	}
	for _, c := range r {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

// Check reports the first markup error of a template body (a *MarkupError), or nil. Render
// returns the same error; doctemplates checks a body before it stores it.
func Check(body string) error {
	_, err := parse(body)
	return err
}

// Placeholders are the names of the {{placeholders}} of a template body, sorted, without
// repeats and without the signature fields. Lines with markup errors contribute nothing
// (Check names them).
func Placeholders(body string) []string {
	var out []string
	for _, l := range parseLenient(body) {
		out = append(out, l.names...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SignatureRoles are the roles of the signature fields ({{signature:contact}}) of a body, in
// order of first appearance.
func SignatureRoles(body string) []string {
	var out []string
	for _, l := range parseLenient(body) {
		if l.kind == kindSignature && !slices.Contains(out, l.role) {
			out = append(out, l.role)
		}
	}
	return out
}

// parseLenient parses line by line, skipping lines with markup errors.
func parseLenient(body string) []line {
	body = strings.ReplaceAll(strings.ToValidUTF8(body, "\uFFFD"), "\r\n", "\n")
	var out []line
	for i, s := range strings.Split(body, "\n") {
		if l, err := parseLine(i+1, strings.TrimSpace(s)); err == nil {
			out = append(out, l)
		}
	}
	return out
}

// fill builds the text of a line from its parts and the values, in one pass: a value is
// inserted as it is and never scanned again. Missing names are added to missing.
func fill(l line, values map[string]string, missing map[string]bool) string {
	if len(l.names) == 0 {
		return cleanValue(l.parts[0])
	}
	var b strings.Builder
	for i, p := range l.parts {
		b.WriteString(cleanValue(p))
		if i < len(l.names) {
			v, ok := values[l.names[i]]
			if !ok {
				missing[l.names[i]] = true
				continue
			}
			b.WriteString(cleanValue(v))
		}
	}
	return b.String()
}

// cleanValue makes a value printable: valid UTF-8, line breaks as \n, other control
// characters as spaces (a NUL or a tab has no glyph and would break the text operators).
func cleanValue(v string) string {
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	v = strings.ReplaceAll(v, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r == '\r' || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, v)
}

// roleLabel is the German caption of a signature box's role.
func roleLabel(role string) string {
	switch role {
	case "contact":
		return "Kunde/Kundin"
	case "broker":
		return "Makler/in"
	}
	return role
}
