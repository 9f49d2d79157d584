package gdv

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// GenerateOptions describe a generated GDV file.
type GenerateOptions struct {
	Contracts int    // contracts in all
	Packages  int    // packages (Vorsatz … Nachsatz), each from another insurer; default 1
	Seed      uint64 // the same seed gives the same file
	// Encoding of the file: iso-8859-15 (default), iso-8859-1, cp850 or utf-8.
	Encoding string
	// LineEnding: "lf" (default), "crlf" or "none" (records back to back).
	LineEnding string
	// StripTrailingBlanks writes short lines, as some senders do.
	StripTrailingBlanks bool
}

// GenerateStats says what a generated file holds.
type GenerateStats struct {
	Records   int64   // physical records
	Contracts int     // contracts (0200)
	Persons   int     // addresses (0100), one policyholder per contract
	Premium   Decimal // Σ Gesamtbeitrag of all packages
	Bytes     int64
}

// Generate writes a valid GDV VU-Vermittler file built from the layout tables: per package a
// Vorsatz, per contract the policyholder's address (0100 parts 1, 2, 4 with a valid IBAN), the
// general contract (0200 parts 1, 2) and line-specific records (0210, 0220; for life
// insurance two 0220 risks) of one of six Sparten, and a Nachsatz whose record count and
// Gesamtbeitrag are right. Names and addresses use umlauts and ß.
func Generate(w io.Writer, opt GenerateOptions) (GenerateStats, error) {
	g, err := newGenerator(opt)
	if err != nil {
		return GenerateStats{}, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for {
		rec, ok := g.next()
		if !ok {
			break
		}
		if _, err := bw.Write(rec); err != nil {
			return g.stats, err
		}
	}
	return g.stats, bw.Flush()
}

// NewGenerated returns the file Generate writes as a reader that produces it on the fly, in
// constant memory however large: for tests and benchmarks of very large files.
func NewGenerated(opt GenerateOptions) (io.Reader, error) {
	g, err := newGenerator(opt)
	if err != nil {
		return nil, err
	}
	return &genReader{g: g}, nil
}

type genReader struct {
	g   *generator
	cur []byte
}

func (r *genReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.cur) == 0 {
			rec, ok := r.g.next()
			if !ok {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			r.cur = rec
		}
		c := copy(p[n:], r.cur)
		r.cur = r.cur[c:]
		n += c
	}
	return n, nil
}

type generator struct {
	opt     GenerateOptions
	rnd     *rand.Rand
	encode  func(dst []byte, r rune) []byte
	eol     string
	queue   [][]byte
	out     []byte
	pkg     int // current package, 0-based; == Packages when done
	inPkg   int // contracts written in the current package
	perPkg  []int
	started bool

	pkgRecords int64
	pkgPremium int64 // cents
	stats      GenerateStats
	total      int64 // cents
}

func newGenerator(opt GenerateOptions) (*generator, error) {
	if opt.Packages <= 0 {
		opt.Packages = 1
	}
	if opt.Contracts < 0 {
		return nil, fmt.Errorf("gdv: generate: negative number of contracts")
	}
	g := &generator{opt: opt, rnd: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9E3779B97F4A7C15))}
	enc, ok := NormalizeEncoding(opt.Encoding)
	if !ok {
		return nil, errUnknownEncoding(opt.Encoding)
	}
	switch enc {
	case EncodingAuto, EncodingLatin9:
		g.encode = charmapEncoder(charmap.ISO8859_15)
	case EncodingLatin1:
		g.encode = charmapEncoder(charmap.ISO8859_1)
	case EncodingCP850:
		g.encode = charmapEncoder(charmap.CodePage850)
	case EncodingUTF8:
		g.encode = utf8.AppendRune
	default:
		return nil, fmt.Errorf("gdv: generate: encoding %s not supported", enc)
	}
	switch opt.LineEnding {
	case "", "lf":
		g.eol = "\n"
	case "crlf":
		g.eol = "\r\n"
	case "none":
	default:
		return nil, fmt.Errorf("gdv: generate: line ending %q (lf, crlf, none)", opt.LineEnding)
	}
	g.perPkg = make([]int, opt.Packages)
	for i := range g.perPkg {
		g.perPkg[i] = opt.Contracts / opt.Packages
		if i < opt.Contracts%opt.Packages {
			g.perPkg[i]++
		}
	}
	return g, nil
}

func charmapEncoder(cm *charmap.Charmap) func([]byte, rune) []byte {
	return func(dst []byte, r rune) []byte {
		b, ok := cm.EncodeRune(r)
		if !ok {
			b = '?'
		}
		return append(dst, b)
	}
}

