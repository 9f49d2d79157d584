package gdv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
)

// Options tune a Reader. The zero value reads any GDV file.
type Options struct {
	// Encoding of the file: "" or "auto" to detect it (ISO-8859-15 unless the bytes say
	// CP850 or UTF-8), or one of Encodings().
	Encoding string
	// MaxRecordsPerContract bounds the records one contract may have (default 10,000);
	// further records of it are dropped with an error. It bounds the reader's memory on any
	// input.
	MaxRecordsPerContract int
	// MaxIssuesPerCode bounds the issues delivered per code (default 1,000); further ones are
	// only counted in the Summary.
	MaxIssuesPerCode int
}

// EventKind says what an Event carries.
type EventKind uint8

// Event kinds, in the order a package delivers them: KindPackage, then contracts, persons
// without contract and issues as the file has them, then KindPackageEnd.
const (
	KindPackage    EventKind = iota + 1 // a Vorsatz was read: Event.Package (without its end data yet)
	KindContract                        // Event.Contract
	KindPersons                         // Event.Persons: addresses (0100) that belong to no contract
	KindIssue                           // Event.Issue
	KindPackageEnd                      // the package ended: Event.Package with Trailer and Check
)

// Event is one thing the reader delivers.
type Event struct {
	Kind     EventKind
	Package  *Package
	Contract *Contract
	Persons  []Person
	Issue    *Issue
}

// FormatError is returned when the input is not a GDV file at all: no package or contract
// was delivered.
type FormatError struct {
	Code   string // empty, not_gdv, unsupported_encoding
	Detail string
}

func (e *FormatError) Error() string { return "gdv: " + e.Detail }

// Reader reads a GDV VU-Vermittler file as a stream of events, in bounded memory: it holds
// one contract's records at a time.
//
//	rd, err := gdv.NewReader(f, gdv.Options{})
//	for ev, err := range rd.All() { … }
type Reader struct {
	br  *bufio.Reader
	opt Options

	// framing
	started bool
	mode    int
	lineNo  int64
	endings int
	buf     []byte
	offs    []int32
	cur     record

	// encoding
	cs       *charset
	decided  bool
	detected bool
	auto     bool     // Options.Encoding is auto: decided again for each package
	bom      bool     // a UTF-8 byte order mark decided the whole file
	used     []string // encodings decided, in order
	last     string   // Satzart of the last record
	doubt    int64
	altLatin *charset // the other candidate, for checkEncoding
	altDOS   *charset

	// packages and contracts
	pkg      *pkgState
	packages int
	group    group
	lastOpen map[string]*logical // scratch of assemble
	subOpen  map[string]*logical
	out      []Event
	done     bool
	err      error
	seenData bool
	early    []earlyRecord // unreadable records before the first GDV record

	typed        map[*Field]bool // the fields the typed model reads (their issues come from there)
	sum          Summary
	issuesByCode map[string]int64
	insurers     map[string]bool
}

type earlyRecord struct {
	line int64
	text string
}

type pkgState struct {
	p         *Package
	announced bool
	headerTDs int
	premium   Decimal
	insurers  map[string]bool
}

// NewReader returns a Reader of src. It fails only for an unknown Options.Encoding.
func NewReader(src io.Reader, opt Options) (*Reader, error) {
	enc, ok := NormalizeEncoding(opt.Encoding)
	if !ok {
		return nil, errUnknownEncoding(opt.Encoding)
	}
	if opt.MaxRecordsPerContract <= 0 {
		opt.MaxRecordsPerContract = 10_000
	}
	if opt.MaxIssuesPerCode <= 0 {
		opt.MaxIssuesPerCode = 1_000
	}
	r := &Reader{
		br:           bufio.NewReaderSize(src, detectWindow+maxRecordBytes),
		opt:          opt,
		issuesByCode: map[string]int64{},
		insurers:     map[string]bool{},
		typed:        map[*Field]bool{},
		lastOpen:     map[string]*logical{},
		subOpen:      map[string]*logical{},
		sum:          Summary{RecordsBySatzart: map[string]int64{}, PersonsByRole: map[string]int64{}},
	}
	for _, f := range typedFields() {
		r.typed[LayoutFor(f.satzart).TD(f.td).Field(f.tech)] = true
	}
	if enc == EncodingAuto {
		r.cs = newCharset("")
		r.auto = true
	} else {
		r.decide(enc, false)
	}
	return r, nil
}

