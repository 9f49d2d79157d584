package portfoliocsv

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

var mapping = Mapping{
	Columns: map[string]string{
		"Vertragsnummer": "contract.policyNumber", "VU-Nr": "contract.insurer", "Gesellschaft": "contract.insurerName",
		"Sparte": "contract.sparte", "Status": "contract.status", "Beginn": "contract.startDate", "Ablauf": "contract.endDate",
		"Beitrag": "contract.premium", "Zahlweise": "contract.paymentFrequency", "Rolle": "person.role",
		"Anrede": "person.salutation", "Vorname": "person.firstName", "Nachname": "person.lastName",
		"Firma": "person.companyName", "Geburtsdatum": "person.birthDate", "Straße": "person.street",
		"PLZ": "person.postalCode", "Ort": "person.city", "E-Mail": "person.email", "IBAN": "person.iban",
	},
}

const header = "Vertragsnummer;VU-Nr;Gesellschaft;Sparte;Status;Beginn;Ablauf;Beitrag;Zahlweise;Rolle;Anrede;Vorname;Nachname;Firma;Geburtsdatum;Straße;PLZ;Ort;E-Mail;IBAN;Notiz\n"

func cp1252(s string) []byte {
	b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

func readCSV(t *testing.T, in []byte, opt Options) *gdv.File {
	t.Helper()
	if opt.Mapping.Columns == nil {
		opt.Mapping = mapping
	}
	f, err := ReadAll(bytes.NewReader(in), opt)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return f
}

func issueCodes(f *gdv.File) []string {
	var out []string
	for _, i := range f.Issues {
		out = append(out, i.Code)
	}
	return out
}

func TestReader_GermanExport(t *testing.T) {
	t.Parallel()
	in := cp1252(header +
		`K-4711;5015;NV Versicherungen;130;aktiv;01.04.2020;01.04.2030;"1.234,56";monatlich;VN;Herr;Jürgen;Müller;;03.02.1970;Königsallee 1;40212;Düsseldorf;jm@example.de;DE89370400440532013000;"Notiz; mit Semikolon"` + "\n" +
		`K-4711;5015;NV Versicherungen;130;aktiv;01.04.2020;01.04.2030;"1.234,56";monatlich;VP;Frau;Käthe;Müller;;00.05.1972;Königsallee 1;40212;Düsseldorf;;;` + "\n" +
		`B-1;9001;Nordstern;Haftpflicht;storniert;1.1.2019;;89,90;jährlich;;Firma;;;Weiß & Söhne GmbH;;Hauptstr. 2;80331;München;;;` + "\n")
	f := readCSV(t, in, Options{})
	if len(f.Issues) != 0 {
		t.Fatalf("issues %+v", f.Issues)
	}
	if len(f.Contracts) != 2 || f.Summary.Encoding != gdv.EncodingWindows || f.Summary.Records != 3 || f.Summary.Persons != 3 {
		t.Fatalf("contracts %d summary %+v", len(f.Contracts), f.Summary)
	}
	c := f.Contracts[0]
	if c.PolicyNumber != "K-4711" || c.VUNumber != "5015" || c.InsurerName != "NV Versicherungen" || c.Sparte.Code != "130" ||
		c.Status != gdv.StatusActive || c.StartDate.String() != "2020-04-01" || c.Premium.String() != "1234.56" ||
		c.AnnualPremium.String() != "14814.72" || c.PaymentFrequency != gdv.FrequencyMonthly || c.Currency != "EUR" {
		t.Errorf("contract %+v", c)
	}
	if len(c.Persons) != 2 || c.Persons[0].LastName != "Müller" || c.Persons[0].FirstName != "Jürgen" ||
		!c.Persons[0].Has(gdv.RolePolicyholder) || !c.Persons[1].Has(gdv.RoleInsuredPerson) || c.Persons[1].BirthDate.String() != "1972-05" ||
		c.Persons[0].Communications[0].Value != "jm@example.de" || c.Persons[0].BankAccounts[0].IBAN != "DE89370400440532013000" {
		t.Errorf("persons %+v", c.Persons)
	}
	if c.Details[0].Fields["Notiz"] != "Notiz; mit Semikolon" || len(c.Details) != 2 {
		t.Errorf("details %+v", c.Details)
	}
	b := f.Contracts[1]
	if b.Sparte.Code != "040" || b.Status != gdv.StatusCancelled || b.StartDate.String() != "2019-01-01" || b.Premium.String() != "89.90" ||
		b.Persons[0].Kind != gdv.KindBusiness || b.Persons[0].CompanyName != "Weiß & Söhne GmbH" || b.Persons[0].City != "München" {
		t.Errorf("second contract %+v person %+v", b, b.Persons[0])
	}
	if p := f.Packages[0]; p.Contracts != 2 || p.Records != 3 || !slices.Equal(p.Insurers, []string{"5015", "9001"}) {
		t.Errorf("package %+v", p)
	}
}

func TestReader_Problems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    []byte
		opt   Options
		codes []string
		check func(t *testing.T, f *gdv.File)
	}{
		{
			name:  "UTF-8 with byte order mark",
			in:    append([]byte{0xEF, 0xBB, 0xBF}, []byte(header+"A1;1;X;030;1;01.01.2020;;12,00;8;01;2;Zoë;Öztürk;;;;;;;;\n")...),
			codes: nil,
			check: func(t *testing.T, f *gdv.File) {
				c := f.Contracts[0]
				if f.Summary.Encoding != gdv.EncodingUTF8 || c.Persons[0].LastName != "Öztürk" || c.Status != gdv.StatusActive ||
					c.StatusCode.Code != "1" || c.PaymentFrequency != gdv.FrequencyMonthly {
					t.Errorf("contract %+v", c)
				}
			},
		},
		{
			name:  "row without policy number is an error, the others are read",
			in:    []byte(header + ";1;;030;;;;;;;;;Meier;;;;;;;;\nA2;1;;030;;;;;;;;;Kurz;;;;;;;;\n"),
			codes: []string{"policy_number_missing"},
			check: func(t *testing.T, f *gdv.File) {
				if len(f.Contracts) != 1 || f.Issues[0].Line != 2 || f.Issues[0].Severity != gdv.Error || f.Issues[0].Field != "Vertragsnummer" {
					t.Errorf("issues %+v", f.Issues)
				}
			},
		},
		{
			name:  "bad values: warnings, values left empty",
			in:    []byte(header + "A1;1;;Raumfahrt;verloren;31.02.2020;01.01.20;12.34;zweimonatlich;Erbe;Dr.;;Meier;;;;;;;DE00123;\n"),
			codes: []string{"invalid_date", "invalid_date", "invalid_iban", "invalid_number", "unknown_code", "unknown_code", "unknown_code", "unknown_code", "unknown_code"},
			check: func(t *testing.T, f *gdv.File) {
				c := f.Contracts[0]
				if c.Status != "" || c.StatusCode.Code != "verloren" || !c.StartDate.IsZero() || c.Premium != nil || c.Sparte.Code != "Raumfahrt" {
					t.Errorf("contract %+v", c)
				}
			},
		},
		{
			name:  "short and long rows",
			in:    []byte(header + "A1;1\nA2;1;;;;;;;;;;;;;;;;;;;;;extra\n"),
			codes: []string{"row_width", "row_width"},
			check: func(t *testing.T, f *gdv.File) {
				extra := false
				for k, v := range f.Contracts[1].Details[0].Fields {
					extra = extra || (strings.HasPrefix(k, "column") && v == "extra")
				}
				if len(f.Contracts) != 2 || !extra {
					t.Errorf("contracts %d details %+v", len(f.Contracts), f.Contracts[1].Details)
				}
			},
		},
		{
			name:  "defaults fill unmapped fields; decimal point option",
			in:    []byte("Nr;Betrag\nA1;1,234.50\n"),
			opt:   Options{Mapping: Mapping{Columns: map[string]string{"nr": "contract.policyNumber", "BETRAG": "contract.premium"}, Defaults: map[string]string{"contract.insurer": "5015", "contract.status": "active"}}, DecimalPoint: true},
			codes: nil,
			check: func(t *testing.T, f *gdv.File) {
				c := f.Contracts[0]
				if c.VUNumber != "5015" || c.Status != gdv.StatusActive || c.Premium.String() != "1234.50" {
					t.Errorf("contract %+v", c)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := readCSV(t, tc.in, tc.opt)
			got := issueCodes(f)
			slices.Sort(got)
			if !slices.Equal(got, tc.codes) {
				t.Errorf("issue codes %v, want %v: %+v", got, tc.codes, f.Issues)
			}
			tc.check(t, f)
		})
	}
}

