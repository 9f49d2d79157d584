package gdv

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// RecordLen is the length of a GDV record in characters.
const RecordLen = 256

// maxRecordBytes is the most bytes one record can take: 256 four-byte UTF-8 sequences plus a
// line end.
const maxRecordBytes = RecordLen*utf8.UTFMax + 2

// record is one physical record: the bytes of its 256 characters (fewer when the sender
// stripped trailing blanks), sliced by character position.
type record struct {
	line  int64
	raw   []byte
	offs  []int32 // UTF-8 only: byte offset of each character, len chars+1
	chars int
	utf8  bool

	// resolved when the record arrives
	satzart string
	layout  *Layout
	part    int
}

// slice returns the bytes of the field at 1-based position pos, n characters long: shorter
// or empty when the record is short (the missing characters are blanks).
func (r *record) slice(pos, n int) []byte {
	from, to := pos-1, pos-1+n
	if from >= r.chars || from < 0 {
		return nil
	}
	to = min(to, r.chars)
	if r.offs == nil {
		return r.raw[from:to]
	}
	return r.raw[r.offs[from]:r.offs[to]]
}

// at returns the character at 1-based position pos when it is ASCII, a blank beyond the end,
// 0 for anything else.
func (r *record) at(pos int) byte {
	b := r.slice(pos, 1)
	if len(b) == 0 {
		return ' '
	}
	if len(b) > 1 || b[0] >= utf8.RuneSelf {
		return 0
	}
	return b[0]
}

// text returns the record as text for an issue excerpt, trailing blanks removed.
func (r *record) text(c *charset) string {
	cs := c
	if r.utf8 && !c.utf8 {
		cs = utf8Charset
	}
	s, _ := cs.decode(r.raw)
	return s
}

var utf8Charset = &charset{name: EncodingUTF8, utf8: true}

// line ends seen, for Summary.LineEnding
const (
	endLF = 1 << iota
	endCRLF
	endCR
	endNone
)

var errUTF16 = errors.New("UTF-16")

// frame reads the next record. Records are 256 characters, each followed by LF, CRLF or
// nothing; a line may be shorter (trailing blanks stripped) and is then padded with blanks.
// The first record decides whether the file has line ends: without them, the next record
// starts right after 256 characters; with them, more than 256 characters on a line are an
// anomaly (dropped with a warning, or a further record when they start like one).
func (r *Reader) frame() (*record, error) {
	if !r.started {
		r.started = true
		if head, _ := r.br.Peek(3); bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
			_, _ = r.br.Discard(3)
			r.decide(EncodingUTF8, true)
			r.bom = true
		} else if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
			return nil, errUTF16
		}
	}
	for {
		b, err := r.br.Peek(1)
		if len(b) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		switch b[0] {
		case '\n':
			_, _ = r.br.Discard(1)
			r.lineNo++
			continue
		case '\r':
			_, _ = r.br.Discard(1)
			continue
		case 0x1A: // DOS end-of-file mark
			return nil, io.EOF
		}
		break
	}
	win, err := r.br.Peek(maxRecordBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		if len(win) == 0 {
			return nil, err
		}
	}
	if r.last != "0001" && bytes.HasPrefix(win, []byte("0001")) {
		r.undecide() // a new package: its sender's encoding
	}
	if !r.decided && hasHighByte(win[:min(len(win), RecordLen)]) { // undecided: a byte is a character
		w, _ := r.br.Peek(detectWindow)
		r.decide(detectEncoding(thisPackage(w)), true)
		win, _ = r.br.Peek(maxRecordBytes)
	}
	rec := &r.cur
	*rec = record{line: r.lineNo + 1}
	n, chars, stop := scan(win, r.cs.utf8)
	raw := win[:n]
	consumed := n
	ending := endNone
	switch stop {
	case stopLF:
		consumed++ // the '\n'
		ending = endLF
		if n > 0 && raw[n-1] == '\r' {
			raw = raw[:n-1]
			chars--
			ending = endCRLF
		}
		r.setMode(modeLines)
	case stopFull:
		rest := win[n:]
		switch {
		case len(rest) >= 2 && rest[0] == '\r' && rest[1] == '\n':
			consumed += 2
			ending = endCRLF
			r.setMode(modeLines)
		case len(rest) >= 1 && rest[0] == '\n':
			consumed++
			ending = endLF
			r.setMode(modeLines)
		case len(rest) >= 1 && rest[0] == '\r':
			consumed++
			for consumed < len(win) && win[consumed] == '\r' { // "\r\r\n" from a double conversion
				consumed++
			}
			ending = endCR
			if consumed < len(win) && win[consumed] == '\n' {
				consumed++
				ending = endCRLF
			}
			r.setMode(modeLines)
		case len(rest) == 0:
		case r.mode == modeLines && !looksLikeRecord(rest):
			// more than 256 characters on a line
			if u, ok := r.utf8Line(win); ok {
				r.copyRecord(rec, u, true)
				r.endings |= endLF
				r.lineNo++
				_, _ = r.br.Discard(len(u) + lineEndLen(win[len(u):]))
				r.issue(Warning, "encoding_mixed", rec, "", "line is UTF-8 in a file read as "+r.cs.name+"; read this line as UTF-8", "")
				return rec, nil
			}
			r.copyRecord(rec, raw, false)
			rec.chars = chars
			extra, err := r.dropRestOfLine(n)
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimRight(extra, " \x00")) > 0 {
				r.issue(Warning, "record_too_long", rec, "",
					"line is longer than 256 characters; the characters after position 256 are ignored", excerpt(r.cs, extra))
			}
			r.endings |= endLF
			r.lineNo++
			return rec, nil
		default:
			if r.mode == modeLines {
				r.issue(Warning, "line_break_missing", &record{line: r.lineNo + 1}, "",
					"a record follows on the same line without a line break; read as two records", "")
			}
			r.setMode(modeFixed)
		}
	}
	r.copyRecord(rec, raw, r.cs.utf8)
	rec.chars = chars
	if ending != endNone || (stop == stopFull && consumed < len(win)) {
		r.endings |= ending // the last record of a file may end without line end in any file
	}
	r.lineNo++
	_, _ = r.br.Discard(consumed)
	return rec, nil
}

