package commission

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// TestCSV_Statement reads the sample with suggested columns: exact amounts and their sum,
// signs, dates, types from the type column and by sign, and the issues of the bad rows
// (a reader that stopped at a bad row, swallowed it silently or rounded would fail here).
func TestCSV_Statement(t *testing.T) {
	in, err := os.ReadFile("testdata/statement.csv")
	if err != nil {
		t.Fatal(err)
	}
	es, sum, err := readAll(t, FormatCSV, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"2|12-345/67|commission|Abschlussprovision|1234.56|2025-01-31",
		"3|0012 34567|cancellation|Storno|-412.50|2025-02-15",
		"7|KV-3|correction|Korrektur|0.01|2025-03-03",
		"8|KV-4|cancellation||-7.50|2025-03-04",
		"10|KV-5|commission|Bonus|100.00|2025-03-05",
	}, "\n")
	if got := briefs(es); got != want {
		t.Errorf("entries:\n%s\nwant:\n%s", got, want)
	}
	if got := total(es).String(); got != "914.57" {
		t.Errorf("total %s, want 914.57", got)
	}
	if es[0].VUNumber != "9001" || es[0].Description != "AP Leben" {
		t.Errorf("vu/description: %+v", es[0])
	}
	if got, want := issueList(sum.Issues), "1:warning:mapping_suggested 4:error:policy_number_missing 5:error:date_invalid 6:error:amount_invalid 10:warning:type_unknown"; got != want {
		t.Errorf("issues %s, want %s", got, want)
	}
	if !strings.Contains(sum.Issues[0].Message, `policyNumber from "Vertragsnummer"`) || !strings.Contains(sum.Issues[0].Message, `amount from "Provision"`) {
		t.Errorf("suggestion message: %s", sum.Issues[0].Message)
	}
	if sum.Entries != 5 || PolicyKey(es[0].PolicyNumber) != PolicyKey(es[1].PolicyNumber) {
		t.Errorf("entries %d; keys %q %q", sum.Entries, PolicyKey(es[0].PolicyNumber), PolicyKey(es[1].PolicyNumber))
	}
}