// next returns the next record with its line end; the slice is valid until the next call.
func (g *generator) next() ([]byte, bool) {
	for len(g.queue) == 0 {
		if g.pkg >= g.opt.Packages {
			return nil, false
		}
		g.fill()
	}
	rec := g.queue[0]
	g.queue = g.queue[1:]
	g.stats.Records++
	g.stats.Bytes += int64(len(rec))
	return rec, true
}

// fill queues the next piece: a Vorsatz, a contract or a Nachsatz.
func (g *generator) fill() {
	g.out = g.out[:0]
	g.queue = g.queue[:0]
	switch {
	case !g.started:
		g.started = true
		g.vorsatz()
	case g.inPkg < g.perPkg[g.pkg]:
		g.contract()
		g.inPkg++
	default:
		g.nachsatz()
		g.pkg++
		g.inPkg = 0
		g.started = false
	}
}

// recBuilder builds one record from a layout.
type recBuilder struct {
	l   *Layout
	td  *TD
	buf [RecordLen]rune
}

func (g *generator) rec(key string, part int) *recBuilder {
	b := &recBuilder{l: LayoutFor(key)}
	if b.l == nil {
		panic("gdv: generate: no layout " + key)
	}
	b.td = b.l.TD(part)
	for i := range b.buf {
		b.buf[i] = ' '
	}
	b.put(1, 4, []rune(b.l.Satzart))
	if b.td.NrPos > 0 {
		b.buf[b.td.NrPos-1] = rune('0' + part)
	}
	return b
}

func (b *recBuilder) put(pos, n int, rs []rune) {
	copy(b.buf[pos-1:pos-1+n], rs[:min(n, len(rs))])
}

// set writes a value into the field tech: text left-aligned, numbers right-aligned with
// zeros, Decimal with the field's places, Date as TTMMJJJJ. A missing field or a value too
// long for it is a bug of the generator.
func (b *recBuilder) set(tech string, v any) *recBuilder {
	f := b.td.Field(tech)
	if f == nil {
		panic("gdv: generate: no field " + tech + " in " + b.l.Key)
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int:
		s = strconv.Itoa(x)
	case Decimal:
		d, ok := x.Rescale(f.Decimals)
		if !ok {
			panic("gdv: generate: " + tech)
		}
		s = strconv.FormatInt(d.Units(), 10)
	case Date:
		if f.Len == 6 {
			s = fmt.Sprintf("%02d%04d", x.Month, x.Year)
		} else {
			s = fmt.Sprintf("%02d%02d%04d", x.Day, x.Month, x.Year)
		}
	}
	rs := []rune(s)
	if len(rs) > f.Len {
		panic(fmt.Sprintf("gdv: generate: %q too long for %s.%s", s, b.l.Key, tech))
	}
	if f.Type == Alnum && tech != "VsNr" {
		b.put(f.Pos, f.Len, rs)
		return b
	}
	pad := ' '
	if f.Type != Alnum {
		pad = '0'
	}
	for i := range f.Len - len(rs) {
		b.buf[f.Pos-1+i] = pad
	}
	b.put(f.Pos+f.Len-len(rs), len(rs), rs)
	return b
}

// key fills positions 5-42: the same in every data record of a contract.
func (b *recBuilder) key(vu, sparte, vsnr string) *recBuilder {
	return b.set("VuNr", vu).set("Sparte", sparte).set("VsNr", vsnr).set("FolgeNr", "01").set("GeschaeftsstelleVermittler", "4711")
}

func (g *generator) emit(b *recBuilder) {
	end := RecordLen
	if g.opt.StripTrailingBlanks {
		for end > 0 && b.buf[end-1] == ' ' {
			end--
		}
	}
	start := len(g.out)
	for _, r := range b.buf[:end] {
		g.out = g.encode(g.out, r)
	}
	g.out = append(g.out, g.eol...)
	g.queue = append(g.queue, g.out[start:len(g.out):len(g.out)])
	if b.l.Satzart != "0001" && b.l.Satzart != "9999" {
		g.pkgRecords++
	}
}

var genInsurers = []struct{ vu, name string }{
	{"9001", "Nordstern Versicherung AG"}, {"9002", "Süddeutsche Assekuranz"}, {"9003", "Rheinische Leben a.G."},
	{"9004", "Alpenland Versicherung"}, {"9005", "Hanse Krankenversicherung"}, {"9006", "Weser Sach AG"},
}

func (g *generator) vorsatz() {
	g.pkgRecords, g.pkgPremium = 0, 0
	ins := genInsurers[g.pkg%len(genInsurers)]
	b := g.rec("0001", 1).set("VuNr", ins.vu).set("Absender", ins.name).set("Adressat", "Maklerbüro Weiß & Söhne").
		set("ErstellungsDatumZeitraumVomZeitraumBis", "0101202431122024").set("GeschaeftsstelleVermittler", "4711").
		set("Satzart0001", "2.5").set("Satzart0100", "2.3").set("Satzart0200", "2.5").set("Nachsatzsatzart9999", "1.1").
		set("ArtAbsenders", "1").set("ArtAdressaten", "2")
	g.emit(b)
}

