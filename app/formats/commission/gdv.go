package commission

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"golang.org/x/text/encoding/charmap"
)

// The GDV commission reader does its own framing rather than use gdv.Reader: that reader
// groups records under their contract's 0200 and drops records without one
// ("record_without_contract"), while an Inkasso file is 0400 records without contracts. The
// field positions come from the gdv package's layouts (generated from the GDV description),
// looked up once by technical name.

// gdvRecordLen is the length of a GDV record in characters.
const gdvRecordLen = gdv.RecordLen

// Sollstellungsarten (0400, positions 44-45) with an entry type of their own; every other
// code is a premium posting (its commission part is read with type premium).
var sollstellungsarten = map[string]struct{ typ, name string }{
	"40": {TypeCommission, "Provision"},
	"41": {TypeCancellation, "Storno Provision"},
	"90": {TypeCorrection, "manuelle Korrektur"},
}

// gdvField is a field of a layout: 1-based position and length in characters.
type gdvField struct{ pos, n int }

// gdvFields are the positions the reader needs, from the layouts.
type gdvFields struct {
	vorsatzVU, vorsatzPeriod                       gdvField
	vu, vsnr, soll, booked, amount, sign, currency gdvField
	textKinds, texts                               [4]gdvField
}

// layoutFields reads the positions from the gdv package's layouts; a layout without a field
// is a broken build of that package, so it panics at the first Read (tests catch it).
func layoutFields() gdvFields {
	field := func(key, tech string) gdvField {
		l := gdv.LayoutFor(key)
		if l == nil || l.TD(1) == nil || l.TD(1).Field(tech) == nil {
			panic(fmt.Sprintf("commission: the GDV layout %s has no field %s", key, tech))
		}
		f := l.TD(1).Field(tech)
		return gdvField{f.Pos, f.Len}
	}
	fs := gdvFields{
		vorsatzVU:     field("0001", "VuNr"),
		vorsatzPeriod: field("0001", "ErstellungsDatumZeitraumVomZeitraumBis"),
		vu:            field("0400", "VuNr"),
		vsnr:          field("0400", "VsNr"),
		soll:          field("0400", "Sollstellungsart"),
		booked:        field("0400", "Buchungsdatum"),
		amount:        field("0400", "GesProvisionsbetragInWE"),
		sign:          field("0400", "Vorzeichen5"),
		currency:      field("0400", "Waehrungsschluessel"),
	}
	for i := range 4 {
		fs.textKinds[i] = field("0430", "Textart"+strconv.Itoa(i+1))
		fs.texts[i] = field("0430", "Text"+strconv.Itoa(i+1))
	}
	return fs
}

// gdvRecord is one record as characters, blank-padded to 256.
type gdvRecord struct {
	line int
	rs   [gdvRecordLen]rune
}

func (r *gdvRecord) get(f gdvField) string {
	return strings.TrimSpace(string(r.rs[f.pos-1 : f.pos-1+f.n]))
}

// splitGDV frames records: one per line (LF, CRLF or CR), or every 256 characters when a
// line is longer (files written without line ends). It needs at most 257 characters of
// look-ahead, so memory stays bounded on any input.
func splitGDV(isUTF8 bool) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) { return splitRecord(data, atEOF, isUTF8) }
}

