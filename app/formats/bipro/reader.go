package bipro

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// Reader delivers the portfolio of a shipment as the events of package gdv: the packages,
// contracts and issues of every GDV document in it (Package.Source and Issue.Source name the
// document), and an issue for every document it does not read. Packages are numbered across
// the documents.
type Reader struct {
	sh      *Shipment
	opt     gdv.Options
	docs    []*Document
	pending []source // GDV entries of a ZIP document
	cur     *gdv.Reader
	curName string
	closer  io.Closer
	offset  int // packages of the documents read before
	curMax  int
	out     []gdv.Event
	done    bool
	sum     gdv.Summary
	sums    []gdv.Summary
	own     gdv.Summary // issues of the shipment itself
	// unzipped is what the GDV entries of the ZIP documents listed so far expand to.
	unzipped int64
}

type source struct {
	name string
	zf   *zip.File
}

// Reader returns a reader of the shipment's portfolio; opt applies to each GDV document.
func (sh *Shipment) Reader(opt gdv.Options) *Reader {
	return &Reader{sh: sh, opt: opt, docs: slices.Clone(sh.Documents),
		own: gdv.Summary{IssuesByCode: map[string]int64{}}}
}

// ReadAll reads the GDV portfolio of a shipment read from src into a gdv.File.
func ReadAll(src io.Reader, opt Options, gopt gdv.Options) (*gdv.File, error) {
	sh, err := Open(src, opt)
	if err != nil {
		return nil, err
	}
	defer sh.Close()
	return gdv.Collect(sh.Reader(gopt))
}

// Next returns the next event, io.EOF after the last one.
func (r *Reader) Next() (gdv.Event, error) {
	for len(r.out) == 0 {
		if r.done {
			return gdv.Event{}, io.EOF
		}
		if r.cur != nil {
			ev, err := r.cur.Next()
			switch {
			case errors.Is(err, io.EOF):
				r.endDocument()
				continue
			case err != nil:
				var fe *gdv.FormatError
				if !errors.As(err, &fe) {
					return gdv.Event{}, fmt.Errorf("bipro: document %s: %w", r.curName, err)
				}
				r.issue(gdv.Error, "document_not_read", r.curName, fmt.Sprintf("document %s looks like GDV data but is not readable: %s", r.curName, fe.Detail))
				r.endDocument()
				continue
			}
			return r.relabel(ev), nil
		}
		if err := r.nextDocument(); err != nil {
			return gdv.Event{}, err
		}
	}
	ev := r.out[0]
	r.out = r.out[1:]
	return ev, nil
}

// relabel numbers the document's packages after those of the documents before and names the
// document.
func (r *Reader) relabel(ev gdv.Event) gdv.Event {
	switch {
	case ev.Package != nil:
		ev.Package.Number += r.offset
		ev.Package.Source = r.curName
		r.curMax = max(r.curMax, ev.Package.Number)
	case ev.Contract != nil:
		ev.Contract.Package += r.offset
	case ev.Issue != nil:
		if ev.Issue.Package > 0 {
			ev.Issue.Package += r.offset
		}
		ev.Issue.Source = r.curName
	}
	return ev
}

func (r *Reader) endDocument() {
	r.sums = append(r.sums, r.cur.Summary())
	r.offset = max(r.offset, r.curMax)
	r.cur = nil
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
}

