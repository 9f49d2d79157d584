package appointments

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestICalWriter_Fold: RFC 5545 §3.1 limits every physical line to 75 octets, the leading
// space of a continuation line included, so continuation lines carry at most 74 octets of the
// value; a fold never splits a UTF-8 sequence, and unfolding (removing CRLF + space) gives the
// line back. Catches the fold at a space plus 75 octets (76-octet continuation lines).
func TestICalWriter_Fold(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"ascii, exactly two full chunks", "SUMMARY:" + strings.Repeat("a", 75-8+74)},
		{"ascii, long", "DESCRIPTION:" + strings.Repeat("0123456789", 40)},
		{"ascii, 75 octets stays one line", strings.Repeat("x", 75)},
		{"ascii, 76 octets", strings.Repeat("x", 76)},
		{"two-byte umlauts", "LOCATION:" + strings.Repeat("ä", 200)},
		{"three-byte euro signs, offset by one", "X:" + strings.Repeat("€", 150)},
		{"four-byte emoji across every boundary", "SUMMARY:a" + strings.Repeat("😀", 90)},
		{"mixed", "DESCRIPTION:" + strings.Repeat("Müller € 😀 Straße ", 30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w icalWriter
			w.line(tc.in)
			out := w.b.String()
			if !strings.HasSuffix(out, "\r\n") {
				t.Fatalf("no CRLF at the end: %q", out)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n")
			for i, l := range lines {
				if len(l) > 75 {
					t.Errorf("line %d has %d octets, more than 75: %q", i, len(l), l)
				}
				if i > 0 && (!strings.HasPrefix(l, " ") || len(l) < 2) {
					t.Errorf("continuation line %d does not start with a space and content: %q", i, l)
				}
				if i > 0 && len(l)-1 > 74 {
					t.Errorf("continuation line %d carries %d octets, more than 74", i, len(l)-1)
				}
				if !utf8.ValidString(l) {
					t.Errorf("line %d splits a UTF-8 sequence: %q", i, l)
				}
			}
			if got := strings.ReplaceAll(strings.TrimSuffix(out, "\r\n"), "\r\n ", ""); got != tc.in {
				t.Errorf("unfolded %q, want %q", got, tc.in)
			}
			if len(tc.in) <= 75 && len(lines) != 1 {
				t.Errorf("a line of %d octets was folded", len(tc.in))
			}
		})
	}
}
