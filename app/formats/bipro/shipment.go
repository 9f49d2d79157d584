// Package bipro reads BiPRO shipments for the portfolio import: the deliveries of the BiPRO
// transfer service (norm 430; 430.4 for contract-related business events such as the
// Stichtagsbestand), as the getShipment response (SOAP XML with base64 documents, or MTOM
// multipart with the documents as attachments).
//
// What it reads, and why only that: the BiPRO norms and schemas are published to members
// only; public descriptions (BiPRO, insurers' broker portals) agree that insurers deliver
// portfolio data through the transfer service as GDV files (Allianz, R+V), next to PDF
// documents. So the reader unpacks a shipment, reads every GDV document in it (also inside
// ZIP archives) with package gdv, and refuses the rest clearly: PDFs and other documents are
// reported as not portfolio data; contract data in the BiPRO XML data model itself (430.4
// "Vertrag" messages) is refused with an error that says so, not guessed at.
//
// Documents are spooled to temporary files while the XML streams past, so a shipment of any
// size is read in bounded memory. Close removes them.
package bipro

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"mime/multipart"
	"net/textproto"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// Document kinds.
const (
	KindGDV     = "gdv"     // a GDV VU-Vermittler file: read
	KindZIP     = "zip"     // an archive: its GDV entries are read
	KindPDF     = "pdf"     // a document for the file: not portfolio data
	KindXML     = "xml"     // BiPRO data-model XML: not read
	KindUnknown = "unknown" // anything else: not read
)

// Document is one document of a shipment.
type Document struct {
	Name     string `json:"name"`               // Dateiname, else "document-<n>"
	MIMEType string `json:"mimeType,omitempty"` // as the shipment states it
	Category string `json:"category,omitempty"` // the document's Kategorie / ArtID, when given
	Kind     string `json:"kind"`               // gdv, zip, pdf, xml, unknown: from the content, not the name
	Size     int64  `json:"size"`

	spool *os.File
}

// Shipment is a BiPRO delivery (Lieferung) with its documents.
type Shipment struct {
	ID        string      `json:"id,omitempty"`
	Category  string      `json:"category,omitempty"` // Kategorie of the Lieferung
	Created   string      `json:"created,omitempty"`  // Einstellzeitpunkt, as delivered
	Documents []*Document `json:"documents"`

	tmpDir string
	opt    Options
}

// Options tune reading a shipment.
type Options struct {
	// TempDir holds the spooled documents (default os.TempDir()).
	TempDir string
	// MaxBytes bounds the documents of one shipment in all (default 2 GiB).
	MaxBytes int64
	// MaxUnzipped bounds what the GDV entries of the shipment's ZIP documents expand to, in all
	// (default DefaultMaxUnzipped). Past it the shipment is refused (too_large).
	MaxUnzipped int64
	// MaxRatio bounds how many times its compressed size one ZIP entry may expand to (default
	// DefaultMaxRatio); entries of at most RatioGrace bytes are exempt. Past it the shipment
	// is refused (zip_ratio).
	MaxRatio int64
}

// Limits of ZIP documents (docs/decisions.md, "ZIP bombs"). GDV text deflates 5 to 16 times
// (the field samples and generated files), a ZIP bomb 140 (the finding: 1.28 MB to 180 MB) to
// 1,000 times: 100 leaves room for sparse files and stops bombs, as Apache POI's ZipSecureFile
// does with the same ratio and grace. The total matches MaxBytes' default: a shipment brings at
// most 2 GiB of GDV text whether its documents come plain or zipped.
const (
	DefaultMaxUnzipped = 2 << 30
	DefaultMaxRatio    = 100
	RatioGrace         = 100 << 10
)

// Open reads a shipment from src: its XML (or MTOM multipart) is parsed as it streams, each
// document's content decoded into a temporary file. Input that is no BiPRO shipment fails with
// a *gdv.FormatError. The caller must Close the Shipment.
func Open(src io.Reader, opt Options) (*Shipment, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 2 << 30
	}
	if opt.MaxUnzipped <= 0 {
		opt.MaxUnzipped = DefaultMaxUnzipped
	}
	if opt.MaxRatio <= 0 {
		opt.MaxRatio = DefaultMaxRatio
	}
	sh := &Shipment{tmpDir: opt.TempDir, opt: opt}
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(512)
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	var err error
	switch {
	case bytes.HasPrefix(trimmed, []byte("--")):
		err = sh.readMultipart(br, opt)
	case bytes.HasPrefix(trimmed, []byte("<")) || bytes.HasPrefix(trimmed, []byte("\xEF\xBB\xBF<")):
		err = sh.readXML(br, nil, opt)
	default:
		err = &gdv.FormatError{Code: "not_bipro", Detail: "not a BiPRO shipment: neither XML nor MTOM multipart"}
	}
	if err != nil {
		sh.Close()
		return nil, err
	}
	return sh, nil
}

