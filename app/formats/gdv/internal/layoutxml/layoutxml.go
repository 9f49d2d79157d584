// Package layoutxml turns the GDV's machine-readable description of the VU-Vermittler data set
// (the condensed XML kept by oboehm/gdv.xport) into the Go layout tables of package gdv. Run by
// internal/layoutgen (go generate); package gdv's test checks that layouts_gen.go is what it
// writes.
package layoutxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"go/format"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/charmap"
)

// Generate reads the descriptions (the first is the release the tables come from; every
// further one an older release that must be a positional subset of it) and returns the Go
// source of layouts_gen.go.
func Generate(files []string) ([]byte, error) {
	newest, err := load(files[0])
	if err != nil {
		return nil, err
	}
	for _, f := range files[1:] {
		older, err := load(f)
		if err != nil {
			return nil, err
		}
		if err := compatible(older, newest); err != nil {
			return nil, fmt.Errorf("%s is not a positional subset of %s: %w", f, files[0], err)
		}
	}
	return render(newest, filepath.Base(files[0]), slices.Clone(files[1:]))
}

// description is one release of the GDV description.
type description struct {
	stand   string
	layouts []layout
}

type layout struct {
	key, satzart, sparte, version string
	tds                           []td
}

type td struct {
	nr, nrPos int
	fields    []field
}

type field struct {
	pos, length, decimals int
	typ, tech, name       string
}

// The XML as encoding/xml sees it. A <satzart> is a flat sequence: <kennzeichnung>,
// <version>, then per part <satzanfang teilsatz="N"/>, its <feldreferenz> elements and
// <satzende/>; ",any" keeps that order.
type xService struct {
	Stand     string     `xml:"info>stand"`
	Satzarten []xSatzart `xml:"satzarten>satzart"`
	Felder    []xFeld    `xml:"felder>feld"`
}

type xSatzart struct {
	Kennzeichnung []xRef  `xml:"kennzeichnung>feldreferenz"`
	Version       string  `xml:"version"`
	Items         []xItem `xml:",any"`
}

type xRef struct {
	Referenz    string `xml:"referenz,attr"`
	Name        string `xml:"name"`
	Tech        string `xml:"technischerName"`
	Auspraegung string `xml:"auspraegung"`
}

type xItem struct {
	XMLName  xml.Name
	Teilsatz string `xml:"teilsatz,attr"`
	xRef
}

type xFeld struct {
	Referenz string `xml:"referenz,attr"`
	Name     string `xml:"name"`
	Bytes    int    `xml:"bytes"`
	Datentyp string `xml:"datentyp"`
	Decimals string `xml:"nachkommastellen"`
}

func load(path string) (*description, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(raw))
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if !strings.EqualFold(label, "ISO-8859-1") {
			return nil, fmt.Errorf("unexpected XML encoding %q", label)
		}
		return charmap.ISO8859_1.NewDecoder().Reader(r), nil
	}
	var s xService
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	felder := make(map[string]xFeld, len(s.Felder))
	for _, f := range s.Felder {
		felder[f.Referenz] = f
	}
	d := &description{stand: strings.TrimSpace(s.Stand)}
	seen := map[string]bool{}
	for _, sa := range s.Satzarten {
		l, err := convert(sa, felder)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if seen[l.key] {
			return nil, fmt.Errorf("%s: record type %s twice", path, l.key)
		}
		seen[l.key] = true
		d.layouts = append(d.layouts, l)
	}
	return d, nil
}

func convert(sa xSatzart, felder map[string]xFeld) (layout, error) {
	var l layout
	var parts []string
	for _, k := range sa.Kennzeichnung {
		v := strings.TrimSpace(k.Auspraegung)
		switch k.Tech {
		case "Satzart":
			l.satzart = v
		case "Sparte":
			if v != "" {
				l.sparte, _, _ = strings.Cut(v, ".")
			}
		}
		if v != "" {
			parts = append(parts, v)
		}
	}
	l.key = strings.Join(parts, ".")
	l.version = strings.TrimSpace(sa.Version)
	if len(l.satzart) != 4 {
		return l, fmt.Errorf("record type without Satzart: %q", l.key)
	}
	var cur *td
	for _, it := range sa.Items {
		switch it.XMLName.Local {
		case "satzanfang":
			nr, err := strconv.Atoi(it.Teilsatz)
			if err != nil {
				return l, fmt.Errorf("%s: part number %q", l.key, it.Teilsatz)
			}
			l.tds = append(l.tds, td{nr: nr})
			cur = &l.tds[len(l.tds)-1]
		case "satzende":
			cur = nil
		case "feldreferenz":
			if cur == nil {
				return l, fmt.Errorf("%s: field %s outside a part", l.key, it.Referenz)
			}
			f, err := fieldOf(it.xRef, felder)
			if err != nil {
				return l, fmt.Errorf("%s part %d: %w", l.key, cur.nr, err)
			}
			if f.tech == "SatzNr" && cur.nrPos == 0 {
				cur.nrPos = f.pos
			}
			cur.fields = append(cur.fields, f)
		}
	}
	for _, t := range l.tds {
		if err := covers(t); err != nil {
			return l, fmt.Errorf("%s part %d: %w", l.key, t.nr, err)
		}
	}
	return l, nil
}

