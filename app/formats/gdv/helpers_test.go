package gdv

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// Test files are built from records made with the generator's layout-driven builder, so a
// test record is as exact as a generated one, and then bent where a test needs it.

func rb(key string, part int) *recBuilder { return (&generator{}).rec(key, part) }

func hdr(vu string) *recBuilder {
	return rb("0001", 1).set("VuNr", vu).set("Absender", "Test Versicherung AG").
		set("ErstellungsDatumZeitraumVomZeitraumBis", "0101202431122024").set("Satzart0001", "2.5")
}

func addr(vu, vsnr string, part int) *recBuilder { return rb("0100", part).key(vu, "030", vsnr) }

func person(vu, vsnr, last, first, dob, role string) *recBuilder {
	return addr(vu, vsnr, 1).set("Anredeschluessel", "1").set("Name1", last).set("Name3", first).
		set("Geburtsdatum", dob).set("Adresskennzeichen", role).set("PLZ", "80331").set("Ort", "München")
}

func contract0200(vu, vsnr, sparte, premium string) *recBuilder {
	d, err := ParseDecimal(premium)
	if err != nil {
		panic(err)
	}
	return rb("0200", 1).key(vu, sparte, vsnr).set("Vertragsbeginn", Date{2024, 1, 1}).set("Zahlungsweise", "1").
		set("Vertragsstatus", "1").set("Waehrungsschluessel", "EUR").set("GesbeitragNettoInWE", d)
}

func trailer(count int, premium string) *recBuilder {
	d, _ := ParseDecimal(premium)
	return rb("9999", 1).set("AnzSaetze", count).set("Gesbeitrag", d)
}

// pkg frames records with a Vorsatz and a Nachsatz whose count and Gesamtbeitrag are right.
func pkg(vu string, recs ...any) []any {
	out := []any{hdr(vu)}
	sum := NewDecimal(0, 2)
	for _, r := range recs {
		if b, ok := r.(*recBuilder); ok && b.l.Key == "0200" && b.td.Nr == 1 {
			d, _, _ := decimalDigits([]byte(string(b.buf[115:127])), 2)
			sum, _ = sum.Add(d)
		}
	}
	out = append(out, recs...)
	return append(out, trailer(len(recs), sum.String()))
}

// lines renders records (builders, strings, or slices of them) as 256-character lines.
func lines(recs ...any) []string {
	var out []string
	for _, r := range recs {
		switch x := r.(type) {
		case *recBuilder:
			out = append(out, x.String())
		case string:
			out = append(out, x)
		case []any:
			out = append(out, lines(x...)...)
		case []string:
			out = append(out, x...)
		}
	}
	return out
}

// latin9 encodes lines as ISO-8859-15 with LF.
func latin9(ls ...string) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		for _, r := range l {
			c, ok := charmap.ISO8859_15.EncodeRune(r)
			if !ok {
				c = '?'
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func read(t *testing.T, input []byte, opt Options) *File {
	t.Helper()
	f, err := ReadAll(bytes.NewReader(input), opt)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return f
}

func wantIssue(t *testing.T, f *File, code string, sev Severity) *Issue {
	t.Helper()
	is := findIssue(f.Issues, code)
	if is == nil {
		t.Fatalf("no %s issue; issues:\n%s", code, dumpIssues(f.Issues))
	}
	if is.Severity != sev {
		t.Errorf("%s is %s, want %s", code, is.Severity, sev)
	}
	return is
}

func wantNoIssues(t *testing.T, f *File) {
	t.Helper()
	if len(f.Issues) > 0 {
		t.Errorf("unexpected issues:\n%s", dumpIssues(f.Issues))
	}
}

func stripRight(s string) string { return strings.TrimRight(s, " ") }
