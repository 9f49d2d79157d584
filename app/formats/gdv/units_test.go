package gdv

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv/internal/layoutxml"
)

// TestTypedFields_MatchLayouts: every position the typed model reads is the GDV's, as the
// generated layout tables have it.
func TestTypedFields_MatchLayouts(t *testing.T) {
	t.Parallel()
	for _, f := range typedFields() {
		l := LayoutFor(f.satzart)
		if l == nil || l.TD(f.td) == nil {
			t.Errorf("%s part %d: no layout", f.satzart, f.td)
			continue
		}
		lf := l.TD(f.td).Field(f.tech)
		if lf == nil {
			t.Errorf("%s part %d: no field %s", f.satzart, f.td, f.tech)
			continue
		}
		if lf.Pos != f.pos || lf.Len != f.n || lf.Type != f.typ || lf.Decimals != f.nk {
			t.Errorf("%s part %d %s: reader uses %d,%d %s/%d; GDV says %d,%d %s/%d",
				f.satzart, f.td, f.tech, f.pos, f.n, f.typ, f.nk, lf.Pos, lf.Len, lf.Type, lf.Decimals)
		}
	}
}

// TestLayouts checks the generated tables: every part tiles positions 1-256, every data
// record type has the common key at 1-42, the part number sits where the GDV says.
func TestLayouts(t *testing.T) {
	t.Parallel()
	if n := len(Layouts()); n != 161 {
		t.Errorf("%d record types, want 161 (release 2023)", n)
	}
	for _, l := range Layouts() {
		for _, td := range l.TDs {
			next := 1
			fs := slices.Clone(td.Fields)
			slices.SortFunc(fs, func(a, b Field) int { return a.Pos - b.Pos })
			for _, f := range fs {
				if f.Pos != next {
					t.Errorf("%s part %d: gap or overlap at %d", l.Key, td.Nr, f.Pos)
				}
				next = f.Pos + f.Len
			}
			if next != 257 {
				t.Errorf("%s part %d ends at %d", l.Key, td.Nr, next-1)
			}
			if l.Satzart == "0001" || l.Satzart == "9999" {
				continue
			}
			// the key sits at 1-42 in every data record type (named VU-Nummer, KAG- or
			// Bausparkassen-Nummer, Versicherungsschein- or Vertragsnummer by line)
			for _, k := range []fref{fKeyVU, fKeyBundle, fKeySparte, fKeyVSNR, fKeyFolgeNr, fKeyAgency} {
				if !slices.ContainsFunc(td.Fields, func(f Field) bool { return f.Pos == k.pos && f.Len == k.n }) {
					t.Errorf("%s part %d: no key field at %d (%d)", l.Key, td.Nr, k.pos, k.n)
				}
			}
		}
	}
	for key, want := range map[string][]int{
		"0100": {256, 256, 256, 256, 256}, "0220.030": {49, 49, 43, 49, 60}, "0500": {66, 256},
		"0220.040": {51, 51}, "0210.130": {251, 251}, "0220.000": {47, 47}, "9999": {0},
	} {
		var got []int
		for _, td := range LayoutFor(key).TDs {
			got = append(got, td.NrPos)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s part number positions %v, want %v", key, got, want)
		}
	}
	if LayoutRelease() != "01.12.2023" {
		t.Errorf("release %s", LayoutRelease())
	}
}

// TestResolveLayout: the layout of a line-specific record comes from (Satzart, Sparte),
// for Leben also the Wagnisart, for Kranken the Folgenummer, for Bausparen the Art.
func TestResolveLayout(t *testing.T) {
	t.Parallel()
	rec := func(satzart, sparte string, at map[int]byte) *record {
		b := []byte(strings.Repeat(" ", RecordLen))
		copy(b, satzart)
		copy(b[10:], sparte)
		for p, c := range at {
			b[p-1] = c
		}
		return &record{raw: b, chars: RecordLen, satzart: satzart}
	}
	cases := []struct {
		satzart, sparte string
		at              map[int]byte
		want            string
		fallback        bool
	}{
		{"0210", "030", nil, "0210.030", false},
		{"0220", "051", nil, "0220.051", false},
		{"0220", "050", nil, "0220.000", false}, // Anlage 1: Kfz 0220 with Sparte 050 is general
		{"0210", "082", nil, "0210.080", false},
		{"0220", "176", nil, "0220.170", false},
		{"0211", "193", nil, "0211.190", false},
		{"0220", "600", nil, "0220.051", false},
		{"0210", "630", nil, "0210.000", false},
		{"0210", "041", nil, "0210.000", true}, // known Sparte, no layout of its own in Anlage 1
		{"0210", "999", nil, "0210.000", true}, // unknown Sparte
		{"0220", "010", map[int]byte{60: '0'}, "0220.010.0", false},
		{"0220", "010", map[int]byte{60: '3', 256: '2'}, "0220.010.13.1", false},
		{"0220", "010", map[int]byte{60: '8', 256: '6'}, "0220.010.48.6", false},
		{"0220", "010", map[int]byte{60: '5', 256: '7'}, "0220.010.5.1", false}, // no 7 for Wagnisart 5: the main layout
		{"0221", "010", map[int]byte{60: '2', 256: '7'}, "0221.010.2.7", false},
		{"0220", "020", map[int]byte{48: '2'}, "0220.020.2", false},
		{"0220", "580", map[int]byte{44: '1'}, "0220.580.01", false},
		{"0220", "580", map[int]byte{44: '2'}, "0220.580.2", false},
		{"0300", "030", nil, "0300", false},
		{"0100", "999", nil, "0100", false},
	}
	for _, c := range cases {
		l, fb := resolveLayout(c.satzart, c.sparte, rec(c.satzart, c.sparte, c.at))
		if l == nil || l.Key != c.want || fb != c.fallback {
			t.Errorf("%s/%s %v: got %v fallback %v, want %s fallback %v", c.satzart, c.sparte, c.at, l, fb, c.want, c.fallback)
		}
	}
	if l, _ := resolveLayout("0220", "010", rec("0220", "010", map[int]byte{60: 'X'})); l != nil {
		t.Errorf("Wagnisart X: %s, want none", l.Key)
	}
	if l, _ := resolveLayout("0800", "030", rec("0800", "030", nil)); l != nil || knownSatzart("0800") || !knownSatzart("0221") {
		t.Errorf("0800 resolved to %v", l)
	}
}

