package commission

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"golang.org/x/text/encoding/charmap"
)

// BiPRO "Abrechnung" (norm 430.7, formerly 430.3; the spec calls the format bipro_430_5).
// The norm's XSDs are for BiPRO members only; public descriptions (BiPRO's "Optimierung
// Abrechnungsverkehr", b-tix's best-practice articles) say an Abrechnung is a list of
// booking lines (Abrechnungspositionen/Buchungen) that separate premium, tax and commission
// amounts. So the reader does not validate against a schema it cannot have: it streams the
// XML with encoding/xml's Token, ignores namespaces and prefixes, and reads each booking
// element by the German names the BiPRO data model uses (docs/decisions/commissions.md,
// "Formats", lists them). Anything else in the document is skipped.

// Limits: a document of at most biproMaxBytes, elements nested at most biproMaxDepth deep,
// and no single token (a text, a tag) longer than biproMaxToken, so a hostile document
// cannot make the reader hold more than about a megabyte.
const (
	biproMaxBytes = 512 << 20
	biproMaxDepth = 100
	biproMaxToken = 1 << 20
	biproMaxText  = 4 << 10 // text kept per element
)

// Element names (lower case, without namespace) of a booking and of its values.
var (
	biproEntry  = names("buchung", "abrechnungsposition", "buchungsposition", "provisionsbuchung", "einzelbuchung", "posten", "position")
	biproPolicy = names("versicherungsscheinnummer", "versicherungsscheinnr", "vsnr", "vertragsnummer", "policennummer")
	biproAmount = names("provisionsbetrag", "courtagebetrag", "buchungsbetrag", "betrag")
	biproSign   = names("vorzeichen", "sollhaben", "sollhabenkennzeichen", "kennzeichensollhaben")
	biproDate   = names("buchungsdatum", "buchungstag", "valutadatum", "valuta", "datum")
	biproType   = names("buchungsart", "postenart", "provisionsart", "courtageart", "art")
	biproText   = names("buchungstext", "text", "bemerkung", "beschreibung", "verwendungszweck")
	biproVU     = names("vunummer", "vunr", "gesellschaftsnummer")
	biproCurr   = names("waehrung", "währung", "waehrungsschluessel", "waehrungscode")
	biproFrom   = names("abrechnungszeitraumvon", "zeitraumvon", "abrechnungsbeginn")
	biproTo     = names("abrechnungszeitraumbis", "zeitraumbis", "abrechnungsende")
	biproPeriod = names("abrechnungszeitraum", "zeitraum")
	biproBegin  = names("beginn", "von")
	biproEnd    = names("ende", "bis")
)

func names(ns ...string) map[string]bool {
	m := make(map[string]bool, len(ns))
	for _, n := range ns {
		m[n] = true
	}
	return m
}

// tokenLimit fails a read when more than biproMaxToken bytes came since the last token (reset
// by the loop) or more than biproMaxBytes in all.
type tokenLimit struct {
	r            io.Reader
	since, total int64
}

var errBiPROTooLarge = errors.New("too large")

func (l *tokenLimit) Read(p []byte) (int, error) {
	if l.since > biproMaxToken || l.total > biproMaxBytes {
		return 0, errBiPROTooLarge
	}
	n, err := l.r.Read(p)
	l.since += int64(n)
	l.total += int64(n)
	return n, err
}

// biproCharset decodes the encodings German XML declares besides UTF-8.
func biproCharset(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "iso-8859-1", "latin1", "iso_8859-1":
		return charmap.ISO8859_1.NewDecoder().Reader(in), nil
	case "iso-8859-15", "latin9":
		return charmap.ISO8859_15.NewDecoder().Reader(in), nil
	case "windows-1252", "cp1252":
		return charmap.Windows1252.NewDecoder().Reader(in), nil
	}
	return nil, fmt.Errorf("encoding %q not supported", label)
}