func (r *Reader) decide(enc string, detected bool) {
	r.cs = newCharset(enc)
	r.decided = true
	r.detected = detected
	if !slices.Contains(r.used, enc) {
		r.used = append(r.used, enc)
	}
}

// undecide forgets the detected encoding at the Vorsatz of a new package: a file may join
// deliveries of several senders, each in its own encoding.
func (r *Reader) undecide() {
	if r.auto && !r.bom && r.decided {
		r.cs = newCharset("")
		r.decided, r.detected = false, false
	}
}

// All iterates over the events; it stops after the first error.
func (r *Reader) All() iter.Seq2[Event, error] { return All(r.Next) }

// All iterates over what next returns until io.EOF; it stops after the first other error. Every
// reader of the output model (GDV, BiPRO, CSV) iterates through it.
func All(next func() (Event, error)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Next returns the next event, io.EOF after the last one. Other errors are the source's read
// errors or a *FormatError for input that is no GDV file.
func (r *Reader) Next() (Event, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return Event{}, r.err
		}
		if r.done {
			return Event{}, io.EOF
		}
		rec, err := r.frame()
		switch {
		case errors.Is(err, io.EOF):
			r.finish()
		case errors.Is(err, errUTF16):
			r.err = &FormatError{Code: "unsupported_encoding", Detail: "the file is UTF-16; GDV files are single-byte or UTF-8"}
		case err != nil:
			r.err = fmt.Errorf("gdv: read: %w", err)
		default:
			r.handle(rec)
		}
	}
	ev := r.out[0]
	r.out[0] = Event{}
	r.out = r.out[1:]
	if len(r.out) == 0 {
		r.out = r.out[:0:0]
	}
	return ev, nil
}

// Summary returns the counts so far (complete after Next returned io.EOF).
func (r *Reader) Summary() Summary {
	s := r.sum
	switch len(r.used) {
	case 0:
		s.Encoding = EncodingLatin9 // ASCII only: reads the same in every encoding
	case 1:
		s.Encoding = r.used[0]
	default:
		s.Encoding = "mixed" // see Package.Encoding
	}
	s.EncodingDetected = r.auto
	s.LineEnding = lineEndingName(r.endings)
	s.IssuesByCode = make(map[string]int64, len(r.issuesByCode))
	for k, v := range r.issuesByCode {
		s.IssuesByCode[k] = v
	}
	s.RecordsBySatzart = make(map[string]int64, len(r.sum.RecordsBySatzart))
	for k, v := range r.sum.RecordsBySatzart {
		s.RecordsBySatzart[k] = v
	}
	s.PersonsByRole = make(map[string]int64, len(r.sum.PersonsByRole))
	for k, v := range r.sum.PersonsByRole {
		s.PersonsByRole[k] = v
	}
	s.Insurers = make([]string, 0, len(r.insurers))
	for k := range r.insurers {
		s.Insurers = append(s.Insurers, k)
	}
	slices.Sort(s.Insurers)
	return s
}

// handle routes one record.
func (r *Reader) handle(rec *record) {
	r.sum.Records++
	if rec.chars < RecordLen {
		r.sum.ShortRecords++
	}
	satzart := string(rec.slice(1, 4))
	if !isDigits(satzart) || len(satzart) != 4 {
		if strings.TrimSpace(rec.text(r.cs)) == "" {
			r.issue(Warning, "blank_record", rec, "", "blank record ignored", "")
			return
		}
		r.countPackageRecord()
		r.sum.RecordsBySatzart["????"]++
		if !r.seenData {
			// Nothing GDV-like yet: hold the issue back. Eight such records in a row and
			// the input is no GDV file at all (a PDF, a CSV export): one clear error
			// instead of a list of unreadable lines.
			if len(r.early) >= 7 {
				r.err = &FormatError{Code: "not_gdv", Detail: "no GDV record (four-digit Satzart) in the first 8 records: not a GDV VU-Vermittler file"}
				return
			}
			r.early = append(r.early, earlyRecord{line: rec.line, text: clip(rec.text(r.cs))})
			return
		}
		r.issue(Error, "invalid_satzart", rec, "Satzart", "record without a numeric Satzart in positions 1-4; skipped", rec.text(r.cs))
		return
	}
	if !r.seenData {
		for _, e := range r.early {
			r.issue(Error, "invalid_satzart", &record{line: e.line}, "Satzart", "record without a numeric Satzart in positions 1-4; skipped", e.text)
		}
		r.early = nil
	}
	r.seenData = true
	rec.satzart = satzart
	defer func() { r.last = satzart }()
	r.sum.RecordsBySatzart[satzart]++
	r.checkEncoding(rec)
	switch satzart {
	case "0001":
		r.header(rec)
		return
	case "9999":
		r.trailer(rec)
		return
	}
	r.announce(rec)
	r.countPackageRecord()
	r.data(rec)
}

