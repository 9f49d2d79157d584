package gdv

import (
	"fmt"
	"regexp"
	"strings"
)

// readHeader reads part nr (1-3) of a Vorsatz into the open package.
func (r *Reader) readHeader(rec *record, nr int) {
	p := r.pkg.p
	rec.layout = LayoutFor("0001")
	rec.part = nr
	if nr == 1 {
		p.VUNumber = r.str(rec, fVorsatzVU)
		p.Sender = r.str(rec, fVorsatzSender)
		p.Addressee = r.str(rec, fVorsatzAddressee)
		p.PeriodFrom = r.dateAt(rec, fVorsatzPeriod.pos, 8, "ErstellungsDatumZeitraumVom")
		p.PeriodTo = r.dateAt(rec, fVorsatzPeriod.pos+8, 8, "ErstellungsDatumZeitraumBis")
		p.Agency = r.str(rec, fVorsatzAgency)
		p.SenderKind = r.code(rec, fVorsatzSenderK, senderKindCodes)
		p.AddresseeKind = r.code(rec, fVorsatzAddrK, senderKindCodes)
	}
	td := rec.layout.TD(nr)
	if td == nil {
		return
	}
	for _, f := range td.Fields {
		key, ok := versionKey(f)
		if !ok {
			continue
		}
		v := r.raw(rec, rec.slice(f.Pos, f.Len))
		if v == "" {
			continue
		}
		if p.Versions == nil {
			p.Versions = map[string]string{}
		}
		if _, dup := p.Versions[key]; dup {
			key = f.Tech
		}
		p.Versions[key] = v
	}
	p.Release = release(p.Versions)
}

var versionName = regexp.MustCompile(`\b(\d{4})(?: (\d{3}))?\b`)

// versionKey names a version field of the Vorsatz after the record type it is for: "Satzart
// 0210 050" is "0210.050", "Schadeninformationssatz Satzart 0500" is "0500". Fields that name
// no record type ("Kfz-Baustein") keep their technical name.
func versionKey(f Field) (string, bool) {
	if f.Pos < 96 || f.Len != 3 || strings.HasPrefix(f.Tech, "Leerstellen") ||
		f.Tech == "ArtAbsenders" || f.Tech == "ArtAdressaten" || f.Pos >= 237 && f.Pos <= 242 {
		return "", false
	}
	m := versionName.FindStringSubmatch(f.Name)
	switch {
	case m == nil:
		return f.Tech, true
	case m[2] != "":
		return m[1] + "." + m[2], true
	}
	return m[1], true
}

// release names the GDV release whose versions of 0001, 0100 and 0200 the Vorsatz declares.
func release(v map[string]string) string {
	switch v["0001"] + "/" + v["0100"] + "/" + v["0200"] {
	case "2.2/2.1/2.3":
		return "2009"
	case "2.3/2.2/2.4":
		return "2013"
	case "2.4/2.3/2.5":
		return "2015/2018"
	case "2.5/2.3/2.5":
		return "2023"
	}
	return ""
}

// readTrailer reads the Nachsatz and checks it against the package.
func (r *Reader) readTrailer(rec *record, p *Package) {
	rec.layout = LayoutFor("9999")
	rec.part = 1
	t := &Trailer{Line: rec.line, Agency: r.str(rec, fNachAgency)}
	p.Trailer = t
	p.Check.Status = CheckConsistent
	if rec.chars < fNachPremium.pos+fNachPremium.n-1 {
		t.Truncated = true
	}
	if count := rec.slice(fNachCount.pos, fNachCount.n); len(trimBlank(count)) > 0 {
		if d, present, ok := decimalDigits(count, 0); ok && present && len(count) == fNachCount.n {
			n := d.Units()
			t.RecordCount = &n
		} else {
			t.Truncated = t.Truncated || len(count) < fNachCount.n
			if len(count) == fNachCount.n {
				r.issue(Warning, "invalid_number", rec, fNachCount.tech, "Anzahl der Sätze is no number", r.raw(rec, count))
			}
		}
	}
	if !t.Truncated {
		t.TotalPremium = r.amount(rec, fNachPremium)
		t.GrossPremium = r.signed(rec, fNachGross, fNachGrossS)
		t.Commission = r.signed(rec, fNachComm, fNachCommS)
		t.Benefits = r.signed(rec, fNachBenef, fNachBenefS)
		t.ClaimsCosts = r.signed(rec, fNachCosts, fNachCostsS)
	}
	p.Check.RecordsDeclared = t.RecordCount
	p.Check.PremiumDeclared = t.TotalPremium
	if t.Truncated {
		p.Check.Status = CheckTruncated
		r.issue(Warning, "trailer_truncated", rec, "",
			fmt.Sprintf("the Nachsatz of package %d ends after %d characters: the values it lacks are not checked", p.Number, rec.chars), rec.text(r.cs))
	}
	if t.RecordCount != nil && *t.RecordCount != p.Records {
		p.Check.Status = CheckInconsistent
		r.issue(Warning, "trailer_count_mismatch", rec, fNachCount.tech,
			fmt.Sprintf("the Nachsatz of package %d declares %d records, the package has %d (an excerpt, or records lost)", p.Number, *t.RecordCount, p.Records),
			r.raw(rec, rec.slice(fNachCount.pos, fNachCount.n)))
	}
	if t.TotalPremium != nil && t.TotalPremium.Cmp(p.Check.PremiumCounted) != 0 {
		p.Check.Status = CheckInconsistent
		r.issue(Warning, "trailer_premium_mismatch", rec, fNachPremium.tech,
			fmt.Sprintf("the Nachsatz of package %d declares a Gesamtbeitrag of %s, the contracts sum to %s", p.Number, t.TotalPremium, p.Check.PremiumCounted),
			r.raw(rec, rec.slice(fNachPremium.pos, fNachPremium.n)))
	}
	if t.RecordCount == nil && t.TotalPremium == nil && p.Check.Status == CheckConsistent {
		p.Check.Status = CheckTruncated // nothing to check against
	}
}
