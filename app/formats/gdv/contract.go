package gdv

import (
	"fmt"
	"strings"
)

// logical is one record made of its Teildatensätze (parts).
type logical struct {
	layout   *Layout
	satzart  string
	parts    [10]*record // by part number 1-9
	first    *record
	max      int
	fallback bool
}

// texts returns the parts as text, for records kept raw.
func (lg *logical) texts(c *charset) []string {
	if lg.layout == nil {
		return []string{lg.first.text(c)}
	}
	var out []string
	for _, p := range lg.parts {
		if p != nil {
			out = append(out, p.text(c))
		}
	}
	return out
}

// flush turns the records of the current group into contracts (and persons without one) and
// delivers them.
func (r *Reader) flush() {
	g := &r.group
	defer g.reset()
	if len(g.recs) == 0 {
		return
	}
	logicals := r.assemble()
	var (
		contracts  []*Contract
		cur        *Contract
		persons    []Person
		preDetails []Detail
	)
	for _, lg := range logicals {
		switch lg.satzart {
		case "0100":
			if p, ok := r.person(lg); ok {
				persons = append(persons, p)
			}
		case "0200":
			c, ok := r.contract(lg, g.app)
			if !ok {
				cur = nil
				continue
			}
			for _, p := range persons {
				c.addPerson(p)
			}
			persons = nil
			c.Details = append(c.Details, preDetails...)
			preDetails = nil
			contracts = append(contracts, c)
			cur = c
		default:
			d := r.detail(lg)
			if cur != nil {
				cur.Details = append(cur.Details, d)
			} else {
				preDetails = append(preDetails, d)
			}
		}
	}
	if len(preDetails) > 0 {
		for _, d := range preDetails {
			r.issue(Error, "record_without_contract", &record{line: d.Line, satzart: d.Satzart}, "",
				fmt.Sprintf("Satzart %s record of policy %q without its contract (0200); not imported", d.Satzart, r.groupPolicy()), "")
		}
	}
	if len(persons) > 0 {
		if cur != nil { // addresses after their contract
			for _, p := range persons {
				cur.addPerson(p)
			}
		} else {
			r.issue(Warning, "address_without_contract", &record{line: persons[0].Line, satzart: "0100"}, "",
				fmt.Sprintf("%d address(es) of policy %q without a contract (0200): delivered as persons only", len(persons), r.groupPolicy()), "")
			r.sum.Persons += int64(len(persons))
			for _, p := range persons {
				r.countRoles(&p)
			}
			r.emit(Event{Kind: KindPersons, Persons: persons})
		}
	}
	for _, c := range contracts {
		r.sum.Contracts++
		r.pkg.p.Contracts++
		r.sum.Persons += int64(len(c.Persons))
		for i := range c.Persons {
			r.countRoles(&c.Persons[i])
		}
		r.emit(Event{Kind: KindContract, Contract: c})
	}
}

func (r *Reader) countRoles(p *Person) {
	for _, role := range p.Roles {
		r.sum.PersonsByRole[role.Kind]++
	}
}

func (r *Reader) groupPolicy() string {
	_, vsnr, _ := strings.Cut(string(r.group.key), "\x00")
	s, _ := r.cs.decode([]byte(vsnr))
	return s
}

// assemble joins the group's parts into records. A part continues the open record of its
// layout when its number is higher than the parts that record has; otherwise it starts a new
// one. So parts may be left out (1, 2, 4) and other records may come between the parts of one
// (0220.030 part 1, 2, then 0221.030, then 0220.030 part 3), as real files do. Where the
// layout puts sub-key fields before the part number (the running number of the insured
// person, risk or object at 43 up to the part number), a part joins the open record with the
// same sub-key: the parts of two risks may be interleaved (0220.040: risk 1 part 1, risk 2
// part 1, risk 1 part 2, risk 2 part 2, as in the GDV's own sample).
func (r *Reader) assemble() []*logical {
	g := &r.group
	var out []*logical
	last, bySub := r.lastOpen, r.subOpen // layout → most recent record; layout + sub-key → its record
	clear(last)
	clear(bySub)
	recs := g.records()
	pool := make([]logical, 0, len(recs)) // one allocation for the group's records
	newLogical := func(l logical) *logical {
		pool = append(pool, l)
		return &pool[len(pool)-1]
	}
	for i := range g.recs {
		s := g.recs[i]
		p := &recs[i]
		if s.layout == nil {
			out = append(out, newLogical(logical{satzart: s.satzart, first: p, fallback: true}))
			continue
		}
		k := s.layout.Key
		sub := subKey(s.layout, s.part, p)
		lg := last[k]
		if sub != "" {
			lg = bySub[k+"\x00"+sub]
		}
		if lg == nil || s.part <= lg.max || lg.parts[s.part] != nil {
			lg = newLogical(logical{layout: s.layout, satzart: s.satzart, first: p, fallback: s.fallback})
			out = append(out, lg)
		}
		last[k] = lg
		if sub != "" {
			bySub[k+"\x00"+sub] = lg
		}
		lg.parts[s.part] = p
		lg.max = s.part
	}
	return out
}

