package imports

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
)

// readAll opens a CSV or xlsx and returns header and rows; bug caught: a reader that loses a
// row, a cell or a character on the way.
func readAll(t *testing.T, format string, b []byte) (*table, [][]string) {
	t.Helper()
	tb, err := openTable(format, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer tb.Close()
	var rows [][]string
	for {
		r, _, err := tb.Next()
		if errors.Is(err, io.EOF) {
			return tb, rows
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		rows = append(rows, slices.Clone(r))
	}
}

func latin(t *testing.T, cm *charmap.Charmap, s string) []byte {
	t.Helper()
	b, err := cm.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenCSV_EncodingsAndDelimiters reads the same contacts in every encoding and delimiter.
// Bugs caught: Windows-1252 read as UTF-8 ("M\ufffdller"), the euro sign of ISO-8859-15 read as
// "¤", a BOM left in the first header, a comma inside quotes taken as the delimiter.
func TestOpenCSV_EncodingsAndDelimiters(t *testing.T) {
	text := func(d string) string {
		return strings.Join([]string{"Vorname" + d + "Nachname" + d + "Ort", `"Jürgen"` + d + `"Müller, Sohn"` + d + "Köln €",
			"Anna" + d + "Groß" + d + "Straße"}, "\r\n") + "\r\n"
	}
	for _, d := range []string{";", ",", "\t", "|"} {
		for _, tc := range []struct {
			name, enc string
			bytes     func(string) []byte
		}{
			{"utf-8", EncodingUTF8, func(s string) []byte { return []byte(s) }},
			{"bom", EncodingUTF8, func(s string) []byte { return append([]byte{0xEF, 0xBB, 0xBF}, s...) }},
			{"windows-1252", EncodingWindows, func(s string) []byte { return latin(t, charmap.Windows1252, s) }},
			{"iso-8859-15", EncodingLatin9, func(s string) []byte { return latin(t, charmap.ISO8859_15, s) }},
		} {
			tb, rows := readAll(t, FormatCSV, tc.bytes(text(d)))
			if tb.Encoding != tc.enc || tb.Delimiter != d {
				t.Errorf("%s %q: encoding %s delimiter %q", tc.name, d, tb.Encoding, tb.Delimiter)
			}
			want := [][]string{{"Jürgen", "Müller, Sohn", "Köln €"}, {"Anna", "Groß", "Straße"}}
			if !slices.Equal(tb.Header, []string{"Vorname", "Nachname", "Ort"}) || len(rows) != 2 ||
				!slices.Equal(rows[0], want[0]) || !slices.Equal(rows[1], want[1]) {
				t.Errorf("%s %q: header %q rows %q", tc.name, d, tb.Header, rows)
			}
		}
	}
}

// TestOpenCSV_MixedEncodings: a file pasted together from a UTF-8 and a Windows-1252 export
// reads right in both halves. Bug caught: the second half as mojibake or U+FFFD.
func TestOpenCSV_MixedEncodings(t *testing.T) {
	b := append([]byte("Vorname;Nachname\nJürgen;Müller\n"), latin(t, charmap.Windows1252, "Björn;Weiß\n")...)
	tb, rows := readAll(t, FormatCSV, b)
	if tb.Encoding != EncodingMixed || rows[0][1] != "Müller" || rows[1][0] != "Björn" || rows[1][1] != "Weiß" {
		t.Errorf("encoding %s rows %q", tb.Encoding, rows)
	}
}

// TestSniff refuses what is not CSV or xlsx by content. Bug caught: a PDF renamed .csv read as
// text, a .xls taken for a workbook.
func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		head string
		want string
	}{
		{"%PDF-1.7\n", ""}, {"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1rest", ""}, {"PK\x03\x04", FormatXLSX},
		{"a;b\n1;2\n", FormatCSV}, {"\x00\x01\x02", ""}, {"\xFF\xFEa\x00", ""},
	} {
		got, err := sniff([]byte(tc.head))
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("sniff(%q) = %q, %v", tc.head, got, err)
		}
	}
}