// Close removes the spooled documents.
func (sh *Shipment) Close() error {
	var errs []error
	for _, d := range sh.Documents {
		if d.spool != nil {
			name := d.spool.Name()
			errs = append(errs, d.spool.Close(), os.Remove(name))
			d.spool = nil
		}
	}
	return errors.Join(errs...)
}

// readMultipart reads an MTOM/XOP response: the first part is the XML, the others are the
// documents it references by Content-ID.
func (sh *Shipment) readMultipart(br *bufio.Reader, opt Options) error {
	first, err := br.ReadString('\n')
	if err != nil {
		return &gdv.FormatError{Code: "not_bipro", Detail: "MTOM multipart without parts"}
	}
	boundary := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(first), "--"))
	mr := multipart.NewReader(io.MultiReader(strings.NewReader(first), br), boundary)
	var root []byte
	parts := map[string]*os.File{}
	defer func() {
		for _, f := range parts {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	var total int64
	for i := 0; ; i++ {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &gdv.FormatError{Code: "not_bipro", Detail: "broken MTOM multipart: " + err.Error()}
		}
		if i == 0 {
			if root, err = io.ReadAll(io.LimitReader(p, 64<<20)); err != nil {
				return err
			}
			continue
		}
		f, n, err := sh.spoolFrom(p, opt.MaxBytes-total)
		if err != nil {
			return err
		}
		total += n
		parts[contentID(p.Header)] = f
	}
	if root == nil {
		return &gdv.FormatError{Code: "not_bipro", Detail: "MTOM multipart without XML part"}
	}
	return sh.readXML(bufio.NewReader(bytes.NewReader(root)), parts, opt)
}

func contentID(h textproto.MIMEHeader) string {
	return strings.Trim(strings.TrimSpace(h.Get("Content-ID")), "<>")
}

// spoolFrom copies a document's bytes, r, into a new spool file under the shipment's tmpDir,
// rewound for reading: at most limit bytes (more is too_large). n is what was copied, also on
// failure; the file is then removed.
func (sh *Shipment) spoolFrom(r io.Reader, limit int64) (_ *os.File, n int64, _ error) {
	f, err := os.CreateTemp(sh.tmpDir, "bipro-*.bin")
	if err != nil {
		return nil, 0, err
	}
	n, err = io.Copy(f, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = &gdv.FormatError{Code: "too_large", Detail: "the shipment's documents exceed the size limit"}
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, n, err
	}
	return f, n, nil
}

// frame collects what one XML element holds: its simple children's values, a payload.
type frame struct {
	name   string
	values map[string]string
	spool  *os.File
	size   int64
}