func TestReader_Refused(t *testing.T) {
	t.Parallel()
	_, err := ReadAll(strings.NewReader("Nummer;Name\n1;x\n"), Options{Mapping: mapping})
	var fe *gdv.FormatError
	if !errors.As(err, &fe) || fe.Code != "column_missing" || !strings.Contains(fe.Detail, `"Vertragsnummer"`) {
		t.Errorf("missing column: %v", err)
	}
	if _, err := ReadAll(strings.NewReader(""), Options{Mapping: mapping}); !errors.As(err, &fe) || fe.Code != "empty" {
		t.Errorf("empty: %v", err)
	}
	_, err = NewReader(strings.NewReader(""), Options{Mapping: Mapping{Columns: map[string]string{"A": "contract.colour", "B": "person.city", "C": "person.city"}}})
	var me *MappingError
	if !errors.As(err, &me) {
		t.Fatalf("mapping: %v", err)
	}
	var codes []string
	for _, p := range me.Problems {
		codes = append(codes, p.Field+"/"+p.Code)
	}
	if !slices.Equal(codes, []string{"columns/required", "columns.A/unknown_target", "columns.C/duplicate_target"}) {
		t.Errorf("problems %v", codes)
	}
	if _, err := NewReader(strings.NewReader(""), Options{Mapping: mapping, Encoding: "ebcdic"}); !errors.Is(err, gdv.ErrUnknownEncoding) {
		t.Errorf("encoding: %v", err)
	}
}

