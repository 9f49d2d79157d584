package gdv

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// generated writes a generated file for a test.
func generated(t *testing.T, opt GenerateOptions) ([]byte, GenerateStats) {
	t.Helper()
	var b bytes.Buffer
	st, err := Generate(&b, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), st
}

// TestReader_Formats reads the same generated portfolio in every physical form real files
// take: the contracts, names and Nachsatz verdict must not change.
func TestReader_Formats(t *testing.T) {
	t.Parallel()
	base := GenerateOptions{Contracts: 24, Packages: 2, Seed: 7}
	ref := read(t, mustGenerate(t, base), Options{})
	cases := []struct {
		name       string
		opt        GenerateOptions
		prefix     []byte
		read       Options
		encoding   string
		lineEnding string
		short      bool
	}{
		{name: "ISO-8859-15, LF", opt: base, encoding: EncodingLatin9, lineEnding: "lf"},
		{name: "CRLF", opt: with(base, func(o *GenerateOptions) { o.LineEnding = "crlf" }), encoding: EncodingLatin9, lineEnding: "crlf"},
		{name: "no separator", opt: with(base, func(o *GenerateOptions) { o.LineEnding = "none" }), encoding: EncodingLatin9, lineEnding: "none"},
		{name: "short lines (trailing blanks stripped)", opt: with(base, func(o *GenerateOptions) { o.StripTrailingBlanks = true }), encoding: EncodingLatin9, lineEnding: "lf", short: true},
		{name: "short lines with CRLF", opt: with(base, func(o *GenerateOptions) { o.StripTrailingBlanks, o.LineEnding = true, "crlf" }), encoding: EncodingLatin9, lineEnding: "crlf", short: true},
		{name: "CP850 detected", opt: with(base, func(o *GenerateOptions) { o.Encoding = EncodingCP850 }), encoding: EncodingCP850, lineEnding: "lf"},
		{name: "CP850 chosen by parameter", opt: with(base, func(o *GenerateOptions) { o.Encoding = EncodingCP850 }), read: Options{Encoding: "IBM850"}, encoding: EncodingCP850, lineEnding: "lf"},
		{name: "CP850 without separator", opt: with(base, func(o *GenerateOptions) { o.Encoding, o.LineEnding = EncodingCP850, "none" }), encoding: EncodingCP850, lineEnding: "none"},
		{name: "UTF-8 recognised, sliced by character", opt: with(base, func(o *GenerateOptions) { o.Encoding = EncodingUTF8 }), encoding: EncodingUTF8, lineEnding: "lf"},
		{name: "UTF-8 without separator", opt: with(base, func(o *GenerateOptions) { o.Encoding, o.LineEnding = EncodingUTF8, "none" }), encoding: EncodingUTF8, lineEnding: "none"},
		{name: "UTF-8 short lines, CRLF", opt: with(base, func(o *GenerateOptions) { o.Encoding, o.LineEnding, o.StripTrailingBlanks = EncodingUTF8, "crlf", true }), encoding: EncodingUTF8, lineEnding: "crlf", short: true},
		{name: "UTF-8 with byte order mark", opt: with(base, func(o *GenerateOptions) { o.Encoding = EncodingUTF8 }), prefix: []byte{0xEF, 0xBB, 0xBF}, encoding: EncodingUTF8, lineEnding: "lf"},
		{name: "ISO-8859-1", opt: with(base, func(o *GenerateOptions) { o.Encoding = EncodingLatin1 }), encoding: EncodingLatin9, lineEnding: "lf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append(slices.Clone(tc.prefix), mustGenerate(t, tc.opt)...)
			f := read(t, in, tc.read)
			wantNoIssues(t, f)
			if f.Summary.Encoding != tc.encoding || f.Summary.LineEnding != tc.lineEnding || (f.Summary.ShortRecords > 0) != tc.short {
				t.Errorf("encoding %s, line ending %s, short %d; want %s, %s, short %v",
					f.Summary.Encoding, f.Summary.LineEnding, f.Summary.ShortRecords, tc.encoding, tc.lineEnding, tc.short)
			}
			if len(f.Contracts) != len(ref.Contracts) || len(f.Packages) != 2 {
				t.Fatalf("contracts %d packages %d, want %d, 2", len(f.Contracts), len(f.Packages), len(ref.Contracts))
			}
			for _, p := range f.Packages {
				if p.Check.Status != CheckConsistent {
					t.Errorf("package %d check %+v", p.Number, p.Check)
				}
			}
			for i, c := range f.Contracts {
				want := ref.Contracts[i]
				gp, wp := c.Persons[0], want.Persons[0]
				if c.PolicyNumber != want.PolicyNumber || c.Premium.String() != want.Premium.String() ||
					gp.LastName != wp.LastName || gp.FirstName != wp.FirstName || gp.City != wp.City || gp.Street != wp.Street ||
					len(gp.BankAccounts) != 1 || gp.BankAccounts[0].IBAN != wp.BankAccounts[0].IBAN {
					t.Errorf("contract %d = %s %s %s %s/%s, want %s %s %s %s/%s", i, c.PolicyNumber, c.Premium, gp.LastName,
						gp.FirstName, gp.City, want.PolicyNumber, want.Premium, wp.LastName, wp.FirstName, wp.City)
				}
			}
		})
	}
	// the reference itself has the umlauts the other forms are compared with
	umlauts := 0
	for _, c := range ref.Contracts {
		if strings.ContainsAny(c.Persons[0].LastName+c.Persons[0].FirstName+c.Persons[0].City, "äöüÄÖÜßë") {
			umlauts++
		}
	}
	if umlauts < len(ref.Contracts)/2 {
		t.Errorf("only %d of %d reference contracts have umlauts", umlauts, len(ref.Contracts))
	}
}