// readXML walks the shipment XML. Payload elements (Daten, Inhalt) are spooled by the
// filter before encoding/xml sees them; the walk attaches each payload to the element around
// it (a Dokument or Datei) with that element's Dateiname, MIME type and category.
func (sh *Shipment) readXML(br *bufio.Reader, parts map[string]*os.File, opt Options) error {
	flt := &filter{br: br, sh: sh, limit: opt.MaxBytes}
	defer flt.cleanup()
	var taken []*os.File // spools handed to frames: removed at the end unless a document holds them
	defer func() {
		for _, sp := range taken {
			if !slices.ContainsFunc(sh.Documents, func(d *Document) bool { return d.spool == sp }) {
				sp.Close()
				os.Remove(sp.Name())
			}
		}
	}()
	dec := xml.NewDecoder(flt)
	dec.Strict = true
	var (
		stack        []*frame
		sawBiPRO     bool
		sawDataModel bool
		text         strings.Builder
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var fe *gdv.FormatError
			if errors.As(err, &fe) {
				return fe
			}
			if flt.failed() {
				return flt.err
			}
			return &gdv.FormatError{Code: "not_bipro", Detail: "not well-formed XML: " + err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if strings.HasPrefix(t.Name.Space, "http://www.bipro.net/namespace") {
				sawBiPRO = true
				ns := path.Base(t.Name.Space)
				if ns != "transfer" && ns != "nachrichten" && ns != "basis" && ns != "allgemein" && ns != "datentypen" {
					sawDataModel = true // a data-model namespace (vertrag, partner, …)
				}
			}
			if t.Name.Local == "Include" { // MTOM: <xop:Include href="cid:…"/>
				for _, a := range t.Attr {
					if a.Name.Local == "href" && len(stack) > 0 {
						id := strings.TrimPrefix(a.Value, "cid:")
						if f := parts[id]; f != nil {
							parent := stack[len(stack)-1]
							parent.spool, parts[id] = f, nil
							taken = append(taken, f)
							if fi, err := f.Stat(); err == nil {
								parent.size = fi.Size()
							}
						}
					}
				}
			}
			stack = append(stack, &frame{name: t.Name.Local, values: map[string]string{}})
			text.Reset()
		case xml.CharData:
			if text.Len() < 4096 {
				text.Write(t)
			}
		case xml.EndElement:
			if len(stack) == 0 {
				continue
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			v := strings.TrimSpace(text.String())
			text.Reset()
			if isPayload(f.name) {
				if id, ok := strings.CutPrefix(v, spoolMark); ok {
					f.spool, f.size = flt.take(id)
					if f.spool != nil {
						taken = append(taken, f.spool)
					}
				}
				if f.spool != nil && len(stack) > 0 {
					parent := stack[len(stack)-1]
					parent.spool, parent.size = f.spool, f.size
				}
				continue
			}
			if f.spool != nil { // the element around a payload is the document
				sh.addDocument(f, stack)
				continue
			}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				if _, ok := parent.values[f.name]; !ok && v != "" {
					parent.values[f.name] = v
				}
				if parent.name == "Lieferung" {
					switch f.name {
					case "ID":
						sh.ID = v
					case "Kategorie":
						sh.Category = v
					case "Einstellzeitpunkt":
						sh.Created = v
					}
				}
			}
		}
	}
	if flt.failed() {
		return flt.err
	}
	switch {
	case !sawBiPRO:
		return &gdv.FormatError{Code: "not_bipro", Detail: "XML without BiPRO namespace: not a BiPRO shipment"}
	case len(sh.Documents) == 0 && sawDataModel:
		return &gdv.FormatError{Code: "bipro_data_not_read", Detail: "BiPRO contract data in the BiPRO XML data model (norm 430.4 messages) is not read: its schema is not public. Portfolio data is read from GDV files delivered in BiPRO shipments."}
	case len(sh.Documents) == 0:
		return &gdv.FormatError{Code: "no_documents", Detail: "the BiPRO shipment holds no documents"}
	}
	return nil
}

func isPayload(local string) bool { return local == "Daten" || local == "Inhalt" }

// addDocument records a document and sniffs its kind from its first bytes. Its name and MIME
// type come from the element around the payload (a Datei, a Dokument), its category from
// there or the elements around it.
func (sh *Shipment) addDocument(f *frame, outer []*frame) {
	d := &Document{spool: f.spool, Size: f.size}
	d.Name = firstOf(f.values, "Dateiname", "Name", "Bezeichnung")
	if d.Name == "" {
		d.Name = fmt.Sprintf("document-%d", len(sh.Documents)+1)
	}
	d.MIMEType = firstOf(f.values, "MIMEType", "MimeType", "ContentType", "Typ")
	for i := len(outer); d.Category == "" && i >= 0; i-- {
		values := f.values
		if i < len(outer) {
			values = outer[i].values
		}
		d.Category = firstOf(values, "Kategorie", "ArtID", "Dokumentart")
	}
	head := make([]byte, 8)
	n, _ := io.ReadFull(d.spool, head)
	_, _ = d.spool.Seek(0, io.SeekStart)
	d.Kind = sniff(head[:n])
	sh.Documents = append(sh.Documents, d)
}

func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := m[k]; v != "" {
			return v
		}
	}
	return ""
}

