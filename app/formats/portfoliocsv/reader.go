package portfoliocsv

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// Options tune a Reader.
type Options struct {
	Mapping Mapping
	// Encoding of the file: "" or "auto" reads UTF-8 when the bytes are UTF-8 (a byte order
	// mark is dropped), else Windows-1252, what German spreadsheet exports write; or one of
	// gdv.Encodings().
	Encoding string
	// Comma separates the fields (default ';').
	Comma rune
	// DecimalPoint reads "1,234.56"; by default amounts are German: "1.234,56".
	DecimalPoint bool
	// MaxIssuesPerCode bounds the issues delivered per code (default 1,000).
	MaxIssuesPerCode int
}

// Reader reads a CSV portfolio as the events of package gdv: one package (KindPackage,
// contracts, issues, KindPackageEnd). A row is a contract with one person; consecutive rows
// of the same insurer and policy number add persons to the same contract.
type Reader struct {
	opt     Options
	csv     *csv.Reader
	cols    map[string]int // target → column index
	header  []string
	started bool
	done    bool
	err     error
	out     []gdv.Event
	pkg     *gdv.Package
	cur     *gdv.Contract
	curKey  string

	limit    *RecordLimit
	sum      gdv.Summary
	byCode   map[string]int64
	insurers map[string]bool
	encName  string
}

// NewReader returns a Reader of src. It fails for an invalid mapping (*MappingError) or an
// unknown encoding; a file whose header lacks a mapped column fails at the first Next with a
// *gdv.FormatError.
func NewReader(src io.Reader, opt Options) (*Reader, error) {
	if err := opt.Mapping.Validate(); err != nil {
		return nil, err
	}
	enc, ok := gdv.NormalizeEncoding(opt.Encoding)
	if !ok {
		return nil, fmt.Errorf("%w %q", gdv.ErrUnknownEncoding, opt.Encoding)
	}
	if opt.Comma == 0 {
		opt.Comma = ';'
	}
	if opt.MaxIssuesPerCode <= 0 {
		opt.MaxIssuesPerCode = 1000
	}
	br := bufio.NewReaderSize(src, 64<<10)
	in, name := Decoded(br, enc)
	r := &Reader{opt: opt, byCode: map[string]int64{}, insurers: map[string]bool{}, encName: name,
		sum: gdv.Summary{RecordsBySatzart: map[string]int64{}, PersonsByRole: map[string]int64{}}}
	r.limit = &RecordLimit{R: in}
	r.csv = csv.NewReader(r.limit)
	r.csv.Comma = opt.Comma
	r.csv.FieldsPerRecord = -1
	r.csv.LazyQuotes = true
	r.csv.ReuseRecord = true
	return r, nil
}

// Decoded wraps the input in the decoder of enc (gdv.Encoding…): a UTF-8 byte order mark is
// dropped and means UTF-8; with gdv.EncodingAuto, UTF-8 when the first 64 KB are UTF-8, else
// Windows-1252 (what German spreadsheet exports write). It returns the encoding it took. The
// commission statements' CSV reader uses it too.
func Decoded(br *bufio.Reader, enc string) (io.Reader, string) {
	if head, _ := br.Peek(3); bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
		return br, gdv.EncodingUTF8
	}
	if enc == gdv.EncodingAuto {
		w, _ := br.Peek(64 << 10)
		enc = gdv.EncodingWindows
		if validUTF8Prefix(w) {
			enc = gdv.EncodingUTF8
		}
	}
	var e encoding.Encoding
	switch enc {
	case gdv.EncodingUTF8:
		return br, enc
	case gdv.EncodingLatin1:
		e = charmap.ISO8859_1
	case gdv.EncodingLatin9:
		e = charmap.ISO8859_15
	case gdv.EncodingCP850:
		e = charmap.CodePage850
	case gdv.EncodingMacintosh:
		e = charmap.Macintosh
	default:
		e = charmap.Windows1252
	}
	return transform.NewReader(br, e.NewDecoder()), enc
}

func validUTF8Prefix(w []byte) bool {
	for i := max(0, len(w)-utf8.UTFMax+1); i < len(w); i++ { // a sequence cut by the window
		if utf8.RuneStart(w[i]) && !utf8.FullRune(w[i:]) {
			w = w[:i]
			break
		}
	}
	return utf8.Valid(w)
}

// All iterates over the events; it stops after the first error.
func (r *Reader) All() iter.Seq2[gdv.Event, error] { return gdv.All(r.Next) }

// Next returns the next event, io.EOF after the last one.
func (r *Reader) Next() (gdv.Event, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return gdv.Event{}, r.err
		}
		if r.done {
			return gdv.Event{}, io.EOF
		}
		r.step()
	}
	ev := r.out[0]
	r.out = r.out[1:]
	return ev, nil
}

// ReadAll reads src into a gdv.File.
func ReadAll(src io.Reader, opt Options) (*gdv.File, error) {
	r, err := NewReader(src, opt)
	if err != nil {
		return nil, err
	}
	return gdv.Collect(r)
}

// Summary returns the counts so far.
func (r *Reader) Summary() gdv.Summary {
	s := r.sum
	s.Encoding = r.encName
	s.EncodingDetected = r.opt.Encoding == "" || r.opt.Encoding == gdv.EncodingAuto
	s.IssuesByCode = map[string]int64{}
	for k, v := range r.byCode {
		s.IssuesByCode[k] = v
	}
	s.RecordsBySatzart = map[string]int64{"csv": s.Records}
	s.PersonsByRole = map[string]int64{}
	for k, v := range r.sum.PersonsByRole {
		s.PersonsByRole[k] = v
	}
	s.Insurers = make([]string, 0, len(r.insurers))
	for k := range r.insurers {
		s.Insurers = append(s.Insurers, k)
	}
	sort.Strings(s.Insurers)
	return s
}

