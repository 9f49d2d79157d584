package pdfseal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf16"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// readConfig is pdfcpu's configuration for reading: built here because
// model.NewDefaultConfiguration writes a config.yml into the user's config directory (a
// server's may be read-only), and offline, so reading never reaches the network.
func readConfig() *model.Configuration {
	return &model.Configuration{
		Version:                   model.VersionStr,
		Reader15:                  true,
		ValidationMode:            model.ValidationRelaxed,
		UnsupportedResourcePolicy: model.UnsupportedResourceSkip,
		Eol:                       types.EolLF,
		Offline:                   true,
		Limits:                    model.DefaultResourceLimits(),
	}
}

// byteRangeWidth is the room of the /ByteRange array: four numbers of up to ten digits.
const byteRangeWidth = len("[0 0000000000 0000000000 0000000000]")

// Seal returns content with a PAdES (ETSI.CAdES.detached) signature appended as an
// incremental update: the bytes of content stay as they are, followed by the signature
// dictionary, an invisible signature field, the catalog with the field and the DocMDP
// permission, and a cross-reference section of the kind content uses (table or stream).
//
// The first seal of a document is a certification signature allowing no changes (DocMDP
// P 1): a sealed contract is final evidence. ISO 32000-2 still lets a DSS and document
// timestamps be added under P 1, the way to PAdES B-LT/B-LTA later; and P 1 is the one
// permission pdfcpu's validator checks in full. A document certified already gets an
// approval signature (there is one certification at most). The output depends only on
// content, info and the key, apart from the ECDSA signature value, which is randomised.
func (s *Sealer) Seal(content []byte, info Info) ([]byte, error) {
	if info.Time.IsZero() {
		return nil, errors.New("pdfseal: Info.Time is required (the seal never reads the clock)")
	}
	if c := s.chain[0]; info.Time.Before(c.NotBefore) || info.Time.After(c.NotAfter) {
		// a reader rejects such a seal; the certificate ran out while the server ran
		return nil, fmt.Errorf("pdfseal: the signing time %s is outside the certificate's validity (%s to %s)",
			info.Time.UTC().Format(time.RFC3339), c.NotBefore.UTC().Format(time.RFC3339), c.NotAfter.UTC().Format(time.RFC3339))
	}
	ctx, err := api.ReadContext(bytes.NewReader(content), readConfig())
	if err != nil {
		return nil, fmt.Errorf("pdfseal: read the PDF: %w", err)
	}
	xt := ctx.XRefTable
	if xt.Encrypt != nil {
		return nil, errors.New("pdfseal: the PDF is encrypted")
	}
	if xt.Root == nil || xt.Size == nil {
		return nil, errors.New("pdfseal: the PDF has no catalog")
	}
	prev, err := lastStartXref(content)
	if err != nil {
		return nil, err
	}
	catalog, err := xt.Catalog()
	if err != nil {
		return nil, fmt.Errorf("pdfseal: read the catalog: %w", err)
	}
	page, err := xt.PageDictIndRef(1)
	if err != nil || page == nil {
		return nil, fmt.Errorf("pdfseal: the PDF has no first page: %v", err)
	}

	size := *xt.Size
	sigRef := *types.NewIndirectRef(size, 0)
	fieldRef := *types.NewIndirectRef(size+1, 0)
	catalog = catalog.Clone().(types.Dict)
	fields, err := addField(xt, catalog, fieldRef)
	if err != nil {
		return nil, err
	}
	certify, err := addDocMDP(xt, catalog, sigRef)
	if err != nil {
		return nil, err
	}
	if xt.Version() < model.V17 {
		// /Perms is PDF 1.5, ETSI.CAdES.detached an extension of 1.7 (PAdES part 1): readers
		// ignore what a 1.3 file (fpdf writes those) is too old to have
		catalog["Version"] = types.Name("1.7")
	}

	w := &update{buf: make([]byte, 0, len(content)+2*s.contentsLen+4096), offsets: map[int]int{}}
	w.buf = append(w.buf, content...)
	if n := len(w.buf); n > 0 && w.buf[n-1] != '\n' && w.buf[n-1] != '\r' {
		w.buf = append(w.buf, '\n')
	}
	byteRangeAt, contentsAt := w.sigDict(size, s.contentsLen, info, certify)
	w.object(size+1, 0, types.Dict{
		"Type": types.Name("Annot"), "Subtype": types.Name("Widget"), "FT": types.Name("Sig"),
		// print (4) and locked (128): an invisible field nobody can edit
		"T": types.StringLiteral("Seal" + strconv.Itoa(fields)), "V": sigRef, "F": types.Integer(132),
		"Rect": types.NewIntegerArray(0, 0, 0, 0), "P": *page,
	}.PDFString())
	w.object(xt.Root.ObjectNumber.Value(), xt.Root.GenerationNumber.Value(), catalog.PDFString())
	trailer := types.Dict{"Root": *xt.Root, "Prev": types.Integer(prev)}
	if xt.Info != nil {
		trailer["Info"] = *xt.Info
	}
	if len(xt.ID) == 2 {
		trailer["ID"] = xt.ID
	}
	if ctx.Read.UsingXRefStreams {
		w.xrefStream(size+2, trailer)
	} else {
		w.xrefTable(size+2, trailer)
	}

	// the signed ranges: everything but the hex string of /Contents (with its brackets)
	end := contentsAt + 2 + 2*s.contentsLen
	br := fmt.Sprintf("[0 %d %d %d]", contentsAt, end, len(w.buf)-end)
	copy(w.buf[byteRangeAt:], br)
	h := sha256.New()
	h.Write(w.buf[:contentsAt])
	h.Write(w.buf[end:])
	der, err := s.cms(h.Sum(nil), s.sign)
	if err != nil {
		return nil, fmt.Errorf("pdfseal: sign: %w", err)
	}
	if len(der) > s.contentsLen {
		return nil, fmt.Errorf("pdfseal: the signature has %d bytes, room for %d", len(der), s.contentsLen)
	}
	hex.Encode(w.buf[contentsAt+1:], der)
	return w.buf, nil
}