func TestCodeLists_SortedAndUnique(t *testing.T) {
	t.Parallel()
	for name, l := range map[string]codeList{
		"sparten": sparten, "roles": roleCodes, "salutation": salutationCodes, "gender": genderCodes, "marital": maritalCodes,
		"legal form": legalFormCodes, "payment method": paymentMethodCodes, "communication": communicationCodes,
		"frequency": paymentFrequencyCodes, "status": contractStatusCodes, "reason": cancellationReasonCodes,
		"collection": collectionCodes, "sender kind": senderKindCodes,
	} {
		for i := range l {
			if l[i].De == "" || l[i].En == "" {
				t.Errorf("%s %s: label missing", name, l[i].Code)
			}
			if i > 0 && l[i-1].Code >= l[i].Code {
				t.Errorf("%s: %s before %s", name, l[i-1].Code, l[i].Code)
			}
		}
	}
	if c, ok := Sparte("130"); !ok || c.En != "Household contents insurance" {
		t.Errorf("Sparte 130 = %+v", c)
	}
	for code, kind := range map[string]string{"01": RolePolicyholder, "31": RolePolicyholder, "63": RolePayer, "09": RoleInsuredPerson,
		"14": RoleBroker, "E1": RoleCoInsuredPerson, "17": RoleOther, "ZZ": RoleUnknown} {
		if r, _ := roleOf(code); r.Kind != kind || r.Code.Code != code {
			t.Errorf("role %s = %+v, want %s", code, r, kind)
		}
	}
}

func TestDecimal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		digits string
		places int
		want   string
		ok     bool
	}{
		{"000000041141", 2, "411.41", true},
		{"000000480600", 2, "4806.00", true},
		{"   12345", 2, "123.45", true},
		{"00001", 3, "0.001", true},
		{"000000000000000000000123", 2, "1.23", true}, // long field, leading zeros
		{"            ", 2, "", true},
		{"123  ", 2, "", false},
		{"12x4", 2, "", false},
		{"-123", 2, "", false},
		{"9999999999999999999", 0, "", false},
	}
	for _, c := range cases {
		d, present, ok := decimalDigits([]byte(c.digits), c.places)
		if ok != c.ok || (ok && present && d.String() != c.want) || (ok && !present && c.want != "") {
			t.Errorf("%q/%d = %s present %v ok %v; want %q ok %v", c.digits, c.places, d, present, ok, c.want, c.ok)
		}
	}
	a, _ := ParseDecimal("4806")
	b, _ := ParseDecimal("4806.00")
	if a.Cmp(b) != 0 || a.String() != "4806" || b.String() != "4806.00" {
		t.Errorf("%s vs %s", a, b)
	}
	s, ok := NewDecimal(41141, 2).Add(NewDecimal(5, 1))
	if !ok || s.String() != "411.91" {
		t.Errorf("add = %s", s)
	}
	if _, ok := NewDecimal(1<<62, 0).MulInt(4); ok {
		t.Errorf("overflow not detected")
	}
	if m, _ := NewDecimal(-5, 2).MulInt(12); m.String() != "-0.60" {
		t.Errorf("mul = %s", m)
	}
	js, _ := json.Marshal(struct{ P Decimal }{NewDecimal(7, 2)})
	if string(js) != `{"P":"0.07"}` {
		t.Errorf("json = %s", js)
	}
	var back Decimal
	if err := json.Unmarshal([]byte(`"12.30"`), &back); err != nil || back.String() != "12.30" {
		t.Errorf("unmarshal = %s %v", back, err)
	}
	for _, bad := range []string{"", "1.", ".5", "1,5", "1e5", "12345678901234567890"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) accepted", bad)
		}
	}
}