// nextDocument starts the next GDV document, reporting the documents it does not read.
func (r *Reader) nextDocument() error {
	if len(r.pending) > 0 {
		s := r.pending[0]
		r.pending = r.pending[1:]
		rc, err := s.zf.Open()
		if err != nil {
			r.issue(gdv.Error, "document_not_read", s.name, fmt.Sprintf("ZIP entry %s not readable: %v", s.name, err))
			return nil
		}
		return r.start(rc, s.name, rc)
	}
	if len(r.docs) == 0 {
		r.done = true
		return nil
	}
	d := r.docs[0]
	r.docs = r.docs[1:]
	switch d.Kind {
	case KindGDV:
		if _, err := d.spool.Seek(0, io.SeekStart); err != nil {
			return err
		}
		return r.start(d.spool, d.Name, nil)
	case KindZIP:
		files, others, err := d.zipEntries()
		if err != nil {
			r.issue(gdv.Error, "document_not_read", d.Name, fmt.Sprintf("ZIP archive %s not readable: %v", d.Name, err))
			return nil
		}
		for _, name := range others {
			r.issue(gdv.Warning, "document_not_read", d.Name+"/"+name, fmt.Sprintf("%s/%s is no GDV file: not portfolio data, not read", d.Name, name))
		}
		for _, f := range files {
			name := d.Name + "/" + f.Name
			if err := checkZip(f, name, r.unzipped, r.sh.opt); err != nil {
				return err
			}
			r.unzipped += int64(f.UncompressedSize64)
			r.pending = append(r.pending, source{name: name, zf: f})
		}
	case KindXML:
		r.issue(gdv.Error, "bipro_data_not_read", d.Name, fmt.Sprintf("%s holds XML (BiPRO data model, norm 430.4 messages): not read, its schema is not public; ask for GDV data", d.Name))
	case KindPDF:
		r.issue(gdv.Warning, "document_not_read", d.Name, fmt.Sprintf("%s is a PDF document: not portfolio data, not read", d.Name))
	default:
		r.issue(gdv.Warning, "document_not_read", d.Name, fmt.Sprintf("%s (%s) is no GDV file: not portfolio data, not read", d.Name, d.MIMEType))
	}
	return nil
}

func (r *Reader) start(src io.Reader, name string, closer io.Closer) error {
	rd, err := gdv.NewReader(src, r.opt)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return err
	}
	r.cur, r.curName, r.closer, r.curMax = rd, name, closer, r.offset
	return nil
}

func (r *Reader) issue(sev gdv.Severity, code, source, msg string) {
	if sev == gdv.Error {
		r.own.Errors++
	} else {
		r.own.Warnings++
	}
	r.own.IssuesByCode[code]++
	r.out = append(r.out, gdv.Event{Kind: gdv.KindIssue, Issue: &gdv.Issue{Severity: sev, Code: code, Message: msg, Source: source}})
}

// Summary adds up the summaries of the GDV documents read so far and the shipment's own
// issues.
func (r *Reader) Summary() gdv.Summary {
	all := slices.Clone(r.sums)
	if r.cur != nil {
		all = append(all, r.cur.Summary())
	}
	s := gdv.Summary{RecordsBySatzart: map[string]int64{}, PersonsByRole: map[string]int64{}, IssuesByCode: maps.Clone(r.own.IssuesByCode),
		Warnings: r.own.Warnings, Errors: r.own.Errors, EncodingDetected: true}
	insurers := map[string]bool{}
	encodings := map[string]bool{}
	for _, x := range all {
		s.Records += x.Records
		s.ShortRecords += x.ShortRecords
		s.Packages += x.Packages
		s.Contracts += x.Contracts
		s.Persons += x.Persons
		s.Warnings += x.Warnings
		s.Errors += x.Errors
		s.IssuesSuppressed += x.IssuesSuppressed
		s.EncodingDetected = s.EncodingDetected && x.EncodingDetected
		for k, v := range x.RecordsBySatzart {
			s.RecordsBySatzart[k] += v
		}
		for k, v := range x.PersonsByRole {
			s.PersonsByRole[k] += v
		}
		for k, v := range x.IssuesByCode {
			s.IssuesByCode[k] += v
		}
		for _, i := range x.Insurers {
			insurers[i] = true
		}
		encodings[x.Encoding] = true
		if s.LineEnding == "" {
			s.LineEnding = x.LineEnding
		} else if x.LineEnding != "" && x.LineEnding != s.LineEnding {
			s.LineEnding = "mixed"
		}
	}
	s.Insurers = slices.Sorted(maps.Keys(insurers))
	switch len(encodings) {
	case 0:
	case 1:
		for e := range encodings {
			s.Encoding = e
		}
	default:
		s.Encoding = "mixed"
	}
	return s
}

// All iterates over the events; it stops after the first error.
func (r *Reader) All() iter.Seq2[gdv.Event, error] { return gdv.All(r.Next) }