// sniff tells a document's kind from its first bytes: the name and MIME type of a delivered
// file are often generic ("application/octet-stream", "daten.txt").
func sniff(b []byte) string {
	b = bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF})
	switch {
	case len(b) >= 4 && string(b[:4]) == "0001":
		return KindGDV
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return KindZIP
	case bytes.HasPrefix(b, []byte("%PDF")):
		return KindPDF
	case bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("<")):
		return KindXML
	}
	return KindUnknown
}

// checkZip refuses a GDV entry of a ZIP document that expands more than opt.MaxRatio times its
// compressed size (beyond RatioGrace), or that takes the shipment's ZIP entries past
// opt.MaxUnzipped; unzipped is what the entries before it expand to. The sizes of the central
// directory bound what is read: archive/zip reads an entry's compressed data within
// CompressedSize64 and fails (zip.ErrFormat) past UncompressedSize64, so the check is made
// before anything is decompressed.
func checkZip(f *zip.File, name string, unzipped int64, opt Options) error {
	size := f.UncompressedSize64
	hi, bound := bits.Mul64(uint64(opt.MaxRatio), max(f.CompressedSize64, 1)) // no overflow for a lying header
	if size > RatioGrace && hi == 0 && size > bound {
		return &gdv.FormatError{Code: "zip_ratio", Detail: fmt.Sprintf(
			"ZIP entry %s expands from %d to %d bytes, more than %d times: refused as a possible ZIP bomb",
			name, f.CompressedSize64, size, opt.MaxRatio)}
	}
	if size > uint64(opt.MaxUnzipped-unzipped) {
		return &gdv.FormatError{Code: "too_large", Detail: fmt.Sprintf(
			"the shipment's ZIP entries expand to more than %d MiB (at %s)", opt.MaxUnzipped>>20, name)}
	}
	return nil
}

// zipEntries returns the GDV files of a ZIP document and the names of its other entries.
func (d *Document) zipEntries() (gdvFiles []*zip.File, others []string, err error) {
	zr, err := zip.NewReader(d.spool, d.Size)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			others = append(others, f.Name)
			continue
		}
		head := make([]byte, 8)
		n, _ := io.ReadFull(rc, head)
		rc.Close()
		if sniff(head[:n]) == KindGDV {
			gdvFiles = append(gdvFiles, f)
		} else {
			others = append(others, f.Name)
		}
	}
	return gdvFiles, others, nil
}

// spoolMark replaces a payload's content in the XML the decoder sees.
const spoolMark = "bipro-spool:"

// filter passes the XML through, but streams the text of payload elements (Daten, Inhalt)
// through a base64 decoder into spool files, so encoding/xml never holds a document.
type filter struct {
	br     *bufio.Reader
	sh     *Shipment
	limit  int64
	total  int64
	out    []byte
	spools []*os.File
	sizes  []int64
	err    error
}

