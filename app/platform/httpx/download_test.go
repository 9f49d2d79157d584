package httpx

import (
	"mime"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestAttachmentDisposition(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"angebot.pdf", `attachment; filename="angebot.pdf"`},
		{"Übersicht März.pdf", `attachment; filename="Uebersicht Maerz.pdf"; filename*=UTF-8''%C3%9Cbersicht%20M%C3%A4rz.pdf`},
		{"Straße.txt", `attachment; filename="Strasse.txt"; filename*=UTF-8''Stra%C3%9Fe.txt`},
		{"U\u0308", `attachment; filename="Ue"; filename*=UTF-8''%C3%9C`}, // decomposed input is composed first
		{"café.doc", `attachment; filename="cafe.doc"; filename*=UTF-8''caf%C3%A9.doc`},
		{`a"b\c.txt`, `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`},
		{"日本.pdf", `attachment; filename="__.pdf"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf`},
		{"a;b=c.txt", `attachment; filename="a;b=c.txt"`},
		{"", `attachment; filename="download"`},
	} {
		got := AttachmentDisposition(c.in)
		if got != c.want {
			t.Errorf("AttachmentDisposition(%q) = %s, want %s", c.in, got, c.want)
			continue
		}
		// Go's own parser (RFC 2231/8187 aware) reads the original name back.
		if _, params, err := mime.ParseMediaType(got); err != nil || (c.in != "" && params["filename"] != norm.NFC.String(c.in)) {
			t.Errorf("%s parses as %q, %v", got, params["filename"], err)
		}
	}
}

func TestSniffType(t *testing.T) {
	eachCase(t, "SniffType", func(s string) string { return SniffType([]byte(s)) }, []stringCase{
		{"%PDF-1.7 offer", "application/pdf"},
		{"<html><script>alert(1)</script>", "text/html; charset=utf-8"},
		{"hallo", "text/plain; charset=utf-8"},
		{"\x00\x01\x02", "application/octet-stream"},
		{"\x89PNG\r\n\x1a\n", "image/png"},
	})
}

func TestCleanFilename(t *testing.T) {
	eachCase(t, "CleanFilename", func(s string) string { return CleanFilename(s, "fallback") }, []stringCase{
		{"Übersicht März.pdf", "Übersicht März.pdf"},
		{"U\u0308bersicht.pdf", "Übersicht.pdf"}, // NFD as macOS sends it → NFC
		{`C:\fakepath\x.pdf`, "x.pdf"},
		{"../../etc/passwd", "passwd"},
		{"rechnung\u202Efdp.exe", "rechnungfdp.exe"},
		{"a\x00b\tc\nd.txt", "ab c d.txt"},
		{"  \u200B ", "fallback"},
		{"..", "fallback"},
		{strings.Repeat("ä", 300), strings.Repeat("ä", MaxFilenameLen)},
	})
}

// TestServedType: a download goes out under its own type only when that type is on the
// allow-list of formats no browser runs script from; XML (rendered as XHTML, script included,
// when opened), HTML, SVG, e-mails (MHTML), scripts and anything unknown go out as
// application/octet-stream. Catches text/xml and application/xml documents served as such.
func TestServedType(t *testing.T) {
	eachCase(t, "ServedType", ServedType, []stringCase{
		{"application/pdf", "application/pdf"},
		{"image/png", "image/png"},
		{"image/jpeg", "image/jpeg"},
		{"text/plain; charset=utf-8", "text/plain; charset=utf-8"},
		{"text/csv; charset=utf-8", "text/csv; charset=utf-8"},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"Application/PDF", "Application/PDF"},
		{"text/xml; charset=utf-8", "application/octet-stream"},
		{"text/xml", "application/octet-stream"},
		{"application/xml", "application/octet-stream"},
		{"text/html; charset=utf-8", "application/octet-stream"},
		{"application/xhtml+xml", "application/octet-stream"},
		{"image/svg+xml", "application/octet-stream"},
		{"message/rfc822", "application/octet-stream"},
		{"multipart/related", "application/octet-stream"},
		{"text/javascript; charset=utf-8", "application/octet-stream"},
		{"application/x-shockwave-flash", "application/octet-stream"},
		{"application/octet-stream", "application/octet-stream"},
		{"", "application/octet-stream"},
		{"text/plain, text/html", "application/octet-stream"},
	})
}