// lastStartXref is the offset of content's last cross-reference section, which the update's
// /Prev names.
func lastStartXref(content []byte) (int, error) {
	i := bytes.LastIndex(content, []byte("startxref"))
	if i < 0 {
		return 0, errors.New("pdfseal: the PDF has no startxref")
	}
	rest := bytes.TrimLeft(content[i+len("startxref"):], " \t\r\n")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	off, err := strconv.Atoi(string(rest[:n]))
	if err != nil || off <= 0 || off >= len(content) {
		return 0, errors.New("pdfseal: the PDF's startxref is not an offset in the file")
	}
	return off, nil
}

// addField adds the seal's field to the catalog's AcroForm (a copy of the document's, if it
// has one) and returns how many fields there are now, which names the field.
func addField(xt *model.XRefTable, catalog types.Dict, field types.IndirectRef) (int, error) {
	form := types.Dict{}
	if o, ok := catalog.Find("AcroForm"); ok {
		d, err := xt.DereferenceDict(o)
		if err != nil {
			return 0, fmt.Errorf("pdfseal: read the AcroForm: %w", err)
		}
		if d != nil {
			form = d.Clone().(types.Dict)
		}
	}
	var fields types.Array
	if o, ok := form.Find("Fields"); ok {
		a, err := xt.DereferenceArray(o)
		if err != nil {
			return 0, fmt.Errorf("pdfseal: read the AcroForm's fields: %w", err)
		}
		fields = slices.Clone(a)
	}
	fields = append(fields, field)
	form["Fields"] = fields
	form["SigFlags"] = types.Integer(3) // SignaturesExist, AppendOnly
	catalog["AcroForm"] = form
	return len(fields), nil
}

// addDocMDP names the signature in the catalog's /Perms as the document's certification,
// unless the document is certified already (there is one DocMDP signature at most); it
// reports whether the seal certifies.
func addDocMDP(xt *model.XRefTable, catalog types.Dict, sig types.IndirectRef) (bool, error) {
	perms := types.Dict{}
	if o, ok := catalog.Find("Perms"); ok {
		d, err := xt.DereferenceDict(o)
		if err != nil {
			return false, fmt.Errorf("pdfseal: read the catalog's Perms: %w", err)
		}
		if d != nil {
			perms = d.Clone().(types.Dict)
		}
	}
	if _, ok := perms.Find("DocMDP"); ok {
		return false, nil
	}
	perms["DocMDP"] = sig
	catalog["Perms"] = perms
	return true, nil
}

// update is the incremental update being written after the document's bytes.
type update struct {
	buf     []byte
	offsets map[int]int // object number -> offset, for the cross-reference section
	gens    map[int]int
}

func (w *update) object(num, gen int, body string) {
	w.offsets[num] = len(w.buf)
	if gen != 0 {
		if w.gens == nil {
			w.gens = map[int]int{}
		}
		w.gens[num] = gen
	}
	w.buf = fmt.Appendf(w.buf, "%d %d obj\n%s\nendobj\n", num, gen, body)
}

