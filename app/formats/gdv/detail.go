package gdv

import (
	"strconv"
	"strings"
)

// detail reads a record with every field its layout defines into a Detail. The key fields
// (positions 1-42, the same in every data record), part numbers and fillers are left out, and
// so are blank fields. A field name that comes again in a later part with another value is
// kept as "Name_<part>".
func (r *Reader) detail(lg *logical) Detail {
	d := Detail{Line: lg.first.line, Satzart: lg.satzart, Parts: make([]int, 0, 2)}
	d.Sparte = r.raw(lg.first, lg.first.slice(fKeySparte.pos, fKeySparte.n))
	if lg.layout == nil {
		d.Fields = map[string]any{}
		d.Raw = lg.texts(r.cs)
		return d
	}
	d.Type = lg.layout.Key
	d.Fields = make(map[string]any, 16)
	typed := lg.satzart == "0200" // the typed model reads 0200 and has warned about its fields
	for nr := 1; nr < len(lg.parts); nr++ {
		rec := lg.parts[nr]
		if rec == nil {
			continue
		}
		d.Parts = append(d.Parts, nr)
		td := lg.layout.TD(nr)
		if td == nil {
			continue
		}
		for i := range td.Fields {
			f := &td.Fields[i]
			if f.Pos+f.Len-1 <= 42 || f.Pos == td.NrPos || strings.HasPrefix(f.Tech, "SatzNr") || strings.HasPrefix(f.Tech, "Leerstellen") {
				continue
			}
			v := r.value(rec, f, typed && r.typed[f])
			if v == nil {
				continue
			}
			key := f.Tech
			if old, dup := d.Fields[key]; dup {
				if sameValue(old, v) {
					continue
				}
				key = f.Tech + "_" + strconv.Itoa(nr)
			}
			d.Fields[key] = v
		}
	}
	if lg.fallback {
		d.Raw = lg.texts(r.cs)
	}
	return d
}

// value converts one field: text and numeric codes as strings (numbers with their leading
// zeros: most are codes), amounts as Decimal, dates as Date. Blank is nil. An amount or date
// that does not parse is kept as its text, with a warning unless quiet (a typed field of the
// model already warned about it).
func (r *Reader) value(rec *record, f *Field, quiet bool) any {
	b := rec.slice(f.Pos, f.Len)
	switch f.Type {
	case Amount:
		if f.Len > maxScale { // several amounts in one field (KH-Deckungssummen): keep the digits
			if s := r.str(rec, fref{tech: f.Tech, pos: f.Pos, n: f.Len}); s != "" {
				return s
			}
			return nil
		}
		d, present, ok := decimalDigits(b, f.Decimals)
		switch {
		case !ok:
			s := r.raw(rec, b)
			if !quiet {
				r.issue(Warning, "invalid_number", rec, f.Tech, f.Tech+" is no number; kept as text", s)
			}
			return s
		case !present:
			return nil
		}
		return d
	case DateField:
		if len(trimBlank(b)) == 0 {
			return nil
		}
		d, ok := parseDate(b)
		switch {
		case !ok:
			s := r.raw(rec, b)
			if !quiet {
				r.issue(Warning, "invalid_date", rec, f.Tech, f.Tech+" is no date; kept as text", s)
			}
			return s
		case d.IsZero():
			return nil
		}
		return d
	}
	if quiet {
		s, _ := r.charsetOf(rec).decode(b)
		if s == "" {
			return nil
		}
		return s
	}
	s := r.str(rec, fref{tech: f.Tech, pos: f.Pos, n: f.Len})
	if s == "" {
		return nil
	}
	return s
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case Decimal:
		y, ok := b.(Decimal)
		return ok && x.Cmp(y) == 0
	case Date:
		y, ok := b.(Date)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}