func (g *generator) nachsatz() {
	b := g.rec("9999", 1).set("AnzSaetze", int(g.pkgRecords)).set("GeschaeftsstelleVermittler", "4711").
		set("Gesbeitrag", NewDecimal(g.pkgPremium, 2)).set("GesbeitragBruttoInkasso", NewDecimal(0, 2)).set("Vorzeichen", "+").
		set("GesprovisionsBetrag", NewDecimal(0, 2)).set("Vorzeichen2", "+").set("Verssleistungen", NewDecimal(0, 2)).
		set("Vorzeichen3", "+").set("Schadenbearbeitungskost", NewDecimal(0, 2)).set("Vorzeichen4", "+")
	g.emit(b)
	g.total += g.pkgPremium
	g.stats.Premium = NewDecimal(g.total, 2)
}

var (
	genFirst  = []string{"Jürgen", "Käthe", "Björn", "Günther", "Anna", "Lukas", "Sören", "Jörg", "Lena", "Maximilian", "Ösün", "Zoë"}
	genLast   = []string{"Müller", "Schäfer", "Weiß", "Groß", "Köhler", "Özdemir", "Bäcker", "Schmidt", "Krüger", "Fuß", "Hoffmann", "Neumann"}
	genStreet = []string{"Hauptstraße", "Königsallee", "Am Mühlbach", "Schloßgasse", "Lindenweg", "Bahnhofstraße"}
	genCity   = []struct{ plz, city string }{{"80331", "München"}, {"50667", "Köln"}, {"01067", "Dresden"}, {"20095", "Hamburg"}, {"97070", "Würzburg"}, {"79098", "Freiburg im Breisgau"}}
	genSparte = []string{"030", "040", "050", "130", "010", "020"}
	genFreq   = []string{"1", "2", "4", "8"}
)