func (f *filter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		if err := f.next(); err != nil {
			if len(f.out) == 0 {
				return 0, err
			}
			f.err = err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// failed reports an error of the input other than its end. The end is kept in err like an
// error (Read gives what came before it first), but is none: a shipment that ends in white
// space after its root element (a newline, as most files do) ended there, and was refused
// with a bare EOF and retried as if the storage had failed.
func (f *filter) failed() bool { return f.err != nil && !errors.Is(f.err, io.EOF) }

// next moves the next piece (text up to a tag, or a tag) to out.
func (f *filter) next() error {
	c, err := f.br.ReadByte()
	if err != nil {
		return err
	}
	if c != '<' {
		text, err := f.br.ReadSlice('<')
		f.out = append(append(f.out[:0], c), bytes.TrimSuffix(text, []byte("<"))...)
		if err == nil {
			_ = f.br.UnreadByte()
		} else if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
		return nil
	}
	tag, err := f.readTag()
	if err != nil {
		return err
	}
	f.out = append(f.out[:0], tag...)
	if !isPayloadStart(tag) {
		return nil
	}
	id, err := f.spool()
	if err != nil {
		return err
	}
	if id >= 0 {
		f.out = append(f.out, fmt.Sprintf("%s%d", spoolMark, id)...)
	}
	return nil
}

// readTag reads a markup construct from '<' (already read) to its end: a tag (quotes
// respected), a comment, CDATA, a processing instruction. DOCTYPE is refused (no entities).
func (f *filter) readTag() ([]byte, error) {
	tag := []byte{'<'}
	end := ">"
	peek, _ := f.br.Peek(8)
	switch {
	case bytes.HasPrefix(peek, []byte("!--")):
		end = "-->"
	case bytes.HasPrefix(peek, []byte("![CDATA[")):
		end = "]]>"
	case bytes.HasPrefix(peek, []byte("?")):
		end = "?>"
	case bytes.HasPrefix(peek, []byte("!DOCTYPE")):
		return nil, &gdv.FormatError{Code: "not_bipro", Detail: "XML with DOCTYPE is refused"}
	}
	var quote byte
	for {
		c, err := f.br.ReadByte()
		if err != nil {
			return nil, &gdv.FormatError{Code: "not_bipro", Detail: "XML ends inside markup"}
		}
		tag = append(tag, c)
		if len(tag) > 1<<20 {
			return nil, &gdv.FormatError{Code: "not_bipro", Detail: "XML markup longer than 1 MB"}
		}
		if end == ">" {
			switch {
			case quote != 0 && c == quote:
				quote = 0
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote == 0 && c == '>':
				return tag, nil
			}
			continue
		}
		if bytes.HasSuffix(tag, []byte(end)) {
			return tag, nil
		}
	}
}

// isPayloadStart reports a start tag of Daten or Inhalt (any prefix) that is not empty.
func isPayloadStart(tag []byte) bool {
	if len(tag) < 3 || tag[1] == '/' || tag[1] == '!' || tag[1] == '?' || bytes.HasSuffix(tag, []byte("/>")) {
		return false
	}
	name := tag[1:]
	if i := bytes.IndexAny(name, " \t\r\n/>"); i >= 0 {
		name = name[:i]
	}
	if i := bytes.IndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	return isPayload(string(name))
}

// spool decodes the payload text up to the next '<' into a temporary file; -1 when the element
// holds markup (an xop:Include) rather than text.
func (f *filter) spool() (int, error) {
	peek, _ := f.br.Peek(9)
	cdata := bytes.HasPrefix(peek, []byte("<![CDATA["))
	if len(peek) > 0 && peek[0] == '<' && !cdata {
		return -1, nil
	}
	if cdata {
		_, _ = f.br.Discard(9)
	}
	src := &base64Text{br: f.br, cdata: cdata}
	file, n, err := f.sh.spoolFrom(base64.NewDecoder(base64.StdEncoding, src), f.limit-f.total)
	f.total += n
	if err != nil {
		var fe *gdv.FormatError
		var pe *fs.PathError // the spool file's (a full disk): not the shipment's fault
		if !errors.As(err, &fe) && !errors.As(err, &pe) {
			err = &gdv.FormatError{Code: "not_bipro", Detail: "a document's content is not base64: " + err.Error()}
		}
		return 0, err
	}
	f.spools = append(f.spools, file)
	f.sizes = append(f.sizes, n)
	return len(f.spools) - 1, nil
}

// cleanup removes the spools no document took (the XML broke off, or a payload element held
// no text the walk saw).
func (f *filter) cleanup() {
	for i, sp := range f.spools {
		if sp != nil {
			sp.Close()
			os.Remove(sp.Name())
			f.spools[i] = nil
		}
	}
}

// take hands a spool to the walk; the filter forgets it.
func (f *filter) take(id string) (*os.File, int64) {
	var i int
	if _, err := fmt.Sscan(id, &i); err != nil || i < 0 || i >= len(f.spools) || f.spools[i] == nil {
		return nil, 0
	}
	sp := f.spools[i]
	f.spools[i] = nil
	return sp, f.sizes[i]
}

// base64Text reads the base64 text of a payload: up to the next '<' (or "]]>" in CDATA),
// without the white space base64 text is wrapped with.
type base64Text struct {
	br    *bufio.Reader
	cdata bool
	done  bool
}

func (b *base64Text) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !b.done {
		c, err := b.br.ReadByte()
		if err != nil {
			return n, err
		}
		switch {
		case !b.cdata && c == '<':
			_ = b.br.UnreadByte()
			b.done = true
		case b.cdata && c == ']':
			if peek, _ := b.br.Peek(2); bytes.Equal(peek, []byte("]>")) {
				_, _ = b.br.Discard(2)
				b.done = true
			} else {
				p[n] = c
				n++
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			p[n] = c
			n++
		}
	}
	if n == 0 && b.done {
		return 0, io.EOF
	}
	return n, nil
}
