package gdv

import (
	"bytes"
	"fmt"
)

// group holds the records of one contract while they arrive: a run of consecutive data
// records with the same insurer (VU-Nummer) and policy number, or everything inside one
// application (0052 … 9952). The records are copied into one buffer that is reused.
type group struct {
	key     []byte // VU-Nummer and Versicherungsschein-Nummer as in the records
	app     bool
	buf     []byte
	offs    []int32
	recs    []stored
	views   []record // the records of recs, made by views()
	dropped int
	parts   map[string]int // last part number per layout, to number parts without one
}

type stored struct {
	line         int64
	start, end   int
	ostart, oend int
	chars        int
	utf8         bool
	satzart      string
	layout       *Layout
	part         int
	fallback     bool
}

func (g *group) reset() {
	g.key, g.app, g.dropped = g.key[:0], false, 0
	g.buf = g.buf[:0]
	g.offs = g.offs[:0]
	clear(g.recs)
	g.recs = g.recs[:0]
	clear(g.views)
	g.views = g.views[:0]
	clear(g.parts)
	if cap(g.buf) > 1<<20 { // one huge contract must not pin its memory for the rest of the file
		g.buf, g.offs, g.recs, g.views = nil, nil, nil, nil
	}
}

// sameKey reports whether a record of insurer vu and policy vsnr (raw, untrimmed) belongs to
// the group.
func (g *group) sameKey(vu, vsnr []byte) bool {
	vu, vsnr = trimBlank(vu), trimBlank(vsnr)
	return len(g.key) == len(vu)+1+len(vsnr) && bytes.Equal(g.key[:len(vu)], vu) &&
		g.key[len(vu)] == 0 && bytes.Equal(g.key[len(vu)+1:], vsnr)
}

func (g *group) add(rec *record, fallback bool) {
	s := stored{line: rec.line, start: len(g.buf), chars: rec.chars, utf8: rec.utf8,
		satzart: rec.satzart, layout: rec.layout, part: rec.part, fallback: fallback, ostart: -1}
	g.buf = append(g.buf, rec.raw...)
	s.end = len(g.buf)
	if rec.offs != nil {
		s.ostart = len(g.offs)
		g.offs = append(g.offs, rec.offs...)
		s.oend = len(g.offs)
	}
	g.recs = append(g.recs, s)
}

// records returns the group's records, sliced from its buffer (valid until reset).
func (g *group) records() []record {
	g.views = g.views[:0]
	for _, s := range g.recs {
		rec := record{line: s.line, raw: g.buf[s.start:s.end], chars: s.chars, utf8: s.utf8,
			satzart: s.satzart, layout: s.layout, part: s.part}
		if s.ostart >= 0 {
			rec.offs = g.offs[s.ostart:s.oend]
		}
		g.views = append(g.views, rec)
	}
	return g.views
}

// data handles a data record (anything but 0001 and 9999): resolves its layout and part,
// counts it for the Nachsatz check and adds it to the contract it belongs to.
func (r *Reader) data(rec *record) {
	ps := r.pkg
	vuRaw := rec.slice(fKeyVU.pos, fKeyVU.n)
	if !ps.insurers[string(vuRaw)] || !r.insurers[string(vuRaw)] {
		if vu := r.raw(rec, vuRaw); vu != "" {
			if len(ps.insurers) < 100 {
				ps.insurers[vu] = true
			}
			if len(r.insurers) < 1000 {
				r.insurers[vu] = true
			}
		}
	}
	switch rec.satzart {
	case "0052":
		r.flush()
		r.group.app = true
		r.issue(Warning, "satzart_skipped", rec, "",
			"Satzart 0052 (Geschäftsvorfall) starts an application: its contract data is read with status application", "")
		return
	case "9952":
		r.issue(Warning, "satzart_skipped", rec, "", "Satzart 9952 ends an application; not imported", "")
		if r.group.app {
			r.flush()
		}
		return
	case "9950", "9951":
		r.issue(Warning, "satzart_skipped", rec, "", "Satzart "+rec.satzart+" (text or attachment of an application) not imported", "")
		return
	}
	sparteRaw := rec.slice(fKeySparte.pos, fKeySparte.n)
	sparte := string(sparteRaw)
	lay, fallback := resolveLayout(rec.satzart, sparte, rec)
	if lay == nil || fallback {
		sparte = r.raw(rec, sparteRaw) // for the message: as text
	}
	if lay == nil {
		if knownSatzart(rec.satzart) {
			r.issue(Warning, "unknown_layout", rec, "",
				fmt.Sprintf("the GDV has no layout of Satzart %s for Sparte %s (Wagnisart %q); the record is kept unread", rec.satzart, sparte, string(rec.at(60))),
				rec.text(r.cs))
			fallback = true
		} else {
			r.issue(Warning, "unknown_satzart", rec, "",
				fmt.Sprintf("Satzart %s is not in the GDV description (insurer-specific, e.g. 0800-0899); skipped", rec.satzart), rec.text(r.cs))
			return
		}
	} else if fallback {
		r.issue(Warning, "layout_fallback", rec, "",
			fmt.Sprintf("the GDV has no layout of Satzart %s for Sparte %s; read with the general layout %s, raw record kept", rec.satzart, sparte, lay.Key), "")
	}
	rec.layout = lay
	g := &r.group
	vsnr := rec.slice(fKeyVSNR.pos, fKeyVSNR.n)
	if len(g.recs) > 0 && !g.app && !g.sameKey(vuRaw, vsnr) {
		r.flush()
	}
	if len(g.recs) == 0 && !g.app {
		g.key = append(append(append(g.key[:0], trimBlank(vuRaw)...), 0), trimBlank(vsnr)...)
	}
	if lay != nil {
		rec.part = r.partOf(lay, rec)
	}
	if rec.satzart == "0200" && rec.part == 1 {
		if d, present, ok := decimalDigits(rec.slice(fPremium.pos, fPremium.n), fPremium.nk); ok && present {
			if sum, ok := ps.premium.Add(d); ok {
				ps.premium = sum
			}
		}
	}
	if len(g.recs) >= r.opt.MaxRecordsPerContract {
		if g.dropped == 0 {
			r.issue(Error, "contract_too_large", rec, "",
				fmt.Sprintf("a contract with more than %d records; the further records of policy %q are not imported", r.opt.MaxRecordsPerContract, r.raw(rec, rec.slice(fKeyVSNR.pos, fKeyVSNR.n))), "")
		}
		g.dropped++
		return
	}
	g.add(rec, fallback)
}