func mustGenerate(t *testing.T, opt GenerateOptions) []byte {
	b, _ := generated(t, opt)
	return b
}

func with(o GenerateOptions, f func(*GenerateOptions)) GenerateOptions {
	f(&o)
	return o
}

// TestReader_Traps holds the reader to each trap found in real files, one file per trap.
func TestReader_Traps(t *testing.T) {
	t.Parallel()
	contract := func(vsnr string) []any {
		return []any{person("1234", vsnr, "Müller", "Jürgen", Date{1970, 3, 4}.ddmmyyyy(), "01"), contract0200("1234", vsnr, "030", "100.00")}
	}
	cases := []struct {
		name  string
		in    []byte
		opt   Options
		check func(t *testing.T, f *File)
	}{
		{
			name: "truncated Nachsatz (24 characters) is a warning",
			in: func() []byte {
				ls := lines(pkg("1234", contract("A1")...))
				ls[len(ls)-1] = ls[len(ls)-1][:24]
				return latin9(ls...)
			}(),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "trailer_truncated", Warning)
				p := f.Packages[0]
				if p.Check.Status != CheckTruncated || !p.Trailer.Truncated || *p.Trailer.RecordCount != 2 || p.Trailer.TotalPremium != nil {
					t.Errorf("check %+v trailer %+v", p.Check, p.Trailer)
				}
				if len(f.Contracts) != 1 {
					t.Errorf("contracts %d", len(f.Contracts))
				}
			},
		},
		{
			name: "missing Nachsatz is a warning, the data is read",
			in:   latin9(lines(hdr("1234"), contract("A1"))...),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "trailer_missing", Warning)
				if f.Packages[0].Check.Status != CheckMissing || f.Packages[0].Trailer != nil || len(f.Contracts) != 1 || is.Package != 1 {
					t.Errorf("package %+v contracts %d", f.Packages[0], len(f.Contracts))
				}
			},
		},
		{
			name: "Nachsatz count and Gesamtbeitrag wrong are warnings",
			in:   latin9(lines(hdr("1234"), contract("A1"), trailer(7, "99.99"))...),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "trailer_count_mismatch", Warning)
				wantIssue(t, f, "trailer_premium_mismatch", Warning)
				if f.Packages[0].Check.Status != CheckInconsistent || f.Summary.Errors != 0 {
					t.Errorf("check %+v", f.Packages[0].Check)
				}
			},
		},
		{
			name: "unknown Satzart 0800 is skipped with a warning and still counted",
			in:   latin9(lines(pkg("1234", append(contract("A1"), rb("0210.030", 1).key("1234", "030", "A1"), strings.Replace(rb("0210.030", 1).key("1234", "030", "A1").String(), "0210", "0800", 1))...))...),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "unknown_satzart", Warning)
				if is.Line != 5 || is.Satzart != "0800" || !strings.HasPrefix(is.Raw, "08001234") {
					t.Errorf("issue %+v", is)
				}
				if f.Packages[0].Check.Status != CheckConsistent || len(f.Contracts[0].Details) != 2 {
					t.Errorf("check %+v details %d", f.Packages[0].Check, len(f.Contracts[0].Details))
				}
			},
		},
		{
			name: "two packages of two insurers; Vorsatz VU differs from record VU",
			in:   latin9(append(lines(pkg("9999", contract("A1")...)), lines(pkg("5555", rb("0200", 1).key("7777", "040", "B1").set("GesbeitragNettoInWE", NewDecimal(5000, 2))))...)...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				if len(f.Packages) != 2 || f.Packages[0].VUNumber != "9999" || f.Packages[1].VUNumber != "5555" {
					t.Fatalf("packages %+v", f.Packages)
				}
				if f.Contracts[0].VUNumber != "1234" || f.Contracts[0].Package != 1 || f.Contracts[1].VUNumber != "7777" || f.Contracts[1].Package != 2 {
					t.Errorf("contracts %s/%d %s/%d", f.Contracts[0].VUNumber, f.Contracts[0].Package, f.Contracts[1].VUNumber, f.Contracts[1].Package)
				}
				if !slices.Equal(f.Packages[0].Insurers, []string{"1234"}) || !slices.Equal(f.Summary.Insurers, []string{"1234", "7777"}) {
					t.Errorf("insurers %v %v", f.Packages[0].Insurers, f.Summary.Insurers)
				}
			},
		},
		{
			name: "parts interleaved: 0200 part 2 after the line-specific records, 0220.030 parts around 0221",
			in: latin9(lines(pkg("1234",
				person("1234", "A1", "Weiß", "Anna", "01021980", "01"),
				contract0200("1234", "A1", "030", "10.00"),
				rb("0220.030", 1).key("1234", "030", "A1").set("LfdNrVersichertenPersonVpPersonengruppe", "1").set("NameVp", "Weiß"),
				rb("0221.030", 2).key("1234", "030", "A1").set("LfdNrVersichertenPersonVpPersonengruppe", "1"),
				rb("0220.030", 2).key("1234", "030", "A1").set("LfdNrVersichertenPersonVpPersonengruppe", "1"),
				rb("0221.030", 3).key("1234", "030", "A1"),
				rb("0220.030", 3).key("1234", "030", "A1").set("VpPersonenNrVersicherers", "VP-7"),
				rb("0200", 2).key("1234", "030", "A1").set("GesbeitragBruttoInWE", NewDecimal(1190, 2)),
			))...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				c := f.Contracts[0]
				if c.GrossPremium == nil || c.GrossPremium.String() != "11.90" {
					t.Errorf("gross premium %v: 0200 part 2 not joined", c.GrossPremium)
				}
				d := detailOf(t, c, "0220.030")
				if !slices.Equal(d.Parts, []int{1, 2, 3}) || d.Fields["VpPersonenNrVersicherers"] != "VP-7" || d.Fields["NameVp"] != "Weiß" {
					t.Errorf("0220.030 %+v", d)
				}
				if d := detailOf(t, c, "0221.030"); !slices.Equal(d.Parts, []int{2, 3}) {
					t.Errorf("0221.030 parts %v", d.Parts)
				}
			},
		},
		{
			name: "omitted parts: two addresses of parts 1, 2, 4",
			in: latin9(lines(pkg("1234",
				person("1234", "A1", "Schäfer", "Lena", "01021980", "01"),
				addr("1234", "A1", 2).set("PersonenKundenNrVersicherers", "K1"),
				addr("1234", "A1", 4).set("IBAN1", germanIBAN("100100100000000001")),
				person("1234", "A1", "Schäfer", "Max", "03042010", "09"),
				addr("1234", "A1", 2).set("PersonenKundenNrVersicherers", "K2"),
				addr("1234", "A1", 4).set("IBAN1", germanIBAN("100100100000000002")),
				contract0200("1234", "A1", "030", "10.00"),
			))...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				ps := f.Contracts[0].Persons
				if len(ps) != 2 || ps[0].CustomerNumber != "K1" || ps[1].CustomerNumber != "K2" ||
					ps[1].BankAccounts[0].IBAN != germanIBAN("100100100000000002") || !ps[1].Has(RoleInsuredPerson) {
					t.Errorf("persons %+v", ps)
				}
			},
		},
		{
			name: "interleaved parts of two risks joined by their running number",
			in: latin9(lines(pkg("1234",
				contract0200("1234", "A1", "040", "10.00"),
				rb("0220.040", 1).key("1234", "040", "A1").set("Wagnisart", "3001").set("OrdnungsNrWagniszusatz", "01").set("Wagnismenge", "1"),
				rb("0220.040", 1).key("1234", "040", "A1").set("Wagnisart", "3001").set("OrdnungsNrWagniszusatz", "02").set("Wagnismenge", "2"),
				rb("0220.040", 2).key("1234", "040", "A1").set("Wagnisart", "3001").set("OrdnungsNrWagnisTeil", "01").set("Wagnistext", "Hund"),
				rb("0220.040", 2).key("1234", "040", "A1").set("Wagnisart", "3001").set("OrdnungsNrWagnisTeil", "02").set("Wagnistext", "Pferd"),
			))...),
			check: func(t *testing.T, f *File) {
				var texts []string
				for _, d := range f.Contracts[0].Details {
					if d.Type == "0220.040" {
						texts = append(texts, d.Fields["Wagnismenge"].(string)+"/"+d.Fields["Wagnistext"].(string))
					}
				}
				if !slices.Equal(texts, []string{"000000000001/Hund", "000000000002/Pferd"}) {
					t.Errorf("risks %v", texts)
				}
			},
		},
		{
			name: "Vertragsstatus A kept, flagged, unmapped",
			in:   latin9(lines(pkg("1234", contract0200("1234", "A1", "030", "1.00").set("Vertragsstatus", "A")))...),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "unknown_code", Warning)
				c := f.Contracts[0]
				if is.Field != "Vertragsstatus" || c.Status != "" || c.StatusCode.Code != "A" {
					t.Errorf("issue %+v status %q code %+v", is, c.Status, c.StatusCode)
				}
			},
		},
		{
			name: "status mapping: cancelled, ended at expiry, dormant, paid-up",
			in: latin9(lines(pkg("1234",
				contract0200("1234", "S4", "030", "1.00").set("Vertragsstatus", "4").set("Abgangsgrund", "06"),
				contract0200("1234", "S22", "030", "1.00").set("Vertragsstatus", "4").set("Abgangsgrund", "22"),
				contract0200("1234", "S3", "030", "1.00").set("Vertragsstatus", "3"),
				contract0200("1234", "S6", "010", "1.00").set("Vertragsstatus", "6").set("Zahlungsweise", "9"),
			))...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				var got []string
				for _, c := range f.Contracts {
					got = append(got, c.Status)
				}
				if !slices.Equal(got, []string{StatusCancelled, StatusEnded, StatusSuspended, StatusActive}) {
					t.Errorf("statuses %v", got)
				}
				if a := f.Contracts[3].AnnualPremium; a == nil || !a.IsZero() || f.Contracts[3].PaymentFrequency != "" {
					t.Errorf("premium-free: annual %v frequency %q", a, f.Contracts[3].PaymentFrequency)
				}
			},
		},
		{
			name: "birth dates: 00000000 unknown, day or month 00 reduced, 31.02. invalid",
			in: latin9(lines(pkg("1234",
				person("1234", "A1", "Firma GmbH", "", "00000000", "01"),
				person("1234", "A1", "Tag", "Null", "00051980", "09"),
				person("1234", "A1", "Monat", "Null", "00001981", "09"),
				person("1234", "A1", "Falsch", "Datum", "31021980", "09"),
				contract0200("1234", "A1", "030", "1.00"),
			))...),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "invalid_date", Warning)
				if is.Field != "Geburtsdatum" || is.Line != 5 || is.Raw != "31021980" || len(f.Issues) != 1 {
					t.Errorf("issues:\n%s", dumpIssues(f.Issues))
				}
				var got []string
				for _, p := range f.Contracts[0].Persons {
					got = append(got, p.BirthDate.String())
				}
				if !slices.Equal(got, []string{"", "1980-05", "1981", ""}) {
					t.Errorf("birth dates %q", got)
				}
			},
		},
		{
			name: "data before any Vorsatz",
			in:   latin9(lines(contract("A1"), trailer(2, "100.00"))...),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "vorsatz_missing", Warning)
				if !f.Packages[0].HeaderMissing || len(f.Contracts) != 1 || f.Packages[0].Check.Status != CheckConsistent {
					t.Errorf("package %+v", f.Packages[0])
				}
			},
		},
		{
			name: "blank lines and a DOS end-of-file mark",
			in:   append(bytes.ReplaceAll(latin9(lines(pkg("1234", contract("A1")...))...), []byte("\n"), []byte("\n\n")), 0x1A),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				if len(f.Contracts) != 1 || f.Packages[0].Check.Status != CheckConsistent {
					t.Errorf("contracts %d check %+v", len(f.Contracts), f.Packages[0].Check)
				}
			},
		},
		{
			name: "a line longer than 256 characters: the excess is ignored with a warning",
			in: func() []byte {
				ls := lines(pkg("1234", contract("A1")...))
				ls[2] += "ÜBERLANG"
				return latin9(ls...)
			}(),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "record_too_long", Warning)
				if is.Line != 3 || is.Raw != "ÜBERLANG" || len(f.Contracts) != 1 {
					t.Errorf("issue %+v", is)
				}
			},
		},
		{
			name: "two records on one line in a file with line ends",
			in: func() []byte {
				ls := lines(pkg("1234", contract("A1")...))
				ls[1] += ls[2]
				return latin9(slices.Delete(ls, 2, 3)...)
			}(),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "line_break_missing", Warning)
				if len(f.Contracts) != 1 || f.Packages[0].Check.Status != CheckConsistent {
					t.Errorf("contracts %d check %+v", len(f.Contracts), f.Packages[0].Check)
				}
			},
		},
		{
			name: "a UTF-8 line in an ISO-8859-15 file is read as UTF-8",
			in: func() []byte {
				ls := lines(pkg("1234", contract("A1")...))
				ls[0] = hdr("1234").set("Absender", "Süddeutsche Versicherung").String()
				b := latin9(ls...)
				return bytes.Replace(b, latin9(ls[1]), []byte(ls[1]+"\n"), 1)
			}(),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "encoding_mixed", Warning)
				p := f.Contracts[0].Persons[0]
				if p.LastName != "Müller" || p.FirstName != "Jürgen" || p.City != "München" || f.Summary.Encoding != EncodingLatin9 {
					t.Errorf("person %s %s %s, encoding %s", p.LastName, p.FirstName, p.City, f.Summary.Encoding)
				}
			},
		},
		{
			name: "record without its contract is an error",
			in:   latin9(lines(pkg("1234", rb("0210.030", 1).key("1234", "030", "A1")))...),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "record_without_contract", Error)
				if is.Line != 2 || len(f.Contracts) != 0 {
					t.Errorf("issue %+v", is)
				}
			},
		},
		{
			name: "addresses without contract are delivered as persons",
			in:   latin9(lines(pkg("1234", person("1234", "A1", "Krüger", "Ute", "01011960", "01")))...),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "address_without_contract", Warning)
				if len(f.Persons) != 1 || f.Persons[0].LastName != "Krüger" || f.Summary.Persons != 1 {
					t.Errorf("persons %+v", f.Persons)
				}
			},
		},
		{
			name: "0200 without part 1 is an error",
			in:   latin9(lines(pkg("1234", rb("0200", 2).key("1234", "030", "A1")))...),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "contract_incomplete", Error)
				if len(f.Contracts) != 0 {
					t.Errorf("contracts %d", len(f.Contracts))
				}
			},
		},
		{
			name: "a contract larger than the limit keeps its first records",
			in: func() []byte {
				recs := contract("A1")
				for range 6 {
					recs = append(recs, rb("0210.030", 1).key("1234", "030", "A1"))
				}
				return latin9(lines(pkg("1234", recs...))...)
			}(),
			opt: Options{MaxRecordsPerContract: 5},
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "contract_too_large", Error)
				if len(f.Contracts) != 1 || len(f.Contracts[0].Details) != 4 || f.Packages[0].Check.Status != CheckConsistent {
					t.Errorf("details %d check %+v", len(f.Contracts[0].Details), f.Packages[0].Check)
				}
			},
		},
		{
			name: "unknown Sparte: general layout, raw kept",
			in:   latin9(lines(pkg("1234", contract0200("1234", "A1", "999", "1.00"), rb("0210.000", 1).key("1234", "999", "A1").set("Spartenbezeichnung", "Exotisch")))...),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "layout_fallback", Warning)
				wantIssue(t, f, "unknown_code", Warning) // the Sparte of the 0200
				d := detailOf(t, f.Contracts[0], "0210.000")
				if d.Fields["Spartenbezeichnung"] != "Exotisch" || len(d.Raw) != 1 || d.Sparte != "999" {
					t.Errorf("detail %+v", d)
				}
			},
		},
		{
			name: "Sparten without own layout use their group's: 081 reads as 080",
			in:   latin9(lines(pkg("1234", contract0200("1234", "A1", "081", "1.00"), rb("0210.080", 1).key("1234", "081", "A1")))...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				detailOf(t, f.Contracts[0], "0210.080")
			},
		},
		{
			name: "Leben: Wagnisart at 60 and part number select the layout",
			in: latin9(lines(pkg("1234",
				contract0200("1234", "L1", "010", "1.00"),
				rb("0220.010.48.1", 1).key("1234", "010", "L1").set("Wagnisart", "4"),
				rb("0220.010.48.1", 2).key("1234", "010", "L1").set("Wagnisart", "4"),
				rb("0220.010.2.1", 1).key("1234", "010", "L1").set("Wagnisart", "2"),
				rb("0220.010.2.6", 6).key("1234", "010", "L1").set("Wagnisart", "2"),
			))...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				var types []string
				for _, d := range f.Contracts[0].Details[1:] {
					types = append(types, d.Type)
				}
				if !slices.Equal(types, []string{"0220.010.48.1", "0220.010.2.1", "0220.010.2.6"}) {
					t.Errorf("types %v", types)
				}
			},
		},
		{
			name: "part number read where the layout has it: 0500 part 1 at 66, part 2 at 256",
			in: latin9(lines(pkg("1234",
				contract0200("1234", "A1", "030", "1.00"),
				rb("0500", 1).key("1234", "030", "A1").set("SchadenNrVu", "S-1"),
				rb("0500", 2).key("1234", "030", "A1").set("SchadenursacheAlleSparten", "0815"),
				rb("0500", 1).key("1234", "030", "A1").set("SchadenNrVu", "S-2"),
			))...),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				var got []string
				for _, d := range f.Contracts[0].Details {
					if d.Type == "0500" {
						got = append(got, d.Fields["SchadenNrVu"].(string)+strings.Repeat("+", len(d.Parts)-1))
					}
				}
				if !slices.Equal(got, []string{"S-1+", "S-2"}) {
					t.Errorf("claims %v", got)
				}
			},
		},
		{
			name: "e-mail with § for @ is repaired; a wrong IBAN is flagged and kept",
			in: latin9(lines(pkg("1234",
				person("1234", "A1", "Groß", "Eva", "01011990", "01"),
				addr("1234", "A1", 2).set("Kommunikationstyp1", "50").set("KommunikationsNr1", "eva§example.de"),
				addr("1234", "A1", 4).set("IBAN1", "DE00100100100000000001"),
				contract0200("1234", "A1", "030", "1.00"),
			))...),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "email_repaired", Warning)
				wantIssue(t, f, "invalid_iban", Warning)
				p := f.Contracts[0].Persons[0]
				if p.Communications[0].Value != "eva@example.de" || p.BankAccounts[0].IBAN != "DE00100100100000000001" {
					t.Errorf("person %+v", p)
				}
			},
		},
		{
			name: "unreadable premium: left empty, out of the sum",
			in: func() []byte {
				ls := lines(pkg("1234", contract("A1")...))
				ls[2] = ls[2][:115] + "00000001x,00" + ls[2][127:]
				return latin9(ls...)
			}(),
			check: func(t *testing.T, f *File) {
				wantIssue(t, f, "invalid_number", Warning)
				wantIssue(t, f, "trailer_premium_mismatch", Warning)
				if f.Contracts[0].Premium != nil {
					t.Errorf("premium %v", f.Contracts[0].Premium)
				}
			},
		},
		{
			name: "a garbage line before the data is an error, the rest is read",
			in:   append([]byte("Satzart;VU;Name\n"), latin9(lines(pkg("1234", contract("A1")...))...)...),
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "invalid_satzart", Error)
				if is.Line != 1 || len(f.Contracts) != 1 {
					t.Errorf("issue %+v", is)
				}
			},
		},
		{
			name: "two deliveries joined in one file, one ISO-8859-15, one CP850: detected per package",
			in: func() []byte {
				var b bytes.Buffer
				gen := func(opt GenerateOptions) { _, _ = Generate(&b, opt) }
				gen(GenerateOptions{Contracts: 3, Seed: 1})
				gen(GenerateOptions{Contracts: 3, Seed: 1, Encoding: EncodingCP850})
				return b.Bytes()
			}(),
			check: func(t *testing.T, f *File) {
				wantNoIssues(t, f)
				if f.Summary.Encoding != "mixed" || f.Packages[0].Encoding != EncodingLatin9 || f.Packages[1].Encoding != EncodingCP850 {
					t.Errorf("encodings %s: %s, %s", f.Summary.Encoding, f.Packages[0].Encoding, f.Packages[1].Encoding)
				}
				for i := range 3 {
					a, b := f.Contracts[i].Persons[0], f.Contracts[i+3].Persons[0]
					if a.LastName != b.LastName || a.City != b.City || !utf8.ValidString(a.LastName) {
						t.Errorf("contract %d: %s/%s vs %s/%s", i, a.LastName, a.City, b.LastName, b.City)
					}
				}
			},
		},
		{
			name: "CR CR LF line ends (a double conversion) keep line numbers",
			in:   bytes.ReplaceAll(latin9(lines(pkg("1234", contract("A1")...))...), []byte("\n"), []byte("\r\r\n")),
			opt:  Options{MaxRecordsPerContract: 1},
			check: func(t *testing.T, f *File) {
				is := wantIssue(t, f, "contract_too_large", Error)
				if is.Line != 3 || f.Summary.LineEnding != "crlf" {
					t.Errorf("issue at line %d, line ending %s", is.Line, f.Summary.LineEnding)
				}
			},
		},
		{
			name: "issues beyond MaxIssuesPerCode are counted, not delivered",
			in: func() []byte {
				var recs []any
				for i := range 5 {
					recs = append(recs, person("1234", "A1", "P", strings.Repeat("x", i+1), "99999999", "01"))
				}
				return latin9(lines(pkg("1234", append(recs, contract0200("1234", "A1", "030", "1.00"))...))...)
			}(),
			opt: Options{MaxIssuesPerCode: 2},
			check: func(t *testing.T, f *File) {
				if len(f.Issues) != 2 || f.Summary.IssuesByCode["invalid_date"] != 5 || f.Summary.IssuesSuppressed != 3 || f.Summary.Warnings != 5 {
					t.Errorf("issues %d, summary %+v", len(f.Issues), f.Summary)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, read(t, tc.in, tc.opt))
		})
	}
}