// biproBooking is the values of one booking element as read.
type biproBooking struct {
	line                                       int
	policy, amount, sign, date, kind, text, vu string
	currency                                   string
}

// readBiPRO reads the bookings of a BiPRO Abrechnung.
func readBiPRO(src io.Reader, st *state) error {
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(512)
	if !bytes.HasPrefix(bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF")), " \t\r\n"), []byte("<")) {
		return unreadable("not XML: a BiPRO Abrechnung starts with '<'")
	}
	lim := &tokenLimit{r: br}
	dec := xml.NewDecoder(lim)
	dec.CharsetReader = biproCharset
	var (
		stack      []string // lower-case local names of the open elements
		text       []byte   // character data of the innermost element
		cur        *biproBooking
		entryDepth int
		sawAbr     bool
	)
	for {
		tok, err := dec.Token()
		lim.since = 0
		switch {
		case errors.Is(err, io.EOF):
			if len(stack) > 0 {
				return unreadable("the XML ends inside <%s>", stack[len(stack)-1])
			}
			if !sawAbr && st.entries == 0 {
				return unreadable("XML without a BiPRO Abrechnung (no Abrechnung element, no booking)")
			}
			if st.entries == 0 && !hasErrors(st) {
				st.issue(0, SeverityWarning, "no_commission_records", "the Abrechnung has no booking")
			}
			return nil
		case errors.Is(err, errBiPROTooLarge):
			return unreadable("the XML is larger than %d MB or has a token over 1 MB", biproMaxBytes>>20)
		case err != nil:
			return unreadable("not well-formed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			stack = append(stack, name)
			if len(stack) > biproMaxDepth {
				return unreadable("elements nested deeper than %d", biproMaxDepth)
			}
			text = text[:0]
			if strings.Contains(name, "abrechnung") {
				sawAbr = true
			}
			if cur == nil && biproEntry[name] {
				line, _ := dec.InputPos()
				cur, entryDepth = &biproBooking{line: line}, len(stack)
			}
			if cur != nil {
				for _, a := range t.Attr { // <Betrag Waehrung="EUR" Vorzeichen="-">
					an := strings.ToLower(a.Name.Local)
					switch {
					case biproCurr[an] && cur.currency == "":
						cur.currency = strings.TrimSpace(a.Value)
					case biproSign[an] && cur.sign == "":
						cur.sign = strings.TrimSpace(a.Value)
					}
				}
			}
		case xml.CharData:
			if len(text)+len(t) <= biproMaxText {
				text = append(text, t...)
			}
		case xml.EndElement:
			name := stack[len(stack)-1]
			v := strings.TrimSpace(string(text))
			text = text[:0]
			parent := ""
			if len(stack) > 1 {
				parent = stack[len(stack)-2]
			}
			switch {
			case cur != nil && len(stack) == entryDepth:
				if err := biproEmit(cur, st); err != nil {
					return err
				}
				cur = nil
			case cur != nil && v != "":
				cur.set(name, v)
			case cur == nil && v != "":
				biproHeader(name, parent, v, st)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

func hasErrors(st *state) bool {
	for _, i := range st.sum.Issues {
		if i.Severity == SeverityError {
			return true
		}
	}
	return st.dropped > 0
}

// set takes a value of a booking; the first of each kind wins (an inner <Betrag> before the
// outer one that wraps it with its currency).
func (b *biproBooking) set(name, v string) {
	first := func(p *string) {
		if *p == "" {
			*p = v
		}
	}
	switch {
	case biproPolicy[name]:
		first(&b.policy)
	case biproAmount[name]:
		first(&b.amount)
	case biproSign[name]:
		first(&b.sign)
	case biproDate[name]:
		first(&b.date)
	case biproType[name]:
		first(&b.kind)
	case biproText[name]:
		first(&b.text)
	case biproVU[name]:
		first(&b.vu)
	case biproCurr[name]:
		first(&b.currency)
	}
}

// biproHeader reads the Abrechnung's insurer and period outside the bookings.
func biproHeader(name, parent, v string, st *state) {
	switch {
	case biproVU[name] && st.sum.VUNumber == "":
		st.sum.VUNumber = v
	case biproFrom[name] || (biproPeriod[parent] && biproBegin[name]):
		if d, ok := xsDate(v); ok && st.sum.PeriodFrom == nil {
			st.sum.PeriodFrom = &d
		}
	case biproTo[name] || (biproPeriod[parent] && biproEnd[name]):
		if d, ok := xsDate(v); ok && st.sum.PeriodTo == nil {
			st.sum.PeriodTo = &d
		}
	}
}

// biproEmit checks a booking and delivers it.
func biproEmit(b *biproBooking, st *state) error {
	if b.policy == "" && b.amount == "" && b.date == "" {
		return nil // a "Position" element that is no booking (an address, a list)
	}
	if b.policy == "" {
		st.issue(b.line, SeverityError, "policy_number_missing", "booking without Versicherungsscheinnummer; skipped")
		return nil
	}
	if c := strings.ToUpper(b.currency); c != "" && c != "EUR" && c != "978" {
		st.issue(b.line, SeverityError, "currency_not_eur", fmt.Sprintf("amount in %q, not EUR; skipped", b.currency))
		return nil
	}
	amount, err := schematype.ParseMoney(strings.TrimPrefix(b.amount, "+"))
	if err != nil {
		st.issue(b.line, SeverityError, "amount_invalid", fmt.Sprintf("Betrag %q is no decimal like 1234.56; skipped", b.amount))
		return nil
	}
	neg, ok := signOf(b.sign)
	if !ok {
		st.issue(b.line, SeverityError, "amount_invalid", fmt.Sprintf("Vorzeichen/Soll-Haben %q unknown; skipped", b.sign))
		return nil
	}
	switch {
	case b.sign == "":
	case neg && amount.Sign() > 0:
		amount = schematype.Money{}.Sub(amount)
	case !neg && amount.Sign() < 0:
		st.issue(b.line, SeverityWarning, "sign_conflict", fmt.Sprintf("a negative Betrag with the sign %q: read as negative", b.sign))
	}
	booked, ok := xsDate(b.date)
	if !ok {
		st.issue(b.line, SeverityError, "date_invalid", fmt.Sprintf("Buchungsdatum %q is no date; skipped", b.date))
		return nil
	}
	e := Entry{Line: b.line, PolicyNumber: b.policy, VUNumber: b.vu, Code: b.kind, Amount: amount, BookedOn: booked, Description: b.text}
	if t, ok := typeOfText(b.kind); ok {
		e.Type = t
	} else {
		if b.kind != "" {
			st.issue(b.line, SeverityWarning, "type_unknown", fmt.Sprintf("Buchungsart %q unknown; typed by the amount's sign", b.kind))
		}
		e.Type = typeBySign(amount)
	}
	if e.Type == TypeCancellation && amount.Sign() > 0 {
		st.issue(b.line, SeverityWarning, "sign_unexpected", "a cancellation with a positive amount: read as written")
	}
	return st.emit(e)
}

// signOf reads a sign marker from the broker's side of the account: "-", "S"/"Soll" (the
// broker's account is charged: a Storno) are negative; "+", "H"/"Haben" (credited) and none
// are positive.
func signOf(s string) (neg, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "+", "h", "haben":
		return false, true
	case "-", "s", "soll":
		return true, true
	}
	return false, false
}

// xsDate reads xs:date ("2025-01-15", with a time zone "2025-01-15+01:00" or "Z"), the date of
// an xs:dateTime, or a German date.
func xsDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		rest := s[10:]
		if rest == "" || rest == "Z" || rest[0] == 'T' || ((rest[0] == '+' || rest[0] == '-') && len(rest) == 6) {
			return parseDate(s[:10])
		}
		return time.Time{}, false
	}
	if strings.Count(s, ".") == 2 {
		return parseDate(s)
	}
	return time.Time{}, false
}
