package intake

import (
	"strings"
	"unicode/utf8"
)

// decoderFor returns the decoder of a form charset, or false for one we do not read. Only
// UTF-8 and the Latin-1 family are read: as the WHATWG Encoding Standard does, ISO-8859-1,
// US-ASCII and their aliases are read as Windows-1252, which browsers actually send for them.
// With no charset, UTF-8 is used when the bytes are UTF-8 and Windows-1252 otherwise (a page in
// ISO-8859-1 posts unlabelled Latin-1).
func decoderFor(charset string) (func([]byte) (string, bool), bool) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "":
		return func(b []byte) (string, bool) {
			if utf8.Valid(b) {
				return string(b), true
			}
			return windows1252(b), true
		}, true
	case "utf-8", "utf8", "unicode-1-1-utf-8":
		return func(b []byte) (string, bool) { return string(b), utf8.Valid(b) }, true
	case "iso-8859-1", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "iso-ir-100", "latin1", "l1",
		"cp819", "ibm819", "csisolatin1", "windows-1252", "cp1252", "x-cp1252", "us-ascii", "ascii", "ansi_x3.4-1968":
		return func(b []byte) (string, bool) { return windows1252(b), true }, true
	}
	return nil, false
}

// cp1252 maps the bytes 0x80-0x9F of Windows-1252; the others are Latin-1 (the code point
// equals the byte). Undefined bytes map to the C1 control of the same value.
var cp1252 = [32]rune{
	'\u20ac', '\u0081', '\u201a', '\u0192', '\u201e', '\u2026', '\u2020', '\u2021',
	'\u02c6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008d', '\u017d', '\u008f',
	'\u0090', '\u2018', '\u2019', '\u201c', '\u201d', '\u2022', '\u2013', '\u2014',
	'\u02dc', '\u2122', '\u0161', '\u203a', '\u0153', '\u009d', '\u017e', '\u0178',
}

func windows1252(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/2)
	for _, c := range b {
		switch {
		case c < 0x80:
			sb.WriteByte(c)
		case c < 0xa0:
			sb.WriteRune(cp1252[c-0x80])
		default:
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}