func (d Date) ddmmyyyy() string {
	b := make([]byte, 0, 8)
	b = append(b, byte('0'+d.Day/10), byte('0'+d.Day%10), byte('0'+d.Month/10), byte('0'+d.Month%10))
	for _, p := range []int{1000, 100, 10, 1} {
		b = append(b, byte('0'+d.Year/p%10))
	}
	return string(b)
}

// TestReader_NotGDV: input that is no GDV file fails with a clear error, not a list of issues.
func TestReader_NotGDV(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code string
		in         []byte
	}{
		{"empty", "empty", nil},
		{"only line ends", "empty", []byte("\r\n\n\n")},
		{"a PDF", "not_gdv", append([]byte("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"), bytes.Repeat([]byte{0x9C, 0x01, 0xFF, '\n'}, 400)...)},
		{"a CSV export", "not_gdv", []byte(strings.Repeat("Name;Vorname;Vertrag\nMüller;Jürgen;4711\n", 10))},
		{"short text", "not_gdv", []byte("hello\n")},
		{"UTF-16", "unsupported_encoding", []byte{0xFF, 0xFE, '0', 0, '0', 0, '0', 0, '1', 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadAll(bytes.NewReader(tc.in), Options{})
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Code != tc.code {
				t.Fatalf("err = %v, want FormatError %s", err, tc.code)
			}
		})
	}
	if _, err := NewReader(bytes.NewReader(nil), Options{Encoding: "ebcdic"}); !errors.Is(err, ErrUnknownEncoding) || !strings.Contains(err.Error(), "ebcdic") {
		t.Errorf("unknown encoding: err = %v", err)
	}
}