// subKey is the value of the fields between position 43 and the part number: the record's
// running number within the contract. Blanks and leading zeros do not count ("000001" and
// "000000001" are the same person).
func subKey(l *Layout, part int, rec *record) string {
	td := l.TD(part)
	if td == nil || td.NrPos <= 43 || td.NrPos >= RecordLen {
		return ""
	}
	var b []byte
	for _, f := range td.Fields {
		if f.Pos < 43 || f.Pos >= td.NrPos {
			continue
		}
		v := trimBlank(rec.slice(f.Pos, f.Len))
		for len(v) > 1 && v[0] == '0' {
			v = v[1:]
		}
		b = append(b, v...)
		b = append(b, '|')
	}
	if len(trimBlank(bytesNoSep(b))) == 0 {
		return ""
	}
	return string(b)
}

func bytesNoSep(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '|' {
			out = append(out, c)
		}
	}
	return out
}

// contract reads a 0200 record.
func (r *Reader) contract(lg *logical, app bool) (*Contract, bool) {
	t1 := lg.parts[1]
	if t1 == nil {
		r.issue(Error, "contract_incomplete", lg.first, "",
			fmt.Sprintf("contract %q has no 0200 part 1 (dates, status, premium); not imported", r.str(lg.first, fKeyVSNR)), "")
		return nil, false
	}
	c := &Contract{
		Package:        r.pkg.p.Number,
		Line:           t1.line,
		VUNumber:       r.str(t1, fKeyVU),
		PolicyNumber:   r.str(t1, fKeyVSNR),
		SequenceNumber: r.str(t1, fKeyFolgeNr),
		Agency:         r.str(t1, fKeyAgency),
		Bundled:        t1.at(fKeyBundle.pos) == '1',
		Application:    app,
	}
	if p := r.pkg.p; !p.HeaderMissing && p.VUNumber == c.VUNumber && p.SenderKind.Code != "2" {
		c.InsurerName = p.Sender
	}
	c.Sparte = r.code(t1, fKeySparte, sparten)
	c.Collection = r.code(t1, fCollection, collectionCodes)
	c.StartDate = r.date(t1, fStart)
	c.EndDate = r.date(t1, fEnd)
	c.MainRenewalDate = r.date(t1, fMainRenewal)
	c.CancellationDate = r.date(t1, fCancelDate)
	c.ApplicationDate = r.date(t1, fAppDate)
	c.PaymentFrequencyCode = r.code(t1, fFrequency, paymentFrequencyCodes)
	freq, perYear := paymentFrequency(c.PaymentFrequencyCode.Code)
	c.PaymentFrequency = freq
	c.StatusCode = r.code(t1, fStatus, contractStatusCodes)
	if reason := t1.slice(fReason.pos, fReason.n); string(reason) != "00" { // zero-filled: no reason
		c.CancellationReason = r.code(t1, fReason, cancellationReasonCodes)
	}
	c.Status = contractStatus(c.StatusCode.Code, c.CancellationReason.Code)
	if app {
		c.Status = StatusApplication
	}
	c.Currency = r.str(t1, fCurrency)
	if c.Currency != "" && !isCurrency(c.Currency) {
		r.issue(Warning, "unknown_code", t1, fCurrency.tech, fmt.Sprintf("currency %q is no ISO 4217 code; kept as delivered", c.Currency), c.Currency)
	}
	c.Premium = r.amount(t1, fPremium)
	c.CustomerNumber = r.str(t1, fContractCust)
	c.BrokerCustomerNumber = r.str(t1, fContractBrk)
	if c.Premium != nil {
		switch {
		case strings.HasPrefix(c.Sparte.Code, "02"): // health: the Gesamtbeitrag is the monthly amount
			perYear = 12
		case c.PaymentFrequencyCode.Code == "9": // premium-free
			zero := NewDecimal(0, c.Premium.Scale())
			c.AnnualPremium = &zero
		}
		if perYear > 0 {
			if a, ok := c.Premium.MulInt(perYear); ok {
				c.AnnualPremium = &a
			}
		}
	}
	if t2 := lg.parts[2]; t2 != nil {
		c.GrossPremium = r.amount(t2, fGross)
		c.PolicyNumberPrinted = r.str(t2, fPrintedVSNR)
		c.ProductName = r.str(t2, fProductName)
	}
	if c.PolicyNumber == "" {
		r.issue(Warning, "policy_number_missing", t1, fKeyVSNR.tech, "contract without Versicherungsschein-Nummer: it cannot be matched by policy number", "")
	}
	c.Details = append(c.Details, r.detail(lg))
	return c, true
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