func (r *Reader) countPackageRecord() {
	if r.pkg != nil {
		r.pkg.p.Records++
	}
}

// header reads a Vorsatz part. Parts 2 and 3 continue the Vorsatz just read; anything else
// ends the open package (without Nachsatz) and starts a new one.
func (r *Reader) header(rec *record) {
	part := rec.at(256)
	if r.pkg != nil && !r.pkg.announced && r.pkg.headerTDs > 0 && part >= '2' && part <= '3' {
		r.pkg.headerTDs++
		r.readHeader(rec, int(part-'0'))
		return
	}
	if r.pkg != nil {
		r.endPackage(nil)
	}
	r.packages++
	r.sum.Packages = r.packages
	r.pkg = &pkgState{p: &Package{Number: r.packages, Line: rec.line}, headerTDs: 1, insurers: map[string]bool{}, premium: NewDecimal(0, 2)}
	nr := 1
	if part >= '1' && part <= '3' {
		nr = int(part - '0')
	}
	r.readHeader(rec, nr)
}

// announce delivers the package's KindPackage event before its first data record, opening a
// package without Vorsatz when data comes outside one.
func (r *Reader) announce(rec *record) {
	if r.pkg == nil {
		r.packages++
		r.sum.Packages = r.packages
		r.pkg = &pkgState{p: &Package{Number: r.packages, Line: rec.line, HeaderMissing: true}, insurers: map[string]bool{}, premium: NewDecimal(0, 2)}
		r.issue(Warning, "vorsatz_missing", rec, "", "data without a Vorsatz (0001): read as a package without sender data", "")
	}
	if !r.pkg.announced {
		r.pkg.announced = true
		r.emit(Event{Kind: KindPackage, Package: r.pkg.p.header()})
	}
}

// trailer reads a Nachsatz and ends the package.
func (r *Reader) trailer(rec *record) {
	if r.pkg == nil {
		r.announce(rec)
	} else if !r.pkg.announced {
		r.pkg.announced = true
		r.emit(Event{Kind: KindPackage, Package: r.pkg.p.header()})
	}
	r.endPackage(rec)
}

// endPackage flushes the open contract and delivers KindPackageEnd with the Nachsatz check;
// rec is the Nachsatz, nil when it is missing.
func (r *Reader) endPackage(rec *record) {
	ps := r.pkg
	if ps == nil {
		return
	}
	if !ps.announced {
		ps.announced = true
		r.emit(Event{Kind: KindPackage, Package: ps.p.header()})
	}
	r.flush()
	p := ps.p
	p.Insurers = sortedKeys(ps.insurers)
	p.Encoding = EncodingLatin9
	if r.decided {
		p.Encoding = r.cs.name
	}
	p.Check = Check{RecordsCounted: p.Records, PremiumCounted: ps.premium}
	if rec == nil {
		p.Check.Status = CheckMissing
		r.issue(Warning, "trailer_missing", &record{line: r.lineNo}, "",
			fmt.Sprintf("package %d has no Nachsatz (9999): record count and Gesamtbeitrag not checked", p.Number), "")
	} else {
		r.readTrailer(rec, p)
	}
	r.pkg = nil
	r.emit(Event{Kind: KindPackageEnd, Package: p})
}