func splitRecord(data []byte, atEOF, isUTF8 bool) (advance int, token []byte, err error) {
	if len(data) == 0 {
		return 0, nil, nil
	}
	chars, i := 0, 0
	for i < len(data) {
		c := data[i]
		if c == '\n' || c == '\r' {
			end := i + 1
			if c == '\r' {
				if end == len(data) && !atEOF {
					return 0, nil, nil // a LF may follow
				}
				if end < len(data) && data[end] == '\n' {
					end++
				}
			}
			return end, data[:i], nil
		}
		if chars == gdvRecordLen {
			return i, data[:i], nil // 256 characters and no line end: the next record starts here
		}
		size := 1 // ISO-8859-15: a byte is a character
		if isUTF8 && c >= utf8.RuneSelf {
			if !atEOF && !utf8.FullRune(data[i:]) {
				return 0, nil, nil
			}
			_, size = utf8.DecodeRune(data[i:])
		}
		i += size
		chars++
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// readGDV reads the 0400 records of a GDV VU-Vermittler file.
func readGDV(src io.Reader, st *state) error {
	fs := layoutFields()
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(64 << 10)
	// ISO-8859-15 is the GDV's encoding; files that are valid UTF-8 with multi-byte
	// characters were re-encoded by some tool and are read as UTF-8.
	isUTF8 := utf8.Valid(trimCut(head)) && bytes.ContainsFunc(head, func(r rune) bool { return r >= utf8.RuneSelf })
	dec := charmap.ISO8859_15

	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	sc.Split(splitGDV(isUTF8))
	g := &gdvState{st: st, fs: fs}
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		rec := &g.rec
		rec.line = line
		n := 0
		if isUTF8 {
			for _, r := range string(b) {
				if n == gdvRecordLen {
					break
				}
				rec.rs[n] = r
				n++
			}
		} else {
			for _, c := range b {
				if n == gdvRecordLen {
					break
				}
				rec.rs[n] = dec.DecodeByte(c)
				n++
			}
		}
		for ; n < gdvRecordLen; n++ {
			rec.rs[n] = ' '
		}
		if err := g.record(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("commission: read GDV: %w", err)
	}
	if !g.started {
		return unreadable("the file holds no GDV records")
	}
	if err := g.flush(); err != nil {
		return err
	}
	if st.entries == 0 {
		st.issue(0, SeverityWarning, "no_commission_records", "the GDV file has no 0400 record with a commission amount")
	}
	return nil
}

// trimCut drops a UTF-8 sequence cut by the end of the peek window.
func trimCut(w []byte) []byte {
	for i := max(0, len(w)-utf8.UTFMax+1); i < len(w); i++ {
		if utf8.RuneStart(w[i]) && !utf8.FullRune(w[i:]) {
			return w[:i]
		}
	}
	return w
}

// gdvState is one GDV read: the entry waiting for its 0430 texts.
type gdvState struct {
	st      *state
	fs      gdvFields
	rec     gdvRecord
	started bool
	pending *Entry
	texts   []string
}

// record handles one framed record.
func (g *gdvState) record() error {
	rec := &g.rec
	satzart := string(rec.rs[:4])
	if !isSatzart(satzart) {
		if !g.started {
			return unreadable("line %d does not start with a GDV Satzart: not a GDV VU-Vermittler file", rec.line)
		}
		g.st.issue(rec.line, SeverityError, "record_invalid", fmt.Sprintf("line %d is no GDV record (Satzart %q); skipped", rec.line, satzart))
		return nil
	}
	g.started = true
	switch satzart {
	case "0001":
		if err := g.flush(); err != nil {
			return err
		}
		g.vorsatz()
	case "0400":
		if rec.rs[255] == '2' { // part 2: references and the policyholder's name, no commission
			return nil
		}
		if err := g.flush(); err != nil {
			return err
		}
		g.inkasso()
	case "0430":
		g.text()
	case "0410":
		// 0410 splits the 0400's amounts by Teilsparte: its commission amounts are part of
		// the 0400's Gesamt-Provisionsbetrag and would count twice.
	default:
		if err := g.flush(); err != nil {
			return err
		}
	}
	return nil
}

func isSatzart(s string) bool {
	if len(s) != 4 || !digits(s) {
		return false
	}
	for _, l := range gdv.Layouts() {
		if l.Satzart == s {
			return true
		}
	}
	return s == "9999" || (s >= "0800" && s <= "0899") // Nachsatz; insurer-specific record types
}

// vorsatz reads the insurer and the period of the first package.
func (g *gdvState) vorsatz() {
	if g.st.sum.VUNumber == "" {
		g.st.sum.VUNumber = g.rec.get(g.fs.vorsatzVU)
	}
	if g.st.sum.PeriodFrom != nil {
		return
	}
	p := g.fs.vorsatzPeriod
	if from, ok := gdvDate(g.rec.get(gdvField{p.pos, 8})); ok {
		g.st.sum.PeriodFrom = &from
	}
	if to, ok := gdvDate(g.rec.get(gdvField{p.pos + 8, 8})); ok {
		g.st.sum.PeriodTo = &to
	}
}

// inkasso reads a 0400 part 1 into the pending entry.
func (g *gdvState) inkasso() {
	rec, fs, st := &g.rec, g.fs, g.st
	code := rec.get(fs.soll)
	kind, own := sollstellungsarten[code]
	rawAmount := rec.get(fs.amount)
	if !own && strings.Trim(rawAmount, "0") == "" {
		// a premium posting without commission is no income of the broker
		return
	}
	e := Entry{Line: rec.line, PolicyNumber: rec.get(fs.vsnr), VUNumber: rec.get(fs.vu), Code: code}
	if own {
		e.Type, e.Description = kind.typ, kind.name
	} else {
		e.Type, e.Description = TypePremium, "Beitragssollstellung "+code
	}
	if e.PolicyNumber == "" {
		st.issue(rec.line, SeverityError, "policy_number_missing", "0400 without Versicherungsschein-Nummer; skipped")
		return
	}
	if c := rec.get(fs.currency); c != "" && c != "EUR" {
		st.issue(rec.line, SeverityError, "currency_not_eur", fmt.Sprintf("amount in %q, not EUR; skipped", c))
		return
	}
	amount, ok := gdvAmount(rawAmount, rec.get(fs.sign))
	if !ok {
		st.issue(rec.line, SeverityError, "amount_invalid", fmt.Sprintf("Gesamt-Provisionsbetrag %q with sign %q is no amount; skipped", rawAmount, rec.get(fs.sign)))
		return
	}
	booked, ok := gdvDate(rec.get(fs.booked))
	if !ok {
		st.issue(rec.line, SeverityError, "date_invalid", fmt.Sprintf("Buchungsdatum %q is no date (TTMMJJJJ); skipped", rec.get(fs.booked)))
		return
	}
	e.Amount, e.BookedOn = amount, booked
	if e.Type == TypeCancellation && amount.Sign() > 0 {
		st.issue(rec.line, SeverityWarning, "sign_unexpected", "Storno Provision with a positive amount: read as written")
	}
	g.pending = &e
}

// text adds an 0430's texts to the pending entry of the same policy.
func (g *gdvState) text() {
	if g.pending == nil || PolicyKey(g.rec.get(g.fs.vsnr)) != PolicyKey(g.pending.PolicyNumber) {
		return
	}
	for _, f := range g.fs.texts {
		if t := g.rec.get(f); t != "" && len(g.texts) < 20 {
			g.texts = append(g.texts, t)
		}
	}
}

// flush delivers the pending entry with its texts.
func (g *gdvState) flush() error {
	e := g.pending
	if e == nil {
		return nil
	}
	g.pending = nil
	if len(g.texts) > 0 {
		e.Description = strings.Join(append([]string{e.Description + ":"}, g.texts...), " ")
		g.texts = g.texts[:0]
	}
	return g.st.emit(*e)
}

// gdvAmount reads an amount with two implied decimals ("00000012345" is 123.45) and its sign
// ("-" negative, "+" or blank positive).
func gdvAmount(digitsText, sign string) (schematype.Money, bool) {
	if !digits(digitsText) || len(digitsText) > 14 {
		return schematype.Money{}, false
	}
	v := strings.TrimLeft(digitsText, "0")
	for len(v) < 3 {
		v = "0" + v
	}
	v = v[:len(v)-2] + "." + v[len(v)-2:]
	switch sign {
	case "-":
		v = "-" + v
	case "+", "":
	default:
		return schematype.Money{}, false
	}
	m, err := schematype.ParseMoney(v)
	return m, err == nil
}

// gdvDate reads TTMMJJJJ.
func gdvDate(s string) (time.Time, bool) {
	if len(s) != 8 || !digits(s) {
		return time.Time{}, false
	}
	d, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[2:4])
	y, _ := strconv.Atoi(s[4:])
	return validDate(y, m, d)
}