// sigDict writes the signature dictionary with a blank /ByteRange and a zero /Contents of
// contentsLen bytes, returning where the /ByteRange array and the /Contents string begin.
func (w *update) sigDict(num, contentsLen int, info Info, certify bool) (byteRangeAt, contentsAt int) {
	w.offsets[num] = len(w.buf)
	w.buf = fmt.Appendf(w.buf, "%d 0 obj\n<</Type/Sig/Filter/Adobe.PPKLite/SubFilter/ETSI.CAdES.detached", num)
	w.buf = append(w.buf, "/ByteRange"...)
	byteRangeAt = len(w.buf)
	w.buf = append(w.buf, bytes.Repeat([]byte(" "), byteRangeWidth)...)
	w.buf = append(w.buf, "/Contents"...)
	contentsAt = len(w.buf)
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, bytes.Repeat([]byte("0"), 2*contentsLen)...)
	w.buf = append(w.buf, '>')
	w.buf = append(w.buf, "\n/M"...)
	w.buf = append(w.buf, pdfDate(info.Time)...)
	for _, e := range []struct{ key, value string }{
		{"Name", info.Name}, {"Reason", info.Reason}, {"Location", info.Location}, {"ContactInfo", info.Contact},
	} {
		if e.value != "" {
			w.buf = fmt.Appendf(w.buf, "\n/%s%s", e.key, textString(e.value))
		}
	}
	if certify {
		w.buf = append(w.buf, "\n/Reference[<</Type/SigRef/TransformMethod/DocMDP"+
			"/TransformParams<</Type/TransformParams/P 1/V/1.2>>>>]"...)
	}
	w.buf = append(w.buf, "\n/Prop_Build<</App<</Name/BrokerDesk>>>>>>\nendobj\n"...)
	return byteRangeAt, contentsAt
}

// sections groups the written objects into the runs of consecutive numbers a cross-reference
// section lists.
func (w *update) sections() [][]int {
	nums := make([]int, 0, len(w.offsets))
	for n := range w.offsets {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	var runs [][]int
	for i, n := range nums {
		if i > 0 && n == nums[i-1]+1 {
			runs[len(runs)-1] = append(runs[len(runs)-1], n)
		} else {
			runs = append(runs, []int{n})
		}
	}
	return runs
}

// xrefTable ends the update with a classic cross-reference table and trailer.
func (w *update) xrefTable(size int, trailer types.Dict) {
	at := len(w.buf)
	w.buf = append(w.buf, "xref\n"...)
	for _, run := range w.sections() {
		w.buf = fmt.Appendf(w.buf, "%d %d\n", run[0], len(run))
		for _, n := range run {
			w.buf = fmt.Appendf(w.buf, "%010d %05d n\r\n", w.offsets[n], w.gens[n])
		}
	}
	trailer["Size"] = types.Integer(size)
	w.buf = fmt.Appendf(w.buf, "trailer\n%s\nstartxref\n%d\n%%%%EOF\n", trailer.PDFString(), at)
}

// xrefStream ends the update with a cross-reference stream (object number num), as a
// document whose sections are streams must continue.
func (w *update) xrefStream(num int, trailer types.Dict) {
	at := len(w.buf)
	w.offsets[num] = at
	var index types.Array
	var data []byte
	for _, run := range w.sections() {
		index = append(index, types.Integer(run[0]), types.Integer(len(run)))
		for _, n := range run {
			data = append(data, 1)
			data = binary.BigEndian.AppendUint32(data, uint32(w.offsets[n]))
			data = binary.BigEndian.AppendUint16(data, uint16(w.gens[n]))
		}
	}
	trailer["Type"] = types.Name("XRef")
	trailer["Size"] = types.Integer(num + 1)
	trailer["Index"] = index
	trailer["W"] = types.NewIntegerArray(1, 4, 2)
	trailer["Length"] = types.Integer(len(data))
	w.buf = fmt.Appendf(w.buf, "%d 0 obj\n%s\nstream\n", num, trailer.PDFString())
	w.buf = append(w.buf, data...)
	w.buf = fmt.Appendf(w.buf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
}

// pdfDate is t as a PDF date string in t's own offset.
func pdfDate(t time.Time) string {
	s := t.Format("D:20060102150405")
	_, off := t.Zone()
	if off == 0 {
		return "(" + s + "Z)"
	}
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("(%s%c%02d'%02d')", s, sign, off/3600, off%3600/60)
}

// textString is s as a PDF text string: a literal when it is printable ASCII, else UTF-16BE
// with a byte order mark in hex (names like Müller), so no reader guesses the encoding.
func textString(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		var b bytes.Buffer
		b.WriteByte('(')
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '(' || c == ')' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
		b.WriteByte(')')
		return b.String()
	}
	u := []byte{0xfe, 0xff}
	for _, c := range utf16.Encode([]rune(s)) {
		u = binary.BigEndian.AppendUint16(u, c)
	}
	return "<" + hex.EncodeToString(u) + ">"
}