func (g *generator) contract() {
	ins := genInsurers[g.pkg%len(genInsurers)]
	n := g.stats.Contracts
	sparte := genSparte[n%len(genSparte)]
	vsnr := fmt.Sprintf("%s%09d", sparte, n+1)
	first, last := genFirst[g.rnd.IntN(len(genFirst))], genLast[g.rnd.IntN(len(genLast))]
	sal, gender := "1", "1"
	if g.rnd.IntN(2) == 0 {
		sal, gender = "2", "2"
	}
	city := genCity[g.rnd.IntN(len(genCity))]
	dob := Date{Year: 1940 + g.rnd.IntN(65), Month: 1 + g.rnd.IntN(12), Day: 1 + g.rnd.IntN(28)}
	start := Date{Year: 2005 + g.rnd.IntN(19), Month: 1 + g.rnd.IntN(12), Day: 1}
	end := Date{Year: start.Year + 1 + g.rnd.IntN(30), Month: start.Month, Day: 1}
	renewal := Date{Year: 2025, Month: start.Month, Day: 1}
	cents := int64(1000 + g.rnd.IntN(200000))
	premium := NewDecimal(cents, 2)
	gross := NewDecimal((cents*119+50)/100, 2)
	cust := fmt.Sprintf("K%08d", n+1)
	bban := fmt.Sprintf("%08d%010d", 10010010+g.rnd.IntN(8999999), n+1)

	g.emit(g.rec("0100", 1).key(ins.vu, sparte, vsnr).set("Anredeschluessel", sal).set("Name1", last).set("Name3", first).
		set("PLZ", city.plz).set("Ort", city.city).set("Str", fmt.Sprintf("%s %d", genStreet[g.rnd.IntN(len(genStreet))], 1+g.rnd.IntN(120))).
		set("LKZ", "D").set("Geburtsdatum", dob).set("Staatsangehoerigkeit", "D").set("Adresskennzeichen", "01").set("Geschlecht", gender))
	g.emit(g.rec("0100", 2).key(ins.vu, sparte, vsnr).set("PersonenKundenNrVersicherers", cust).
		set("Kommunikationstyp1", "10").set("KommunikationsNr1", fmt.Sprintf("089 %07d", n+1)).
		set("Kommunikationstyp2", "50").set("KommunikationsNr2", fmt.Sprintf("k%d@example.org", n+1)).
		set("ZahlungsartWeg", "1"))
	g.emit(g.rec("0100", 4).key(ins.vu, sparte, vsnr).set("NameKreditinstituts1", "Sparkasse Musterstadt").
		set("BIC1", "SPKMDEMMXXX").set("IBAN1", germanIBAN(bban)))
	g.emit(g.rec("0200", 1).key(ins.vu, sparte, vsnr).set("Inkassoart", "2").set("Vertragsbeginn", start).
		set("Vertragsablauf", end).set("Hauptfaelligkeit", renewal).set("Zahlungsweise", genFreq[n%len(genFreq)]).
		set("Vertragsstatus", "1").set("Waehrungsschluessel", "EUR").set("GesbeitragNettoInWE", premium).
		set("PersonenKundenNrVersicherers", cust).set("Antragsdatum", start))
	g.emit(g.rec("0200", 2).key(ins.vu, sparte, vsnr).set("GesbeitragBruttoInWE", gross).
		set("DruckaufbereiteteVsNr", sparte+"-"+vsnr[3:]).set("Produktname", "Tarif Komfort"))
	switch sparte {
	case "030":
		g.emit(g.rec("0210.030", 1).key(ins.vu, sparte, vsnr).set("Vertragsstatus", "1").set("Beginn", start).
			set("Waehrungsschluessel", "EUR").set("GesbeitragInWE", premium))
		g.emit(g.rec("0220.030", 1).key(ins.vu, sparte, vsnr).set("LfdNrVersichertenPersonVpPersonengruppe", "000001").
			set("NameVp", last).set("VornameVp", first).set("GeburtsdatumVp", dob).set("Waehrungsschluessel", "EUR").
			set("BeitragProVpOderProPersonengruppeInWE", premium))
	case "040":
		g.emit(g.rec("0210.040", 1).key(ins.vu, sparte, vsnr).set("Vertragsstatus", "1").set("Beginn", start).
			set("Waehrungsschluessel", "EUR").set("GesbeitragInWE", premium))
		g.emit(g.rec("0220.040", 1).key(ins.vu, sparte, vsnr).set("Wagnisart", "3001").set("OrdnungsNrWagniszusatz", "01").
			set("Waehrungsschluessel", "EUR").set("GesbeitragInWE", premium))
	case "050":
		g.emit(g.rec("0210.050", 1).key(ins.vu, sparte, vsnr).set("WKZ", "112").set("Herstellername", "Volkswagen").
			set("AmtlichesKennzeichen", fmt.Sprintf("M-XY %d", 1+n%9999)).set("Waehrungsschluessel", "EUR").set("GesbeitragInWE", premium))
		g.emit(g.rec("0220.051", 1).key(ins.vu, "051", vsnr).set("KhBeginn", start).set("KhTarifgruppe", "PKW").
			set("KhSfSKlasse", "SF10"))
	case "130":
		g.emit(g.rec("0210.130", 1).key(ins.vu, sparte, vsnr).set("Vertragsstatus", "1").set("Beginn", start).
			set("PLZRisikoanschrift", city.plz).set("Risikoort", city.city).set("Waehrungsschluessel", "EUR").set("GesbeitragInWE", premium))
		g.emit(g.rec("0220.130", 1).key(ins.vu, sparte, vsnr).set("Beginn", start).set("BeitragInWE", premium))
	case "010":
		g.emit(g.rec("0210.010", 1).key(ins.vu, sparte, vsnr).set("Waehrungsschluessel", "EUR"))
		g.emit(g.rec("0220.010.0", 1).key(ins.vu, sparte, vsnr).set("LfdNrVersichertenPersonVp", "1").set("Wagnisart", "0").
			set("NameVp", last).set("VornameVp", first).set("GeburtsdatumVp", dob))
		g.emit(g.rec("0220.010.13.1", 1).key(ins.vu, sparte, vsnr).set("LfdNrVersichertenPersonVp", "1").set("Wagnisart", "1").
			set("Beginn", start).set("Ablauf", end).set("Beitrag", premium))
	case "020":
		g.emit(g.rec("0210.020", 1).key(ins.vu, sparte, vsnr).set("Waehrungsschluessel", "EUR"))
		g.emit(g.rec("0220.020.1", 1).key(ins.vu, sparte, vsnr).set("LfdPersonenNrUnterNr", "01").set("LfdNrTarif", "001").
			set("FolgeNrZurLaufendenPersonenNrUnterNrLaufendeNrTarif", "1").set("NameVersichertenPersonVp", last).
			set("VornameVersichertenPersonVp", first).set("GeburtsdatumVp", dob).set("Waehrungsschluessel", "EUR").
			set("GesbeitragVpInWE", premium))
	}
	g.pkgPremium += cents
	g.stats.Contracts++
	g.stats.Persons++
}

// germanIBAN builds a German IBAN with valid check digits from an 18-digit BBAN.
func germanIBAN(bban string) string {
	rem := 0
	for _, c := range bban + "131400" { // D=13, E=14, check digits 00
		rem = (rem*10 + int(c-'0')) % 97
	}
	return "DE" + fmt.Sprintf("%02d", 98-rem) + bban
}

// String is the record as text (256 characters).
func (b *recBuilder) String() string { return string(b.buf[:]) }