// TestSniffDelimiter decides by consistency over the first lines. Bug caught: a header with
// more commas than semicolons in one cell picked as comma-separated.
func TestSniffDelimiter(t *testing.T) {
	for _, tc := range []struct {
		text string
		want rune
	}{
		{"a,b;c;d\n1;2;3\n4;5;6\n", ';'},
		{"\"x;y\",b,c\n1,2,3\n", ','},
		{"a\tb\tc\n1\t2\t3\n", '\t'},
		{"a|b\n1|2\n", '|'},
		{"sep=,\na;b,c\n", ','},
		{"name\nx\n", ';'},
	} {
		if got, _ := sniffDelimiter([]byte(tc.text)); got != tc.want {
			t.Errorf("sniffDelimiter(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestOpenXLSX_CachedValuesOnly: a formula cell reads as its cached value (none here: empty),
// never evaluated; a text cell "=1+1" stays that text. Bug caught: formulas evaluated (a
// workbook computing on the server) or leading "=" dropped.
func TestOpenXLSX_CachedValuesOnly(t *testing.T) {
	f := excelize.NewFile()
	_ = f.SetSheetRow("Sheet1", "A1", &[]any{"Vorname", "Nachname", "Notiz"})
	_ = f.SetSheetRow("Sheet1", "A2", &[]any{"Ada", "=1+1", ""})
	_ = f.SetCellFormula("Sheet1", "C2", "SUM(1,2)")
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	tb, rows := readAll(t, FormatXLSX, buf.Bytes())
	if tb.Format != FormatXLSX || len(rows) != 1 || rows[0][1] != "=1+1" || (len(rows[0]) > 2 && rows[0][2] == "3") {
		t.Errorf("rows %q", rows)
	}
}

// TestOpenXLSX_NotAWorkbook: a ZIP without workbook parts is unreadable with a clear message.
func TestOpenXLSX_NotAWorkbook(t *testing.T) {
	var buf bytes.Buffer
	w := newZip(&buf)
	_ = w.Close()
	if _, err := openTable(FormatXLSX, &buf); !errors.Is(err, errUnreadable) {
		t.Errorf("err %v", err)
	}
}

// TestSuggest maps German and English headers. Bug caught: "E-Mail-Adresse" or "PLZ" not
// recognised, "Name" of a business import taken as a person's last name.
func TestSuggest(t *testing.T) {
	got := Suggest([]string{"Vorname", "Nachname", "E-Mail-Adresse", "PLZ", "Ort", "Straße", "Geburtsdatum", "IBAN", "Handy", "Anrede", "Titel", "Sonstiges"}, "private")
	want := map[string]string{"Vorname": "firstName", "Nachname": "lastName", "E-Mail-Adresse": "email", "PLZ": "address.zipCode",
		"Ort": "address.city", "Straße": "address.street", "Geburtsdatum": "personal.dateOfBirth", "IBAN": "bank.iban",
		"Handy": "mobile", "Anrede": "personal.salutation", "Titel": "personal.title"}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q want %q", k, got[k], v)
		}
	}
	en := Suggest([]string{"First name", "Last name", "Email", "Zip", "City", "Street", "Birthdate", "Phone"}, "private")
	if len(en) != 8 || en["Zip"] != "address.zipCode" || en["Birthdate"] != "personal.dateOfBirth" {
		t.Errorf("english: %v", en)
	}
	biz := Suggest([]string{"Firma", "Name", "Rechtsform"}, "business")
	if biz["Firma"] != "business.companyName" || biz["Rechtsform"] != "business.legalForm" || biz["Name"] != "" {
		t.Errorf("business: %v", biz)
	}
}

// TestConvert reads spreadsheet values. Bug caught: 31.12.1980 refused as a date, "1.234,50"
// read as 1.234.
func TestConvert(t *testing.T) {
	now := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{"31.12.1980": "1980-12-31", "1.2.2001": "2001-02-01", "1980-12-31": "1980-12-31",
		"12-31-80": "1980-12-31", "29221": "1980-01-01"} {
		if got, ok := parseDate(in, now); !ok || got != want {
			t.Errorf("parseDate(%q) = %q %v", in, got, ok)
		}
	}
	if _, ok := parseDate("31.02.1980", now); ok {
		t.Error("31.02. accepted")
	}
	for in, want := range map[string]string{"1.234,50": "1234.50", "1234,5": "1234.5", "1234.50": "1234.50", "2.500 €": "2500"} {
		if got := germanDecimal(in); got != want {
			t.Errorf("germanDecimal(%q) = %q", in, got)
		}
	}
}

func newZip(w io.Writer) *zip.Writer {
	zw := zip.NewWriter(w)
	_, _ = zw.Create("hello.txt")
	return zw
}

// TestOpenXLSX_Dates: a date cell reads as excelize renders its number format (Excel's default
// 14 as 12-31-80, a German custom format as 31.12.1980), and both convert to the same date.
// Bug caught: a birth date of a workbook refused as "must be a date".
func TestOpenXLSX_Dates(t *testing.T) {
	f := excelize.NewFile()
	day := time.Date(1980, 12, 31, 0, 0, 0, 0, time.UTC)
	_ = f.SetSheetRow("Sheet1", "A1", &[]any{"Geburtsdatum", "Geb. am"})
	_ = f.SetCellValue("Sheet1", "A2", day)
	_ = f.SetCellValue("Sheet1", "B2", day)
	german := "dd.mm.yyyy"
	st, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &german})
	_ = f.SetCellStyle("Sheet1", "B2", "B2", st)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	_, rows := readAll(t, FormatXLSX, buf.Bytes())
	now := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	for _, c := range rows[0] {
		if got, ok := parseDate(c, now); !ok || got != "1980-12-31" {
			t.Errorf("%q read as %q %v", c, got, ok)
		}
	}
}