const (
	stopEOF = iota
	stopLF
	stopFull
)

// scan counts the characters of the next record in w: it stops at a line feed, after 256
// characters, or at the end of w.
func scan(w []byte, isUTF8 bool) (n, chars, stop int) {
	if !isUTF8 { // one byte, one character
		head := w[:min(len(w), RecordLen+1)]
		if i := bytes.IndexByte(head, '\n'); i >= 0 && i <= RecordLen {
			return i, i, stopLF
		}
		if len(w) >= RecordLen+1 || (len(w) == RecordLen) {
			return RecordLen, RecordLen, stopFull
		}
		return len(w), len(w), stopEOF
	}
	for n < len(w) {
		c := w[n]
		if c == '\n' {
			return n, chars, stopLF
		}
		if chars == RecordLen {
			return n, chars, stopFull
		}
		if isUTF8 && c >= utf8.RuneSelf {
			_, sz := utf8.DecodeRune(w[n:])
			n += sz
		} else {
			n++
		}
		chars++
	}
	if chars == RecordLen {
		return n, chars, stopFull
	}
	return n, chars, stopEOF
}

// copyRecord copies raw into the reader's buffer (bufio reuses its own) and indexes the
// characters of a UTF-8 record.
func (r *Reader) copyRecord(rec *record, raw []byte, isUTF8 bool) {
	r.buf = append(r.buf[:0], raw...)
	rec.raw = r.buf
	rec.utf8 = isUTF8
	rec.offs = nil
	rec.chars = len(raw)
	if !isUTF8 {
		return
	}
	r.offs = r.offs[:0]
	for i := 0; i < len(raw); {
		r.offs = append(r.offs, int32(i))
		if raw[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, sz := utf8.DecodeRune(raw[i:])
		i += sz
	}
	r.offs = append(r.offs, int32(len(raw)))
	rec.offs = r.offs
	rec.chars = len(r.offs) - 1
}

// utf8Line reports whether the line at the start of w (up to its line feed) is valid UTF-8 of
// at most 256 characters with multi-byte characters: a UTF-8 line in a file read as a
// single-byte encoding. It returns the line without its line end.
func (r *Reader) utf8Line(w []byte) ([]byte, bool) {
	if r.cs.utf8 {
		return nil, false
	}
	i := bytes.IndexByte(w, '\n')
	if i < 0 {
		return nil, false
	}
	line := bytes.TrimSuffix(w[:i], []byte{'\r'})
	if !utf8.Valid(line) || utf8.RuneCount(line) > RecordLen || !hasHighByte(line) {
		return nil, false
	}
	return line, true
}

func lineEndLen(w []byte) int {
	switch {
	case bytes.HasPrefix(w, []byte("\r\n")):
		return 2
	case bytes.HasPrefix(w, []byte("\n")):
		return 1
	}
	return 0
}

// dropRestOfLine discards the record's n bytes and the rest of its line, returning at most
// 256 bytes of what was dropped for the issue excerpt. Memory stays bounded on a line of any
// length.
func (r *Reader) dropRestOfLine(n int) ([]byte, error) {
	_, _ = r.br.Discard(n)
	var extra []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(extra) < RecordLen {
			extra = append(extra, chunk[:min(len(chunk), RecordLen-len(extra))]...)
		}
		if err == nil || errors.Is(err, io.EOF) {
			return bytes.TrimRight(extra, "\r\n"), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// thisPackage cuts a detection window before the next Vorsatz: the next package may come
// from another sender in another encoding.
func thisPackage(w []byte) []byte {
	if i := bytes.Index(w, []byte("\n0001")); i >= 0 {
		return w[:i+1]
	}
	if bytes.IndexByte(w, '\n') >= 0 {
		return w
	}
	for k := RecordLen; k+4 <= len(w); k += RecordLen { // records without line ends
		if bytes.HasPrefix(w[k:], []byte("0001")) {
			return w[:k]
		}
	}
	return w
}

// looksLikeRecord reports whether w starts like a GDV record: a four-digit Satzart.
func looksLikeRecord(w []byte) bool {
	if len(w) < 4 {
		return false
	}
	for _, c := range w[:4] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// hasHighByte reports a byte outside ASCII in the line at the start of w.
func hasHighByte(w []byte) bool {
	end := bytes.IndexByte(w, '\n')
	if end < 0 {
		end = len(w)
	}
	for _, b := range w[:end] {
		if b >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func excerpt(c *charset, b []byte) string {
	s, _ := c.decode(b)
	if len([]rune(s)) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return s
}

const (
	modeUnknown = iota
	modeLines
	modeFixed
)

func (r *Reader) setMode(m int) {
	if r.mode == modeUnknown {
		r.mode = m
	}
}

func lineEndingName(e int) string {
	switch e {
	case endLF:
		return "lf"
	case endCRLF:
		return "crlf"
	case endCR:
		return "cr"
	case endNone:
		return "none"
	case 0:
		return ""
	}
	return "mixed"
}