// TestCSV_Mapping: a mapping names the columns (headers no synonym knows), Windows-1252
// umlauts decode, tab separation is detected, a quoted amount with the separator inside reads.
// Catches: mapping ignored, bytes 0xFC passed through as invalid UTF-8, comma fixed to ';'.
func TestCSV_Mapping(t *testing.T) {
	text := "Police\tWert\tTag\tNotiz\n\"A 1\"\t\"1.000,00\"\t01.04.2025\tPrämie für März\n"
	in, _ := charmap.Windows1252.NewEncoder().Bytes([]byte(text))
	es, sum, err := readAll(t, FormatCSV, in, Options{Mapping: map[string]string{
		"policyNumber": "police", "amount": "Wert", "bookedOn": "Tag", "description": "Notiz"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || brief(es[0]) != "2|A 1|commission||1000.00|2025-04-01" || es[0].Description != "Prämie für März" {
		t.Fatalf("entries %v", es)
	}
	if len(sum.Issues) != 0 {
		t.Errorf("issues %v", sum.Issues)
	}
}

// TestCSV_SepLineAndComma: Excel's "sep=," line names the separator and is skipped; line
// numbers still count it; decimal-point amounts ("-12.50") read; a trailing minus reads.
func TestCSV_SepLineAndComma(t *testing.T) {
	in := "\xef\xbb\xbfsep=,\r\nVSNR,Betrag,Datum\r\nX1,-12.50,2025-01-02\r\nX2,\"3,00-\",02.01.25\r\n"
	es, _, err := readAll(t, FormatCSV, []byte(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "3|X1|cancellation||-12.50|2025-01-02\n4|X2|cancellation||-3.00|2025-01-02"
	if got := briefs(es); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestCSV_Unreadable: files no row could be read from fail with ErrUnreadable (not a
// statement with zero entries), bad mappings included.
func TestCSV_Unreadable(t *testing.T) {
	for name, c := range map[string]struct {
		in  string
		opt Options
	}{
		"empty":            {"", Options{}},
		"no amount column": {"Vertragsnummer;Datum\nA;01.01.2025\n", Options{}},
		"mapped missing":   {"Vertragsnummer;Betrag;Datum\n", Options{Mapping: map[string]string{"amount": "Summe"}}},
		"unknown field":    {"Vertragsnummer;Betrag;Datum\n", Options{Mapping: map[string]string{"premium": "Betrag"}}},
		"column twice":     {"a;b;c\n", Options{Mapping: map[string]string{"policyNumber": "a", "amount": "a", "bookedOn": "c"}}},
		"required unset":   {"Vertragsnummer;Betrag;Datum\n", Options{Mapping: map[string]string{"amount": ""}}},
		"binary":           {"\x00\x01\x02PK\x03\x04", Options{}},
		"long record":      {"Vertragsnummer;Betrag;Datum\n\"" + strings.Repeat("x", 2<<20), Options{}},
	} {
		_, _, err := readAll(t, FormatCSV, []byte(c.in), c.opt)
		if !errors.Is(err, ErrUnreadable) {
			t.Errorf("%s: err %v, want ErrUnreadable", name, err)
		}
	}
}

// TestCSV_Amounts pins the amount rule; a float parse would turn 0.1+0.2 sums into noise and
// "1.234" into 1.23.
func TestCSV_Amounts(t *testing.T) {
	for in, want := range map[string]string{
		"1.234,56": "1234.56", "-12,50": "-12.50", "12,50-": "-12.50", "1234,5": "1234.50",
		"411": "411.00", "1.234": "1234.00", "12.5": "12.50", "€ 1.000.000,01": "1000000.01",
		"+3,00": "3.00", "0,00 EUR": "0.00", "-0,01": "-0.01",
	} {
		m, ok := parseAmount(in)
		if !ok || m.String() != want {
			t.Errorf("parseAmount(%q) = %s %v, want %s", in, m, ok, want)
		}
	}
	for _, in := range []string{"", "-", "abc", "1,234", "12,345", "1.23.4", "1.2345,00", "12,5,0", "1e3", "--1", "12.345.6", "1234567890123"} {
		if m, ok := parseAmount(in); ok {
			t.Errorf("parseAmount(%q) = %s, want refused", in, m)
		}
	}
}

// TestCSV_Dates pins the date rule: 31.02. must not roll over into March.
func TestCSV_Dates(t *testing.T) {
	for in, want := range map[string]string{"31.12.2024": "2024-12-31", "1.2.2024": "2024-02-01", "29.02.2024": "2024-02-29", "2025-03-04": "2025-03-04", "01.02.25": "2025-02-01"} {
		d, ok := parseDate(in)
		if !ok || d.Format("2006-01-02") != want {
			t.Errorf("parseDate(%q) = %v %v", in, d, ok)
		}
	}
	for _, in := range []string{"", "31.02.2025", "00.01.2025", "2025/01/01", "1.1.1", "32.1.2025", "aa.bb.cccc", "29.02.2025"} {
		if d, ok := parseDate(in); ok {
			t.Errorf("parseDate(%q) = %v, want refused", in, d)
		}
	}
}

// TestCSV_CallbackError: an error of the callback stops the read and comes back unchanged
// (the service's database error must not be turned into an issue).
func TestCSV_CallbackError(t *testing.T) {
	in, _ := os.ReadFile("testdata/statement.csv")
	stop := errors.New("stop")
	n := 0
	_, err := Read(FormatCSV, strings.NewReader(string(in)), Options{}, func(Entry) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err %v after %d entries", err, n)
	}
}

// TestCSV_MaxIssues: issues beyond the bound are counted in one last issue, not kept.
func TestCSV_MaxIssues(t *testing.T) {
	var b strings.Builder
	b.WriteString("VSNR;Betrag;Datum\n")
	for range 50 {
		b.WriteString("A;x;01.01.2025\n")
	}
	_, sum, err := readAll(t, FormatCSV, []byte(b.String()), Options{MaxIssues: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Issues) != 11 || sum.Issues[10].Code != "issues_suppressed" || !strings.Contains(sum.Issues[10].Message, "41") {
		t.Errorf("issues %s", issueList(sum.Issues))
	}
}