// partOf finds the Teildatensatz of a record where its layout says the number is: for most
// record types at 256, for others at 43, 47, 49, 51, 53, 60 or 66; single-part record types
// have none. Without a readable number the part continues the record type's last part in
// this contract (the GDV allows leaving out parts that hold only initial values; releases
// before 2009 had no number in many record types).
func (r *Reader) partOf(l *Layout, rec *record) int {
	if len(l.TDs) == 1 {
		return l.TDs[0].Nr
	}
	for _, td := range l.TDs {
		if td.NrPos > 0 && rec.at(td.NrPos) == byte('0'+td.Nr) {
			r.notePart(l, td.Nr)
			return td.Nr
		}
	}
	if c := rec.at(256); c >= '1' && c <= '9' && l.TD(int(c-'0')) != nil {
		r.notePart(l, int(c-'0'))
		return int(c - '0')
	}
	nr := l.TDs[0].Nr
	if last, ok := r.group.parts[l.Key]; ok {
		for _, td := range l.TDs {
			if td.Nr > last {
				nr = td.Nr
				break
			}
		}
	}
	// Older releases had no part number in many record types: a blank there is no error,
	// the part follows the last one. Anything else is a wrong number.
	blank := true
	for _, td := range l.TDs {
		if td.NrPos > 0 && rec.at(td.NrPos) != ' ' {
			blank = false
		}
	}
	if !blank {
		r.issue(Warning, "part_number_invalid", rec, "SatzNr",
			fmt.Sprintf("no valid Teildatensatz number where the layout %s has it; read as part %d", l.Key, nr), "")
	}
	r.notePart(l, nr)
	return nr
}

func (r *Reader) notePart(l *Layout, nr int) {
	if r.group.parts == nil {
		r.group.parts = map[string]int{}
	}
	r.group.parts[l.Key] = nr
}

// knownSatzart reports whether the GDV description has the Satzart at all.
func knownSatzart(s string) bool {
	for i := range layouts {
		if layouts[i].Satzart == s {
			return true
		}
	}
	return false
}

// resolveLayout finds the layout of a data record from its Satzart and Sparte (and, for life
// insurance, its Wagnisart at 60 and part number at 256; for health insurance its Folgenummer
// at 48; for Bausparen its Art at 44). fallback is set when the Sparte has no layout of its
// own or of its group and the general layout (Sparte 000) is used.
func resolveLayout(satzart, sparte string, rec *record) (l *Layout, fallback bool) {
	if l := LayoutFor(satzart); l != nil {
		return l, false
	}
	switch {
	case sparte == "010" && (satzart == "0220" || satzart == "0221"):
		wa := wagnisGroup(rec.at(60))
		if wa == "" {
			return nil, false
		}
		if satzart == "0220" && wa == "0" {
			return LayoutFor("0220.010.0"), false
		}
		if td := rec.at(256); td >= '6' && td <= '9' {
			if l := LayoutFor(satzart + ".010." + wa + "." + string(td)); l != nil {
				return l, false
			}
		}
		return LayoutFor(satzart + ".010." + wa + ".1"), false
	case sparte == "020" && satzart == "0220":
		return LayoutFor("0220.020." + string(rec.at(48))), false
	case sparte == "580" && satzart == "0220":
		switch rec.at(44) {
		case '0', '1':
			return LayoutFor("0220.580.01"), false
		case '2':
			return LayoutFor("0220.580.2"), false
		}
		return nil, false
	}
	ls, known := lineLayoutSparte(satzart, sparte)
	if l := LayoutFor(satzart + "." + ls); l != nil {
		return l, !known
	}
	if l := LayoutFor(satzart + ".000"); l != nil {
		return l, !generalSparte(satzart, sparte)
	}
	return nil, false
}

// wagnisGroup maps a Wagnisart (life insurance, position 60) to the layout group the GDV
// names it by: 1 and 3 share "13", 4 and 8 share "48".
func wagnisGroup(c byte) string {
	switch c {
	case '0', '2', '5', '6', '7', '9':
		return string(c)
	case '1', '3':
		return "13"
	case '4', '8':
		return "48"
	}
	return ""
}

// generalSparte reports whether the GDV assigns Sparte s to the general layout of the
// line-specific Satzart (Anlage 1): then reading it with the layout of Sparte 000 is exact.
func generalSparte(satzart, s string) bool {
	switch s {
	case "000", "060", "063", "065", "069", "160", "161", "162", "169", "200", "201", "202", "209", "233",
		"240", "241", "242", "243", "244", "249", "250", "251", "252", "290", "291", "293", "294", "296", "299", "630", "650":
		return true
	}
	switch satzart {
	case "0211":
		switch s {
		case "020", "030", "070", "510", "550", "560", "570", "580", "684":
			return true
		}
	case "0220":
		return s == "050"
	case "0221":
		switch s {
		case "020", "050", "550", "560", "570", "580", "684":
			return true
		}
	}
	return false
}