// TestReader_UTF8Slicing: a UTF-8 record is sliced by character, so a field after an umlaut
// starts where the layout says, and a line of 256 characters and more bytes is no anomaly.
func TestReader_UTF8Slicing(t *testing.T) {
	t.Parallel()
	ls := lines(pkg("1234",
		person("1234", "A1", "Ärgerlich-Öztürk", "Jürgën", "01011990", "01").set("Ort", "Düsseldorf").set("Str", "Königsallee 1"),
		contract0200("1234", "A1", "030", "12.34")))
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l + "\n")
	}
	if n := len(ls[1]); n <= 256 || utf8.RuneCountInString(ls[1]) != 256 {
		t.Fatalf("test line: %d bytes, %d characters", n, utf8.RuneCountInString(ls[1]))
	}
	f := read(t, b.Bytes(), Options{})
	wantNoIssues(t, f)
	p := f.Contracts[0].Persons[0]
	if p.LastName != "Ärgerlich-Öztürk" || p.FirstName != "Jürgën" || p.City != "Düsseldorf" || p.Street != "Königsallee 1" ||
		p.BirthDate.String() != "1990-01-01" || !p.Has(RolePolicyholder) || f.Summary.Encoding != EncodingUTF8 {
		t.Errorf("person %+v encoding %s", p, f.Summary.Encoding)
	}
}
