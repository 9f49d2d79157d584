package httpx

import (
	"io"
	"net/http"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/text/unicode/norm"

	"github.com/brokerdesk/brokerdesk/app/platform/identity"
)

// SniffType is the media type of a file by its content (the WHATWG sniffing algorithm of
// net/http), never by what an uploader claimed: what we store and serve as a file's type.
func SniffType(content []byte) string { return http.DetectContentType(content) }

// SafeTypes is the one allow-list of media types a download is served under: formats no
// browser runs script from when it opens them (PDF, raster images, plain text and CSV, RTF,
// office documents, Outlook messages). Every other type goes out as application/octet-stream:
// HTML, XHTML and SVG (active content), XML (a browser renders it as XHTML, and an XHTML
// script element in any XML document runs), e-mails (message/rfc822: MHTML), scripts, and
// whatever the sniffer or an uploader names that is not listed. Content-Disposition attachment
// and nosniff come on top: a list of what is safe, not of what is dangerous, so a type nobody
// thought of is never served as itself.
var SafeTypes = []string{
	"application/pdf",
	"image/jpeg", "image/png", "image/gif", "image/webp", "image/tiff", "image/heic", "image/heif", "image/bmp", "image/avif",
	"text/plain", "text/csv", "text/rtf", "application/rtf",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
	"application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.spreadsheet",
	"application/vnd.oasis.opendocument.presentation",
	"application/vnd.ms-outlook",
}

// ServedType is the Content-Type a download of a file of mediaType (as sniffed, parameters
// allowed) is served with: mediaType itself when its base type is in SafeTypes, else
// application/octet-stream.
func ServedType(mediaType string) string {
	base, _, _ := strings.Cut(mediaType, ";")
	for _, t := range SafeTypes {
		if strings.EqualFold(strings.TrimSpace(base), t) {
			return mediaType
		}
	}
	return "application/octet-stream"
}

// SendFile answers a download of content named name: the type sniffed from the content (as
// ServedType allows), Content-Disposition attachment (a browser saves it, never renders it on our origin) with the
// name as RFC 6266 gives it, and X-Content-Type-Options nosniff.
func SendFile(c *fiber.Ctx, name string, content []byte) error {
	return SendFileAs(c, name, SniffType(content), content)
}

// SendFileAs is SendFile with a type sniffed before (when the file was stored).
func SendFileAs(c *fiber.Ctx, name, contentType string, content []byte) error {
	downloadHeaders(c, name, contentType)
	return c.Send(content)
}

// SendStreamAs is SendFileAs for content read from r as the response is written, after the
// handler returned (and the request's transaction ended): size bytes, sent as Content-Length.
// When r fails before size bytes, the connection is closed: the client sees the response cut
// short, never a complete one. fasthttp closes r (an io.Closer) when it is done with it.
func SendStreamAs(c *fiber.Ctx, name, contentType string, r io.Reader, size int64) error {
	downloadHeaders(c, name, contentType)
	c.Context().SetBodyStream(r, int(size))
	return nil
}

func downloadHeaders(c *fiber.Ctx, name, contentType string) {
	c.Set(fiber.HeaderContentType, ServedType(contentType))
	c.Set(fiber.HeaderContentDisposition, AttachmentDisposition(name))
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
}

// MaxFilenameLen is the longest file name kept, in characters.
const MaxFilenameLen = 255

// CleanFilename is the name to store for an uploaded file: the last path element of what the
// client sent (old browsers send C:\fakepath\x.pdf), without C0/C1 control characters and
// Unicode format characters (zero-width characters, bidi controls that make
// "rechnung\u202Efdp.exe" display as "rechnungexe.pdf"), tabs and line breaks as spaces, trimmed,
// NFC, at most MaxFilenameLen characters; fallback when nothing is left.
func CleanFilename(raw, fallback string) string {
	name := raw
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, name)
	name = norm.NFC.String(strings.TrimSpace(name))
	if r := []rune(name); len(r) > MaxFilenameLen {
		name = strings.TrimSpace(string(r[:MaxFilenameLen]))
	}
	if name == "" || name == "." || name == ".." {
		return fallback
	}
	return name
}

// AttachmentDisposition is the Content-Disposition of a download named name (RFC 6266): an
// ASCII filename every client reads (umlauts spelled out, other letters without their accents,
// anything else "_") and, when that is not the name itself, filename* with the name in UTF-8
// (RFC 8187), which current browsers prefer.
//
//	Übersicht März.pdf → attachment; filename="Uebersicht Maerz.pdf"; filename*=UTF-8''%C3%9Cbersicht%20M%C3%A4rz.pdf
func AttachmentDisposition(name string) string {
	name = norm.NFC.String(name)
	fallback := asciiName(name)
	out := `attachment; filename="` + fallback + `"`
	if fallback != name && name != "" {
		out += "; filename*=UTF-8''" + extValue(name)
	}
	return out
}

// asciiName is name in printable ASCII without '"' and '\' (so it needs no escaping in a
// quoted string).
func asciiName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if spelled, ok := identity.SpellUmlaut(r); ok {
			b.WriteString(spelled)
			continue
		}
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('_')
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x80 || r == 0x7f:
			b.WriteByte('_')
		default:
			// A letter with an accent becomes its base letter (é → e); the rest "_".
			base := []rune(norm.NFD.String(string(r)))
			if len(base) > 1 && base[0] < 0x80 && unicode.IsLetter(base[0]) {
				b.WriteRune(base[0])
			} else {
				b.WriteByte('_')
			}
		}
	}
	if b.Len() == 0 {
		return "download"
	}
	return b.String()
}

// extValue percent-encodes s as an RFC 8187 value: every byte outside attr-char.
func extValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("!#$&+-.^_`|~", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}