func TestDate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"01052004", "2004-05-01", true},
		{"00000000", "", true},
		{"        ", "", true},
		{"00051980", "1980-05", true},
		{"00001980", "1980", true},
		{"29022024", "2024-02-29", true},
		{"29022023", "", false},
		{"31041980", "", false},
		{"01131980", "", false},
		{"15001980", "", false}, // a day without month
		{"0101000A", "", false},
		{"01010000", "", false},
		{"052004", "2004-05", true}, // MMJJJJ
	}
	for _, c := range cases {
		d, ok := parseDate([]byte(c.in))
		if ok != c.ok || d.String() != c.want {
			t.Errorf("%q = %q ok %v; want %q ok %v", c.in, d, ok, c.want, c.ok)
		}
	}
	js, _ := json.Marshal([]Date{{}, {Year: 1980, Month: 5}})
	if string(js) != `[null,"1980-05"]` {
		t.Errorf("json = %s", js)
	}
	if _, ok := (Date{Year: 1980, Month: 5}).Time(); ok {
		t.Errorf("partial date has a time")
	}
}

func TestEncodings(t *testing.T) {
	t.Parallel()
	for label, want := range map[string]string{"": EncodingAuto, "Latin1": EncodingLatin1, "ISO_8859-15": EncodingLatin9,
		"IBM850": EncodingCP850, "DOS": EncodingCP850, "UTF8": EncodingUTF8, "cp1252": EncodingWindows, "ANSI": EncodingWindows, "MacRoman": EncodingMacintosh} {
		if got, ok := NormalizeEncoding(label); !ok || got != want {
			t.Errorf("NormalizeEncoding(%q) = %q, want %q", label, got, want)
		}
	}
	if _, ok := NormalizeEncoding("utf-16"); ok {
		t.Errorf("utf-16 accepted")
	}
	latin := newCharset(EncodingLatin9)
	for in, want := range map[string]string{
		"K\xFCmmel \xA4":   "Kümmel €", // ISO-8859-15: 0xA4 is €
		"\x84Hallo\x93":    "„Hallo“",  // C1 bytes read as Windows-1252 punctuation
		"A\x81B":           "A\uFFFDB", // undefined even in Windows-1252
		"  padded\x00\x00": "padded",
	} {
		got, _ := latin.decode([]byte(in))
		if got != want {
			t.Errorf("decode %q = %q, want %q", in, got, want)
		}
	}
	if _, bad := latin.decode([]byte("a\x01b")); !bad {
		t.Errorf("control character not reported")
	}
	dos := newCharset(EncodingCP850)
	if got, _ := dos.decode([]byte("Sekret\x84rin Stra\xE1e \x9A")); got != "Sekretärin Straße Ü" {
		t.Errorf("cp850 = %q", got)
	}
	for name, want := range map[string]string{
		"testcase_0220_mit_0221_versetzt.txt": EncodingCP850,
		"musterdatei_041222.txt":              EncodingLatin9,
		"igor_110120.txt":                     EncodingLatin9,
		"kranken.gdv":                         EncodingLatin9,
	} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if got := detectEncoding(b); got != want {
			t.Errorf("%s detected as %s, want %s", name, got, want)
		}
	}
	if got := detectEncoding([]byte("M\xC3\xBCller J\xC3\xBCrgen")); got != EncodingUTF8 {
		t.Errorf("UTF-8 detected as %s", got)
	}
	// a UTF-8 sequence cut by the end of the detection window still reads as UTF-8
	if got := detectEncoding([]byte("M\xC3\xBCller \xC3")); got != EncodingUTF8 {
		t.Errorf("cut UTF-8 detected as %s", got)
	}
}

func TestValidIBAN(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"DE89370400440532013000":         true,
		"GB82WEST12345698765432":         true,
		"DE89370400440532013001":         false,
		"DE8937040044053201300":          false,
		"DE89 3704 0044 0532 0130 00":    false, // the reader removes blanks before
		germanIBAN("100100100000004711"): true,
	} {
		if got := validIBAN(in); got != want {
			t.Errorf("validIBAN(%q) = %v", in, got)
		}
	}
}

// TestLayouts_Generated: layouts_gen.go is exactly what the generator writes from spec/
// (nobody edited it by hand, and the 2009 release still is a positional subset of 2023).
func TestLayouts_Generated(t *testing.T) {
	t.Parallel()
	want, err := layoutxml.Generate([]string{"spec/VUVM2023.xml", "spec/VUVM2009.xml"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("layouts_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("layouts_gen.go differs from the generator's output: run go generate ./app/formats/gdv")
	}
}