func TestParseValues(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1.234,56": "1234.56", "1234,5": "1234.5", "-12,50 €": "-12.50", "411": "411",
		"1.000.000": "1000000", "EUR 7,00": "7.00", "1.23": "", "12,3,4": "", "1.2345,00": "", "abc": ""} {
		d, ok := parseDecimal(in, false)
		if (want == "") == ok || (ok && d.String() != want) {
			t.Errorf("parseDecimal(%q) = %s %v, want %q", in, d, ok, want)
		}
	}
	if d, ok := parseDecimal("1,234.56", true); !ok || d.String() != "1234.56" {
		t.Errorf("decimal point: %s %v", d, ok)
	}
	for in, want := range map[string]string{"31.12.2024": "2024-12-31", "1.2.2024": "2024-02-01", "2024-12-31": "2024-12-31",
		"00.05.1980": "1980-05", "00.00.1980": "1980", "": "", "31.02.2024": "!", "01.01.24": "!", "12/31/2024": "!", "32.01.2024": "!"} {
		d, ok := parseDate(in)
		if (want == "!") == ok || (ok && d.String() != want) {
			t.Errorf("parseDate(%q) = %q %v, want %q", in, d, ok, want)
		}
	}
	for in, want := range map[string]string{"aktiv": gdv.StatusActive, "Gekündigt": gdv.StatusCancelled, "ruhend": gdv.StatusSuspended,
		"Angebot": gdv.StatusOffer, "antrag": gdv.StatusApplication, "abgelaufen": gdv.StatusEnded, "4": gdv.StatusCancelled, "x": ""} {
		if got, _, _ := parseStatus(in); got != want {
			t.Errorf("parseStatus(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"monatlich": gdv.FrequencyMonthly, "12": gdv.FrequencyMonthly, "8": gdv.FrequencyMonthly,
		"Vierteljährlich": gdv.FrequencyQuarterly, "halb-jährlich": gdv.FrequencyHalfYearly, "1": gdv.FrequencyYearly, "einmalig": gdv.FrequencySingle} {
		if got, _, _ := parseFrequency(in); got != want {
			t.Errorf("parseFrequency(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"30": "030", "030": "030", "Hausrat": "130", "Kfz": "050", "Raumfahrt": "", "Verbundene Hausratversicherung": "130", "Motor insurance": "050"} {
		c, ok := parseSparte(in)
		if (want == "") == ok || (ok && c.Code != want) {
			t.Errorf("parseSparte(%q) = %+v %v", in, c, ok)
		}
	}
}

// FuzzReader: any input is read without panic into well-formed events, and a record without
// end does not make the reader hold the file.
func FuzzReader(f *testing.F) {
	f.Add([]byte(header + "A1;1;X;030;aktiv;01.01.2020;;12,00;8;01;2;Zoë;Öztürk;;;;;;;;\n"))
	f.Add(cp1252(header + `"K;1";5015;"x""y";130;;;;"1.234,56"` + "\n"))
	f.Add([]byte("Vertragsnummer\n\"unclosed\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), Options{Mapping: mapping})
		if err != nil {
			t.Fatal(err)
		}
		for ev, err := range r.All() {
			if err != nil {
				var fe *gdv.FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v", err)
				}
				break
			}
			if ev.Kind == gdv.KindIssue && (ev.Issue.Code == "" || ev.Issue.Line < 0) {
				t.Fatalf("issue %+v", ev.Issue)
			}
		}
	})
}

func TestReader_RecordTooLong(t *testing.T) {
	t.Parallel()
	in := io.MultiReader(strings.NewReader(header+"A1;"), strings.NewReader(strings.Repeat("x", 3<<20)))
	_, err := ReadAll(in, Options{Mapping: mapping})
	var fe *gdv.FormatError
	if !errors.As(err, &fe) || fe.Code != "record_too_long" {
		t.Errorf("err = %v", err)
	}
}