// finish ends the input: the open package ends without Nachsatz.
func (r *Reader) finish() {
	if r.done {
		return
	}
	r.done = true
	if r.pkg != nil {
		r.endPackage(nil)
	}
	if r.doubt > 0 {
		alt := EncodingCP850
		if r.cs.name == EncodingCP850 {
			alt = EncodingLatin9
		}
		r.issue(Warning, "encoding_doubt", &record{}, "",
			fmt.Sprintf("%d records read better as %s than as the detected %s; if names look wrong, choose the encoding", r.doubt, alt, r.cs.name), "")
	}
	switch {
	case r.sum.Records == 0:
		r.err = &FormatError{Code: "empty", Detail: "the file holds no records"}
	case !r.seenData:
		r.err = &FormatError{Code: "not_gdv", Detail: "no GDV record (four-digit Satzart) found: not a GDV VU-Vermittler file"}
	}
}

// checkEncoding counts records with non-ASCII bytes that the other single-byte candidate
// reads better than the detected encoding: evidence reported once at the end.
func (r *Reader) checkEncoding(rec *record) {
	if !r.detected || r.cs.utf8 || rec.utf8 || !hasHighByte(rec.raw) {
		return
	}
	other := newCharsetCached(r, r.cs.name)
	if score(other, rec.raw) > score(r.cs, rec.raw) {
		r.doubt++
	}
}

func newCharsetCached(r *Reader, current string) *charset {
	if current == EncodingCP850 {
		if r.altLatin == nil {
			r.altLatin = newCharset(EncodingLatin9)
		}
		return r.altLatin
	}
	if r.altDOS == nil {
		r.altDOS = newCharset(EncodingCP850)
	}
	return r.altDOS
}

// header copies the Vorsatz data of a package for the KindPackage event: the package itself
// goes on counting until KindPackageEnd.
func (p *Package) header() *Package {
	h := *p
	h.Versions = maps.Clone(p.Versions)
	return &h
}

// emit queues an event.
func (r *Reader) emit(ev Event) { r.out = append(r.out, ev) }

// issue records an issue: counted always, delivered up to MaxIssuesPerCode per code.
func (r *Reader) issue(sev Severity, code string, rec *record, field, msg, raw string) {
	if sev == Error {
		r.sum.Errors++
	} else {
		r.sum.Warnings++
	}
	r.issuesByCode[code]++
	if r.issuesByCode[code] > int64(r.opt.MaxIssuesPerCode) {
		r.sum.IssuesSuppressed++
		return
	}
	is := &Issue{Severity: sev, Code: code, Message: msg, Field: field, Raw: clip(raw)}
	if rec != nil {
		is.Line = rec.line
		is.Satzart = rec.satzart
	}
	if r.pkg != nil {
		is.Package = r.pkg.p.Number
	}
	r.emit(Event{Kind: KindIssue, Issue: is})
}

// clip bounds an excerpt to 256 characters.
func clip(s string) string {
	if len(s) <= RecordLen {
		return s
	}
	rs := []rune(s)
	if len(rs) <= RecordLen {
		return s
	}
	return string(rs[:RecordLen])
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// File is everything a GDV file holds, read at once: for small files and tests. The importer
// streams with Reader; File holds the whole file in memory.
type File struct {
	Packages  []*Package  // with their end data (Trailer, Check)
	Contracts []*Contract // in file order
	Persons   []Person    // addresses without a contract
	Issues    []Issue
	Summary   Summary
}

// ReadAll reads src into a File.
func ReadAll(src io.Reader, opt Options) (*File, error) {
	rd, err := NewReader(src, opt)
	if err != nil {
		return nil, err
	}
	return Collect(rd)
}

// Source delivers the output model as events: the GDV Reader, and the readers of the other
// portfolio formats (CSV, BiPRO), so an importer handles every format the same way.
type Source interface {
	Next() (Event, error) // io.EOF after the last event
	Summary() Summary
}

// Collect reads every event of a source into a File.
func Collect(src Source) (*File, error) {
	f := &File{}
	for {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind {
		case KindPackageEnd:
			f.Packages = append(f.Packages, ev.Package)
		case KindContract:
			f.Contracts = append(f.Contracts, ev.Contract)
		case KindPersons:
			f.Persons = append(f.Persons, ev.Persons...)
		case KindIssue:
			f.Issues = append(f.Issues, *ev.Issue)
		}
	}
	f.Summary = src.Summary()
	return f, nil
}