func fieldOf(ref xRef, felder map[string]xFeld) (field, error) {
	def, ok := felder[ref.Referenz]
	if !ok {
		return field{}, fmt.Errorf("field %s not defined", ref.Referenz)
	}
	from, to, ok := positions(ref.Referenz)
	if !ok || to-from+1 != def.Bytes {
		return field{}, fmt.Errorf("field %s: positions and %d bytes disagree", ref.Referenz, def.Bytes)
	}
	f := field{pos: from, length: def.Bytes, tech: strings.TrimSpace(ref.Tech), name: clean(ref.Name)}
	if f.name == "" {
		f.name = clean(def.Name)
	}
	switch def.Datentyp {
	case "Alphanumerisch":
		f.typ = "Alnum"
	case "Numerisch":
		f.typ = "Numeric"
	case "Datum":
		f.typ = "DateField"
	case "Fliesskomma":
		f.typ = "Amount"
		n, err := strconv.Atoi(strings.TrimSpace(def.Decimals))
		if err != nil {
			return field{}, fmt.Errorf("field %s: decimals %q", ref.Referenz, def.Decimals)
		}
		f.decimals = n
	default:
		return field{}, fmt.Errorf("field %s: data type %q", ref.Referenz, def.Datentyp)
	}
	return f, nil
}

// positions reads "043-084-Name-Type" as 43 and 84.
func positions(ref string) (from, to int, ok bool) {
	p := strings.SplitN(ref, "-", 3)
	if len(p) < 3 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(p[0])
	b, err2 := strconv.Atoi(p[1])
	return a, b, err1 == nil && err2 == nil && a >= 1 && b <= 256 && a <= b
}

// covers checks that the fields of a part tile positions 1-256 without gap or overlap.
func covers(t td) error {
	next := 1
	fs := slices.Clone(t.fields)
	slices.SortFunc(fs, func(a, b field) int { return a.pos - b.pos })
	for _, f := range fs {
		if f.pos != next {
			return fmt.Errorf("field %s at %d, expected %d", f.tech, f.pos, next)
		}
		next = f.pos + f.length
	}
	if next != 257 {
		return fmt.Errorf("fields end at %d", next-1)
	}
	return nil
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// compatible reports a field of old that new does not have at the same place.
func compatible(old, new *description) error {
	idx := map[string]*layout{}
	for i := range new.layouts {
		idx[new.layouts[i].key] = &new.layouts[i]
	}
	var errs []error
	for _, o := range old.layouts {
		n, ok := idx[o.key]
		if !ok {
			errs = append(errs, fmt.Errorf("record type %s missing", o.key))
			continue
		}
		for _, ot := range o.tds {
			i := slices.IndexFunc(n.tds, func(t td) bool { return t.nr == ot.nr })
			if i < 0 {
				errs = append(errs, fmt.Errorf("%s part %d missing", o.key, ot.nr))
				continue
			}
			for _, of := range ot.fields {
				if strings.HasPrefix(of.tech, "Leerstellen") {
					continue
				}
				if !slices.ContainsFunc(n.tds[i].fields, func(nf field) bool {
					return nf.pos == of.pos && nf.length == of.length
				}) && !knownMove(o.key, of.tech) {
					errs = append(errs, fmt.Errorf("%s part %d: %s (%d, %d) moved", o.key, ot.nr, of.tech, of.pos, of.length))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// knownMove reports the fields known to differ between the releases, each checked by hand:
// in 0220.030 part 4 the repeated part number moved from 250 to 249 in 2013; the reader takes
// the part number from position 49, which did not move.
func knownMove(key, tech string) bool {
	return key == "0220.030" && tech == "SatzNrnwiederholung"
}

func render(d *description, source string, checked []string) ([]byte, error) {
	var b bytes.Buffer
	for i := range checked {
		checked[i] = filepath.Base(checked[i])
	}
	fmt.Fprintf(&b, "// Code generated by internal/layoutgen from spec/%s; DO NOT EDIT.\n\n", source)
	fmt.Fprintf(&b, "package gdv\n\n")
	fmt.Fprintf(&b, "// layoutStand is the \"Stand\" of the GDV description the tables come from. Checked to\n")
	fmt.Fprintf(&b, "// hold every field of the older description(s) at the same place: %s.\n", strings.Join(checked, ", "))
	fmt.Fprintf(&b, "const layoutStand = %q\n\n", d.stand)
	fmt.Fprintf(&b, "// layouts is read-only: the record types of the GDV description, in its order.\n")
	fmt.Fprintf(&b, "var layouts = [...]Layout{\n")
	for _, l := range d.layouts {
		fmt.Fprintf(&b, "{Key: %q, Satzart: %q, Sparte: %q, Version: %q, TDs: []TD{\n", l.key, l.satzart, l.sparte, l.version)
		for _, t := range l.tds {
			fmt.Fprintf(&b, "{Nr: %d, NrPos: %d, Fields: []Field{\n", t.nr, t.nrPos)
			for _, f := range t.fields {
				fmt.Fprintf(&b, "{%d, %d, %s, %d, %q, %q},\n", f.pos, f.length, f.typ, f.decimals, f.tech, f.name)
			}
			fmt.Fprintf(&b, "}},\n")
		}
		fmt.Fprintf(&b, "}},\n")
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, "// layoutIndex returns the index in layouts of the record type key, or -1.\n")
	fmt.Fprintf(&b, "func layoutIndex(key string) int {\n\tswitch key {\n")
	for i, l := range d.layouts {
		fmt.Fprintf(&b, "\tcase %q:\n\t\treturn %d\n", l.key, i)
	}
	fmt.Fprintf(&b, "\t}\n\treturn -1\n}\n")
	return format.Source(b.Bytes())
}
