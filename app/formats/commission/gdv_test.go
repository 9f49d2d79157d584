package commission

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"golang.org/x/text/encoding/charmap"
)

// gdvRec builds a record of layout key (part 1) from technical field names, right-aligned
// zero-filled numbers and amounts, left-aligned text; "SatzNr" defaults to 1 where the part
// has one.
func gdvRec(t testing.TB, key string, vals map[string]string) string {
	t.Helper()
	l := gdv.LayoutFor(key)
	td := l.TD(1)
	if nr, ok := vals["_part"]; ok {
		td = l.TD(int(nr[0] - '0'))
	}
	b := []rune(strings.Repeat(" ", 256))
	copy(b, []rune(l.Satzart))
	if td.NrPos > 0 {
		b[td.NrPos-1] = rune('0' + td.Nr)
	}
	for tech, v := range vals {
		if tech == "_part" {
			continue
		}
		f := td.Field(tech)
		if f == nil {
			t.Fatalf("%s has no field %s", key, tech)
		}
		r := []rune(v)
		if len(r) > f.Len {
			t.Fatalf("%s: %q longer than %d", tech, v, f.Len)
		}
		if f.Type == gdv.Amount || f.Type == gdv.Numeric {
			r = []rune(strings.Repeat("0", f.Len-len(r)) + v)
		}
		copy(b[f.Pos-1:], r)
	}
	return string(b)
}

// inkasso is an 0400 part 1 with the fields a statement needs.
func inkasso(t testing.TB, vsnr, soll, booked string, cents int64) string {
	sign := "+"
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return gdvRec(t, "0400", map[string]string{"VuNr": "9001", "VsNr": vsnr, "Sollstellungsart": soll,
		"Buchungsdatum": booked, "GesProvisionsbetragInWE": fmt.Sprint(cents), "Vorzeichen5": sign, "Waehrungsschluessel": "EUR"})
}

func vorsatz(t testing.TB) string {
	return gdvRec(t, "0001", map[string]string{"VuNr": "9001", "Absender": "Muster Versicherung AG",
		"ErstellungsDatumZeitraumVomZeitraumBis": "0101202531012025"})
}

// TestGDV_Statement: Vorsatz (insurer, period), 0400 of each kind with exact amounts and signs,
// part 2, 0410 (not counted twice), 0430 texts on the entry before, 0200 and 9999 skipped
// silently, bad records as issues. CRLF line ends, ISO-8859-15 text.
func TestGDV_Statement(t *testing.T) {
	lines := []string{
		vorsatz(t),
		gdvRec(t, "0200", map[string]string{"VuNr": "9001", "VsNr": "LV-1"}),
		inkasso(t, "LV-1", "40", "15012025", 123456),
		gdvRec(t, "0400", map[string]string{"_part": "2", "VuNr": "9001", "VsNr": "LV-1", "NameVerssnehmer": "Müller"}),
		gdvRec(t, "0410", map[string]string{"VuNr": "9001", "VsNr": "LV-1", "TeilspartenProvBetrag1InWE": "123456", "Vorzeichen4": "+"}),
		gdvRec(t, "0430", map[string]string{"VuNr": "9001", "VsNr": "LV-1", "Textart1": "1", "Text1": "Abschlussprovision Jänner", "Text2": "2. Rate"}),
		inkasso(t, "0000LV-2", "41", "20012025", -41250),
		inkasso(t, "KV 3", "90", "21012025", 1),
		inkasso(t, "KV 4", "02", "22012025", 999),                               // premium posting with commission
		inkasso(t, "KV 5", "01", "22012025", 0),                                 // premium posting without: no entry
		inkasso(t, "KV 6", "40", "31022025", 100),                               // bad date
		inkasso(t, "KV 7", "41", "23012025", 500),                               // Storno with +: warning, as written
		strings.Replace(inkasso(t, "KV 8", "40", "23012025", 100), "+", "x", 1), // bad sign
		"Kein GDV-Satz",
		gdvRec(t, "9999", map[string]string{}),
	}
	in, _ := charmap.ISO8859_15.NewEncoder().Bytes([]byte(strings.Join(lines, "\r\n") + "\r\n"))
	es, sum, err := readAll(t, FormatGDV, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"3|LV-1|commission|40|1234.56|2025-01-15",
		"7|0000LV-2|cancellation|41|-412.50|2025-01-20",
		"8|KV 3|correction|90|0.01|2025-01-21",
		"9|KV 4|premium|02|9.99|2025-01-22",
		"12|KV 7|cancellation|41|5.00|2025-01-23",
	}, "\n")
	if got := briefs(es); got != want {
		t.Errorf("entries\n%s\nwant\n%s", got, want)
	}
	if got := total(es).String(); got != "837.06" {
		t.Errorf("total %s", got)
	}
	if es[0].Description != "Provision: Abschlussprovision Jänner 2. Rate" || es[0].VUNumber != "9001" {
		t.Errorf("first entry %+v", es[0])
	}
	if got, want := issueList(sum.Issues), "11:error:date_invalid 12:warning:sign_unexpected 13:error:amount_invalid 14:error:record_invalid"; got != want {
		t.Errorf("issues %s, want %s", got, want)
	}
	if sum.VUNumber != "9001" || sum.PeriodFrom == nil || sum.PeriodFrom.Format(time.DateOnly) != "2025-01-01" || sum.PeriodTo.Format(time.DateOnly) != "2025-01-31" {
		t.Errorf("summary %+v", sum)
	}
}

