package gdv

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Encoding names, the values of Options.Encoding and Summary.Encoding.
const (
	EncodingAuto      = "auto"
	EncodingLatin9    = "iso-8859-15"
	EncodingLatin1    = "iso-8859-1"
	EncodingWindows   = "windows-1252"
	EncodingCP850     = "cp850"
	EncodingUTF8      = "utf-8"
	EncodingMacintosh = "macintosh"
)

// Encodings lists the encodings the reader can be told to use.
func Encodings() []string {
	return []string{EncodingAuto, EncodingLatin9, EncodingLatin1, EncodingWindows, EncodingCP850, EncodingUTF8, EncodingMacintosh}
}

// NormalizeEncoding returns the canonical name of an encoding label ("latin1", "ISO-8859-1",
// "ibm850", "utf8", "" for auto …); ok is false for an encoding the reader does not read.
func NormalizeEncoding(label string) (name string, ok bool) {
	l := strings.ToLower(strings.TrimSpace(label))
	l = strings.NewReplacer("_", "-", " ", "-").Replace(l)
	switch l {
	case "", "auto":
		return EncodingAuto, true
	case "iso-8859-15", "iso8859-15", "latin9", "latin-9", "l9":
		return EncodingLatin9, true
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
		return EncodingLatin1, true
	case "windows-1252", "cp1252", "win1252", "ansi": // "ANSI" in Windows tools is Windows-1252
		return EncodingWindows, true
	case "cp850", "ibm850", "ibm-850", "850", "dos", "ascii", "dos-850":
		return EncodingCP850, true
	case "utf-8", "utf8":
		return EncodingUTF8, true
	case "macintosh", "mac", "macroman", "mac-roman", "x-mac-roman":
		return EncodingMacintosh, true
	}
	return "", false
}

// charset decodes the bytes of one field. Single-byte charsets go through a table; UTF-8 is
// validated rune by rune. Records are sliced by character position before decoding, so a
// UTF-8 file is sliced by runes, not bytes (see record.slice).
type charset struct {
	name  string
	utf8  bool
	table [256]rune // single-byte charsets; 0xFFFD for bytes that are no text
}

func newCharset(name string) *charset {
	c := &charset{name: name}
	var cm *charmap.Charmap
	switch name {
	case EncodingUTF8:
		c.utf8 = true
		return c
	case EncodingLatin1:
		cm = charmap.ISO8859_1
	case EncodingWindows:
		cm = charmap.Windows1252
	case EncodingCP850:
		cm = charmap.CodePage850
	case EncodingMacintosh:
		cm = charmap.Macintosh
	default: // EncodingLatin9 and the undecided state (ASCII so far)
		cm = charmap.ISO8859_15
	}
	for b := range 256 {
		c.table[b] = cm.DecodeByte(byte(b))
	}
	if name == EncodingLatin1 || name == EncodingLatin9 || name == "" {
		// 0x80-0x9F are C1 control codes in ISO-8859-x and never text in a GDV file; the
		// bytes found there in practice are Windows-1252 punctuation (the WHATWG reading of
		// "ISO-8859-1"). Where Windows-1252 has no character either, the byte stays invalid.
		for b := 0x80; b < 0xA0; b++ {
			r := charmap.Windows1252.DecodeByte(byte(b))
			if r >= 0x80 && r < 0xA0 { // undefined in Windows-1252, decoded as itself
				r = utf8.RuneError
			}
			c.table[b] = r
		}
	}
	for b := range 0x20 {
		c.table[b] = utf8.RuneError
	}
	c.table[0] = ' ' // NUL is padding in some exports
	c.table[0x7F] = utf8.RuneError
	return c
}

// decode returns the field's text without leading and trailing blanks; bad reports bytes that
// are no text (control codes, invalid UTF-8), replaced by U+FFFD.
func (c *charset) decode(b []byte) (s string, bad bool) {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == 0) {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == 0) {
		j--
	}
	b = b[i:j]
	ascii := true
	for _, x := range b {
		if x < 0x20 || x >= 0x7F {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), false
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	if c.utf8 {
		for len(b) > 0 {
			r, n := utf8.DecodeRune(b)
			b = b[n:]
			switch {
			case r == utf8.RuneError && n <= 1, r < 0x20 && r != 0, r >= 0x7F && r < 0xA0:
				bad = true
				r = utf8.RuneError
			case r == 0:
				r = ' '
			}
			sb.WriteRune(r)
		}
		return sb.String(), bad
	}
	for _, x := range b {
		r := c.table[x]
		if r == utf8.RuneError {
			bad = true
		}
		sb.WriteRune(r)
	}
	return sb.String(), bad
}

// detectWindow is how much of the file encoding detection looks at, from the first record
// that holds a byte outside ASCII.
const detectWindow = 64 << 10

// detectEncoding decides the encoding of a file from a window of its bytes (taken where the
// first non-ASCII byte appears; everything before is ASCII and reads the same in every
// candidate). UTF-8 when the window is valid UTF-8 with multi-byte sequences (Latin-1 text is
// almost never valid UTF-8: "ü" is the lone byte 0xFC). Otherwise CP850 against ISO-8859-15:
// each candidate scores the letters its reading makes of the high bytes, in context (a
// lower-case letter after a letter, a capital before a lower-case letter: "Sekretärin",
// "Österreich") and loses for control codes and box-drawing characters; ISO-8859-15, the
// format's own encoding, wins ties.
func detectEncoding(w []byte) string {
	if validUTF8Prefix(w) && hasMultiByte(w) {
		return EncodingUTF8
	}
	latin := newCharset(EncodingLatin9)
	dos := newCharset(EncodingCP850)
	if score(dos, w) > score(latin, w) {
		return EncodingCP850
	}
	return EncodingLatin9
}

// score rates how much a reading of w looks like German text.
func score(c *charset, w []byte) int {
	s := 0
	at := func(i int) rune {
		if i < 0 || i >= len(w) {
			return ' '
		}
		return c.table[w[i]]
	}
	for i, b := range w {
		if b < 0x80 {
			continue
		}
		r := c.table[b]
		switch {
		case r == utf8.RuneError || (r >= 0x80 && r < 0xA0):
			s -= 5
		case r >= 0x2500 && r <= 0x259F: // box drawing and blocks: DOS art, not names
			s -= 3
		case unicode.IsLower(r) && unicode.IsLetter(at(i-1)):
			s += 2
		case unicode.IsUpper(r) && unicode.IsLower(at(i+1)):
			s += 2
		case unicode.IsLetter(r):
			s++
		}
	}
	return s
}

// validUTF8Prefix is utf8.Valid, except that a sequence cut off by the end of the window
// does not count against it.
func validUTF8Prefix(w []byte) bool {
	for i := 0; i < len(w); {
		if w[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(w[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(w)-i < utf8.UTFMax && !utf8.FullRune(w[i:])
		}
		i += n
	}
	return true
}

func hasMultiByte(w []byte) bool {
	for _, b := range w {
		if b >= 0x80 {
			return true
		}
	}
	return false
}

// ErrUnknownEncoding is returned (wrapped) by NewReader and Generate for an encoding they do
// not read.
var ErrUnknownEncoding = errors.New("gdv: unknown encoding")

func errUnknownEncoding(label string) error {
	return fmt.Errorf("%w %q (one of %s)", ErrUnknownEncoding, label, strings.Join(Encodings(), ", "))
}
