package signatures

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
)

// TestPDFName: the signed PDF's file name keeps the title readable, never a path, and stays
// within 255 characters with its suffix. Catches: a title with "/" filed as a path fragment,
// an over-long title cutting off ".pdf", and an empty title giving "(unterschrieben).pdf".
func TestPDFName(t *testing.T) {
	for _, c := range []struct{ title, suffix, want string }{
		{"Maklervertrag Erika Muster", " (unterschrieben)", "Maklervertrag Erika Muster (unterschrieben).pdf"},
		{"Vollmacht 01/2026 a\\b", "", "Vollmacht 01-2026 a-b.pdf"},
		{"  \t ", " (unterschrieben)", "Dokument (unterschrieben).pdf"},
	} {
		if got := pdfName(c.title, c.suffix); got != c.want {
			t.Errorf("pdfName(%q, %q) = %q, want %q", c.title, c.suffix, got, c.want)
		}
	}
	long := pdfName(strings.Repeat("ä", 300), " (unterschrieben)")
	if n := utf8.RuneCountInString(long); n > 255 || !strings.HasSuffix(long, " (unterschrieben).pdf") {
		t.Errorf("long title: %d characters, %q", n, long[len(long)-30:])
	}
}

// TestTruncateUTF8: the stored user agent is cut on a character boundary. Catches a cut in
// the middle of a multi-byte character (invalid UTF-8 that PostgreSQL refuses: a 500).
func TestTruncateUTF8(t *testing.T) {
	s := strings.Repeat("a", 499) + "ü" // ü is 2 bytes: byte 500 is its second
	if got := truncateUTF8(s, 500); got != strings.Repeat("a", 499) || !utf8.ValidString(got) {
		t.Errorf("got %q", got)
	}
	if got := truncateUTF8("kurz", 500); got != "kurz" {
		t.Errorf("got %q", got)
	}
}

// TestCSRFToken: a form's token is bound to its purpose, its signer and the browser's nonce.
// Catches the code form's token signing, a token of one signer used for another, and a token
// that works with any cookie.
func TestCSRFToken(t *testing.T) {
	m := New(Deps{Secret: []byte("0123456789abcdef0123456789abcdef")})
	signer, nonce := uuid.New(), "bm9uY2Ugb2YgdGhlIGJyb3dzZXI"
	tok := m.csrfToken(purposeSign, signer, nonce)
	for name, other := range map[string]string{
		"purpose": m.csrfToken(purposeCode, signer, nonce),
		"signer":  m.csrfToken(purposeSign, uuid.New(), nonce),
		"nonce":   m.csrfToken(purposeSign, signer, "b3RoZXIgbm9uY2Ugb2YgYnJvd3Nlcg"),
	} {
		if other == tok {
			t.Errorf("another %s gives the same token", name)
		}
	}
	if m.csrfToken(purposeSign, signer, nonce) != tok {
		t.Error("token not deterministic")
	}
}

// TestPages: every page renders (a template defect would be a 500 page for every signer).
func TestPages(t *testing.T) {
	d := pageData{Heading: "Maklervertrag <b>", Signer: "Erika", Action: "/sign/x", Lines: []string{"eins"}}
	d.addError("code", "falsch")
	for name, tpl := range pageTemplates {
		var b strings.Builder
		if err := tpl.ExecuteTemplate(&b, "layout", d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if strings.Contains(b.String(), "<b>") {
			t.Errorf("%s: the heading is not escaped", name)
		}
	}
}