// TestGDV_Framing: records without line ends (every 256 characters), LF and CR line ends,
// trailing blanks stripped, UTF-8 re-encoded files: the same entries each time.
func TestGDV_Framing(t *testing.T) {
	recs := []string{vorsatz(t), inkasso(t, "Ä-1", "40", "15012025", 100), inkasso(t, "B-2", "41", "16012025", -200)}
	utf, _ := io.ReadAll(strings.NewReader(strings.Join(recs, "\n")))
	latin, _ := charmap.ISO8859_15.NewEncoder().Bytes([]byte(strings.Join(recs, "")))
	cr, _ := charmap.ISO8859_15.NewEncoder().Bytes([]byte(strings.Join(recs, "\r")))
	var stripped []string
	for _, r := range recs {
		stripped = append(stripped, strings.TrimRight(r, " "))
	}
	short, _ := charmap.ISO8859_15.NewEncoder().Bytes([]byte(strings.Join(stripped, "\n")))
	for name, in := range map[string][]byte{"utf8 lf": utf, "latin9 none": latin, "latin9 cr": cr, "stripped": short} {
		es, sum, err := readAll(t, FormatGDV, in, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := briefs(es); got != "2|Ä-1|commission|40|1.00|2025-01-15\n3|B-2|cancellation|41|-2.00|2025-01-16" {
			t.Errorf("%s: %s (issues %s)", name, got, issueList(sum.Issues))
		}
	}
}

// TestGDV_Unreadable: not GDV at all is ErrUnreadable; a GDV file without 0400 is read with
// a warning (a portfolio file uploaded as a statement).
func TestGDV_Unreadable(t *testing.T) {
	csvIn, _ := os.ReadFile("testdata/statement.csv")
	for name, in := range map[string][]byte{"empty": nil, "blank": []byte("\n\n  \n"), "csv": csvIn,
		"xml": []byte(`<?xml version="1.0"?><x/>`), "binary": {0, 1, 2, 3, 0xff}} {
		if _, _, err := readAll(t, FormatGDV, in, Options{}); !errors.Is(err, ErrUnreadable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	in := []byte(vorsatz(t) + "\n" + gdvRec(t, "0200", map[string]string{"VuNr": "9001", "VsNr": "1"}) + "\n")
	es, sum, err := readAll(t, FormatGDV, in, Options{})
	if err != nil || len(es) != 0 || issueList(sum.Issues) != "0:warning:no_commission_records" {
		t.Errorf("portfolio file: %v %v %s", err, es, issueList(sum.Issues))
	}
}

// gdvStatement is a generated 0400 file of n entries (alternating commission and Storno),
// produced as it is read: the test holds neither the file nor the entries.
type gdvStatement struct {
	t    testing.TB
	n, i int
	buf  []byte
}

func (g *gdvStatement) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i <= g.n {
		if g.i == 0 {
			g.buf = append(g.buf, vorsatz(g.t)+"\r\n"...)
		} else {
			cents := int64(g.i%100000 + 1)
			soll := "40"
			if g.i%2 == 0 {
				soll, cents = "41", -cents
			}
			g.buf = append(g.buf, inkasso(g.t, fmt.Sprintf("VS%09d", g.i), soll, "15012025", cents)+"\r\n"...)
		}
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// TestGDV_Large reads 50,000 generated entries: the sum to the cent and a bounded heap (the
// reader must not hold the file or the entries). Reports entries/s.
func TestGDV_Large(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 50,000-entry file is left out")
	}
	const n = 50000
	var sum schematype.Money
	var peak uint64
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	start := time.Now()
	count := 0
	s, err := Read(FormatGDV, &gdvStatement{t: t, n: n}, Options{}, func(e Entry) error {
		sum = sum.Add(e.Amount)
		count++
		if count%5000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	elapsed := time.Since(start)
	if err != nil || s.Entries != n || count != n || len(s.Issues) != 0 {
		t.Fatalf("err %v entries %d/%d issues %s", err, s.Entries, count, issueList(s.Issues))
	}
	// Σ over i of ±(i%100000+1) cents: odd i add, even i subtract: -(n/2) cents for n even.
	if sum.String() != "-250.00" {
		t.Errorf("sum %s", sum)
	}
	grown := int64(peak) - int64(base)
	t.Logf("%d entries in %v: %.0f entries/s; heap above start at most %d KB", n, elapsed, n/elapsed.Seconds(), grown/1024)
	if grown > 16<<20 {
		t.Errorf("heap grew by %d MB reading a streamed file", grown>>20)
	}
}

// BenchmarkGDV reads a 50,000-entry file from memory.
func BenchmarkGDV(b *testing.B) {
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, &gdvStatement{t: b, n: 50000})
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for range b.N {
		if _, err := Read(FormatGDV, bytes.NewReader(buf.Bytes()), Options{}, func(Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(50000*b.N)/b.Elapsed().Seconds(), "entries/s")
}