func (r *Reader) step() {
	if !r.started {
		r.started = true
		r.readHeader()
		return
	}
	rec, err := r.csv.Read()
	r.limit.Reset()
	switch {
	case errors.Is(err, io.EOF):
		r.finish()
		return
	case errors.Is(err, ErrRecordTooLong):
		r.err = &gdv.FormatError{Code: "record_too_long", Detail: "a CSV record longer than 1 MB: not a portfolio export"}
		return
	case err != nil:
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			r.issue(gdv.Error, "csv_syntax", int64(pe.StartLine), "", "line not readable as CSV: "+pe.Err.Error(), "")
			return
		}
		r.err = fmt.Errorf("portfoliocsv: read: %w", err)
		return
	}
	line, _ := r.csv.FieldPos(0)
	r.row(rec, int64(line))
}

// readHeader maps the header's columns to targets; a mapped column the header lacks makes the
// file unreadable as mapped.
func (r *Reader) readHeader() {
	rec, err := r.csv.Read()
	r.limit.Reset()
	if err != nil {
		if errors.Is(err, io.EOF) {
			r.err = &gdv.FormatError{Code: "empty", Detail: "the file holds no header row"}
		} else {
			r.err = &gdv.FormatError{Code: "not_csv", Detail: "the header row is not CSV: " + err.Error()}
		}
		return
	}
	r.header = slices.Clone(rec)
	idx := map[string]int{}
	for i, h := range rec {
		if _, dup := idx[normColumn(h)]; !dup {
			idx[normColumn(h)] = i
		}
	}
	r.cols = map[string]int{}
	var missing []string
	for col, target := range r.opt.Mapping.Columns {
		i, ok := idx[normColumn(col)]
		if !ok {
			missing = append(missing, col)
			continue
		}
		r.cols[target] = i
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		r.err = &gdv.FormatError{Code: "column_missing", Detail: fmt.Sprintf("the header has no column %s (header: %s)",
			quoteList(missing), quoteList(rec))}
		return
	}
	r.pkg = &gdv.Package{Number: 1, Line: 1, Encoding: r.encName, HeaderMissing: true} // CSV has no Vorsatz or Nachsatz: Check.Status stays ""
	r.sum.Packages = 1
	hdr := *r.pkg
	r.emit(gdv.Event{Kind: gdv.KindPackage, Package: &hdr})
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

func (r *Reader) finish() {
	r.done = true
	r.flush()
	if r.pkg != nil {
		r.pkg.Insurers = make([]string, 0, len(r.insurers))
		for k := range r.insurers {
			if len(r.pkg.Insurers) < 100 {
				r.pkg.Insurers = append(r.pkg.Insurers, k)
			}
		}
		sort.Strings(r.pkg.Insurers)
		r.pkg.Check.RecordsCounted = r.pkg.Records
		r.emit(gdv.Event{Kind: gdv.KindPackageEnd, Package: r.pkg})
	}
}

// maxRecordBytes bounds one CSV record (encoding/csv would hold a line of any length).
const maxRecordBytes = 1 << 20

// ErrRecordTooLong is the error of a RecordLimit's read past maxRecordBytes.
var ErrRecordTooLong = errors.New("csv record too long (over 1 MiB)")

// RecordLimit fails a read once more than 1 MiB came since the last record (the reader of the
// CSV calls Reset after each record): memory stays bounded on input without line ends. The
// commission statements' CSV reader uses it too.
type RecordLimit struct {
	R io.Reader
	n int
}

// Reset starts the count of the next record.
func (l *RecordLimit) Reset() { l.n = 0 }

func (l *RecordLimit) Read(p []byte) (int, error) {
	if l.n > maxRecordBytes {
		return 0, ErrRecordTooLong
	}
	n, err := l.R.Read(p)
	l.n += n
	return n, err
}

func (r *Reader) emit(ev gdv.Event) { r.out = append(r.out, ev) }

func (r *Reader) issue(sev gdv.Severity, code string, line int64, field, msg, raw string) {
	if sev == gdv.Error {
		r.sum.Errors++
	} else {
		r.sum.Warnings++
	}
	r.byCode[code]++
	if r.byCode[code] > int64(r.opt.MaxIssuesPerCode) {
		r.sum.IssuesSuppressed++
		return
	}
	if len([]rune(raw)) > gdv.RecordLen {
		raw = string([]rune(raw)[:gdv.RecordLen])
	}
	r.emit(gdv.Event{Kind: gdv.KindIssue, Issue: &gdv.Issue{Line: line, Package: 1, Field: field, Severity: sev, Code: code, Message: msg, Raw: raw}})
}

// flush delivers the contract read so far.
func (r *Reader) flush() {
	if r.cur == nil {
		return
	}
	c := r.cur
	r.cur, r.curKey = nil, ""
	r.sum.Contracts++
	r.pkg.Contracts++
	r.sum.Persons += int64(len(c.Persons))
	for _, p := range c.Persons {
		for _, role := range p.Roles {
			r.sum.PersonsByRole[role.Kind]++
		}
	}
	r.emit(gdv.Event{Kind: gdv.KindContract, Contract: c})
}
