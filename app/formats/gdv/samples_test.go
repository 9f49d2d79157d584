package gdv

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sample is what testdata/SOURCES.md says a public sample file holds.
type sample struct {
	file       string
	records    int64
	packages   int
	contracts  int
	vnPersons  int    // distinct (Name 1, Name 3, Geburtsdatum) of 0100 part 1 with Adresskennzeichen 01
	check      string // the Nachsatz verdict
	declared   int64  // Anzahl der Sätze in the Nachsatz (-1: none)
	counted    int64  // records between Vorsatz and Nachsatz
	premium    string // Σ 0200 Gesamtbeitrag
	encoding   string
	lineEnding string
	issues     []string // exactly these issue codes
}

var samples = []sample{
	{file: "musterdatei_041222.txt", records: 165, packages: 1, contracts: 14, vnPersons: 10, check: CheckConsistent,
		declared: 162, counted: 162, premium: "4806.00", encoding: EncodingLatin9, lineEnding: "lf"},
	{file: "igor_110120.txt", records: 32, packages: 1, contracts: 5, vnPersons: 4, check: CheckInconsistent,
		declared: 31605, counted: 30, premium: "1191.70", encoding: EncodingLatin9, lineEnding: "lf",
		issues: []string{"trailer_count_mismatch", "trailer_premium_mismatch", "unknown_code"}},
	{file: "Leben_Wagnis2_Riester.GDV", records: 15, packages: 1, contracts: 1, vnPersons: 1, check: CheckInconsistent,
		declared: 1251, counted: 12, premium: "69.50", encoding: EncodingLatin9, lineEnding: "lf",
		issues: []string{"trailer_count_mismatch", "trailer_premium_mismatch"}},
	{file: "testcase_0220_mit_0221_versetzt.txt", records: 45, packages: 1, contracts: 2, vnPersons: 1, check: CheckInconsistent,
		declared: 19, counted: 43, premium: "282.46", encoding: EncodingCP850, lineEnding: "lf",
		issues: []string{"trailer_count_mismatch", "trailer_premium_mismatch"}},
	{file: "multiple_addresses.gdv", records: 9, packages: 1, contracts: 1, vnPersons: 1, check: CheckInconsistent,
		declared: 400, counted: 7, premium: "44.00", encoding: EncodingLatin9, lineEnding: "crlf",
		issues: []string{"trailer_count_mismatch", "trailer_truncated", "unknown_satzart"}},
	{file: "kranken.gdv", records: 11, packages: 1, contracts: 1, vnPersons: 1, check: CheckInconsistent,
		declared: 400, counted: 9, premium: "147.80", encoding: EncodingLatin9, lineEnding: "crlf",
		issues: []string{"trailer_count_mismatch", "trailer_truncated", "unknown_code", "unknown_satzart"}},
	{file: "missing_nachsatz.gdv", records: 8, packages: 1, contracts: 1, vnPersons: 1, check: CheckMissing,
		declared: -1, counted: 7, premium: "44.00", encoding: EncodingLatin9, lineEnding: "crlf",
		issues: []string{"trailer_missing", "unknown_satzart"}},
	{file: "muster_kfzantrag.gdv", records: 38, packages: 1, contracts: 4, vnPersons: 2, check: CheckInconsistent,
		declared: 108, counted: 35, premium: "0.00", encoding: EncodingLatin9, lineEnding: "crlf",
		issues: []string{"invalid_date", "satzart_skipped", "trailer_count_mismatch"}},
}

func readSample(t *testing.T, name string) *File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := ReadAll(f, Options{})
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return file
}

// TestSamples holds every public sample file to the counts and verdicts its SOURCES.md
// states.
func TestSamples(t *testing.T) {
	t.Parallel()
	for _, s := range samples {
		t.Run(s.file, func(t *testing.T) {
			t.Parallel()
			f := readSample(t, s.file)
			sum := f.Summary
			if sum.Records != s.records || len(f.Packages) != s.packages || len(f.Contracts) != s.contracts {
				t.Errorf("records, packages, contracts = %d, %d, %d; want %d, %d, %d",
					sum.Records, len(f.Packages), len(f.Contracts), s.records, s.packages, s.contracts)
			}
			if got := int(sum.Contracts); got != s.contracts {
				t.Errorf("Summary.Contracts = %d, want %d", got, s.contracts)
			}
			if got := vnPersons(f); got != s.vnPersons {
				t.Errorf("VN persons = %d, want %d", got, s.vnPersons)
			}
			p := f.Packages[0]
			if p.Check.Status != s.check || p.Check.RecordsCounted != s.counted || p.Check.PremiumCounted.String() != s.premium {
				t.Errorf("check = %s, %d records, premium %s; want %s, %d, %s",
					p.Check.Status, p.Check.RecordsCounted, p.Check.PremiumCounted, s.check, s.counted, s.premium)
			}
			declared := int64(-1)
			if p.Check.RecordsDeclared != nil {
				declared = *p.Check.RecordsDeclared
			}
			if declared != s.declared {
				t.Errorf("declared records = %d, want %d", declared, s.declared)
			}
			if sum.Encoding != s.encoding || sum.LineEnding != s.lineEnding {
				t.Errorf("encoding, line ending = %s, %s; want %s, %s", sum.Encoding, sum.LineEnding, s.encoding, s.lineEnding)
			}
			if got := issueCodes(f.Issues); !slices.Equal(got, s.issues) {
				t.Errorf("issue codes = %v, want %v\n%s", got, s.issues, dumpIssues(f.Issues))
			}
			if sum.Errors != 0 {
				t.Errorf("errors = %d: a sample lost data\n%s", sum.Errors, dumpIssues(f.Issues))
			}
			var bySatzart int64
			for _, n := range sum.RecordsBySatzart {
				bySatzart += n
			}
			if bySatzart != sum.Records {
				t.Errorf("records by Satzart add up to %d, not %d", bySatzart, sum.Records)
			}
			for _, c := range f.Contracts {
				if c.PolicyNumber == "" || c.VUNumber == "" || c.Sparte.Code == "" || len(c.Persons) == 0 || c.Premium == nil {
					t.Errorf("contract at line %d incomplete: %+v", c.Line, c)
				}
			}
		})
	}
}

// vnPersons counts as SOURCES.md does: distinct (Name 1, Name 3, Geburtsdatum) of the
// addresses with Adresskennzeichen 01.
func vnPersons(f *File) int {
	seen := map[string]bool{}
	for _, c := range f.Contracts {
		for _, p := range c.Persons {
			for _, r := range p.Roles {
				if r.Code.Code == "01" {
					seen[p.Name1+"|"+p.Name3+"|"+p.BirthDate.String()] = true
				}
			}
		}
	}
	return len(seen)
}

func issueCodes(is []Issue) []string {
	var out []string
	for _, i := range is {
		if !slices.Contains(out, i.Code) {
			out = append(out, i.Code)
		}
	}
	slices.Sort(out)
	return out
}

func dumpIssues(is []Issue) string {
	var b strings.Builder
	for _, i := range is {
		fmt.Fprintf(&b, "  line %d %s %s %s: %s [%s]\n", i.Line, i.Satzart, i.Severity, i.Code, i.Message, i.Raw)
	}
	return b.String()
}

// TestSamples_Details checks what the samples are in the collection for.
func TestSamples_Details(t *testing.T) {
	t.Parallel()

	t.Run("Musterdatei: contracts, persons and bundled contract read exactly", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "musterdatei_041222.txt")
		c := f.Contracts[0]
		want := struct{ vsnr, sparte, start, end, renewal, premium, freq, status, name, first, dob string }{
			"59999999999", "030", "2004-05-01", "2009-05-01", "2005-05-01", "411.41", FrequencyYearly, StatusActive,
			"Kitzelpfütze", "Martina", "1979-11-11"}
		p := c.Persons[0]
		got := struct{ vsnr, sparte, start, end, renewal, premium, freq, status, name, first, dob string }{
			c.PolicyNumber, c.Sparte.Code, c.StartDate.String(), c.EndDate.String(), c.MainRenewalDate.String(),
			c.Premium.String(), c.PaymentFrequency, c.Status, p.LastName, p.FirstName, p.BirthDate.String()}
		if got != want {
			t.Errorf("first contract = %+v, want %+v", got, want)
		}
		var bundled *Contract
		for _, c := range f.Contracts {
			if c.Bundled {
				bundled = c
			}
		}
		if bundled == nil || bundled.Sparte.Code != "000" {
			t.Fatalf("bundled contract (Sparte 000, Bündelungskennzeichen 1) not found")
		}
		var sub []string
		for _, d := range bundled.Details {
			sub = append(sub, d.Type)
		}
		if !slices.Contains(sub, "0210.040") || !slices.Contains(sub, "0210.130") {
			t.Errorf("bundled contract details = %v, want the Haftpflicht and Hausrat parts", sub)
		}
		// Pollsmann and Pooosmann share the birth date: different people.
		names := map[string]bool{}
		for _, c := range f.Contracts {
			names[c.Persons[0].Name1] = true
		}
		if !names["Pollsmann"] || !names["Pooosmann"] {
			t.Errorf("names = %v", names)
		}
	})

	t.Run("interleaved parts: 0220.030 parts 1, 2, 3, 9 joined around 0221", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "musterdatei_041222.txt")
		d := detailOf(t, f.Contracts[0], "0220.030")
		if !slices.Equal(d.Parts, []int{1, 2, 3, 9}) {
			t.Errorf("parts = %v, want [1 2 3 9]", d.Parts)
		}
		if d.Fields["NameVp"] != "Kitzelpfütze" || d.Fields["VornameVp"] != "Martina" {
			t.Errorf("fields = %v", d.Fields)
		}
		// 0220.040 of two risks, parts interleaved: risk 1 part 1, risk 2 part 1, risk 1 part 2, risk 2 part 2
		var risks []Detail
		for _, d := range f.Contracts[5].Details {
			if d.Type == "0220.040" {
				risks = append(risks, d)
			}
		}
		if len(risks) != 2 || !slices.Equal(risks[0].Parts, []int{1, 2}) || !slices.Equal(risks[1].Parts, []int{1, 2}) ||
			risks[0].Fields["OrdnungsNrWagniszusatz"] != "01" || risks[1].Fields["OrdnungsNrWagniszusatz"] != "02" {
			t.Errorf("0220.040 risks = %+v", risks)
		}
	})

	t.Run("CP850: one person in three roles, Sekretärin", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "testcase_0220_mit_0221_versetzt.txt")
		for _, c := range f.Contracts {
			if len(c.Persons) != 1 {
				t.Fatalf("persons = %d, want 1 in three roles", len(c.Persons))
			}
			var roles []string
			for _, r := range c.Persons[0].Roles {
				roles = append(roles, r.Kind)
			}
			if !slices.Equal(roles, []string{RolePolicyholder, RolePayer, RoleInsuredPerson}) {
				t.Errorf("roles = %v", roles)
			}
		}
		d := detailOf(t, f.Contracts[0], "0220.010.0")
		if d.Fields["BerufText"] != "Sekretärin" {
			t.Errorf("BerufText = %q, want Sekretärin (CP850 0x84)", d.Fields["BerufText"])
		}
		// the parts of 0220.010.13.1 around their 0221 records, and three Bezugsrechte (part 6)
		if d := detailOf(t, f.Contracts[0], "0220.010.13.1"); !slices.Equal(d.Parts, []int{1, 2, 3}) {
			t.Errorf("0220.010.13.1 parts = %v", d.Parts)
		}
		n := 0
		for _, d := range f.Contracts[0].Details {
			if d.Type == "0220.010.13.6" {
				n++
			}
		}
		if n != 3 {
			t.Errorf("Bezugsrechte (0220.010.13.6) = %d, want 3", n)
		}
	})

	t.Run("Kranken: Vertragsstatus A kept with a warning, VSNR with letters", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "kranken.gdv")
		c := f.Contracts[0]
		if c.StatusCode.Code != "A" || c.StatusCode.Known() || c.Status != "" {
			t.Errorf("status = %q (code %+v), want unmapped code A", c.Status, c.StatusCode)
		}
		if c.PolicyNumber != "VS12345" || c.Sparte.Code != "020" || c.AnnualPremium.String() != "1773.60" {
			t.Errorf("policy %q sparte %s annual %s", c.PolicyNumber, c.Sparte.Code, c.AnnualPremium)
		}
		if got := findIssue(f.Issues, "unknown_code"); got == nil || got.Field != "Vertragsstatus" || got.Line != 5 || got.Raw != "A" {
			t.Errorf("unknown_code issue = %+v", got)
		}
		if c.Persons[0].City != "Bad Dürkheim" {
			t.Errorf("city = %q", c.Persons[0].City)
		}
		var types []string
		for _, d := range c.Details {
			types = append(types, d.Type)
		}
		if !slices.Equal(types, []string{"0200", "0210.020", "0220.020.1", "0220.020.2", "0220.020.3"}) {
			t.Errorf("detail types = %v (0220.020 by Folgenummer at 48)", types)
		}
	})

	t.Run("multiple addresses: the broker (14) is a person of the contract, not a policyholder", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "multiple_addresses.gdv")
		c := f.Contracts[0]
		if len(c.Persons) != 2 || len(c.PolicyHolders()) != 1 || !c.Persons[1].Has(RoleBroker) {
			t.Errorf("persons = %+v", c.Persons)
		}
		if is := findIssue(f.Issues, "unknown_satzart"); is == nil || is.Satzart != "0800" || is.Line != 8 {
			t.Errorf("0800 issue = %+v", is)
		}
	})

	t.Run("Kfz application: contracts inside 0052…9952 are applications", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "muster_kfzantrag.gdv")
		for _, c := range f.Contracts {
			if !c.Application || c.Status != StatusApplication || c.StatusCode.Code != "1" || len(c.Persons) != 2 {
				t.Errorf("contract %s: application %v status %s persons %d", c.PolicyNumber, c.Application, c.Status, len(c.Persons))
			}
		}
		if f.Contracts[0].Persons[0].Kind != KindBusiness || f.Contracts[1].Persons[0].Kind != KindPrivate {
			t.Errorf("kinds = %s, %s", f.Contracts[0].Persons[0].Kind, f.Contracts[1].Persons[0].Kind)
		}
		if !f.Contracts[1].Persons[0].BirthDate.IsZero() {
			t.Errorf("birth date = %v, want unknown (00000000)", f.Contracts[1].Persons[0].BirthDate)
		}
	})

	t.Run("Riester: Leben Wagnisart 2 with Bezugsrechte", func(t *testing.T) {
		t.Parallel()
		f := readSample(t, "Leben_Wagnis2_Riester.GDV")
		c := f.Contracts[0]
		var types []string
		for _, d := range c.Details {
			types = append(types, d.Type)
		}
		if !slices.Equal(types, []string{"0200", "0210.010", "0220.010.0", "0220.010.2.1", "0221.010.2.1", "0220.010.2.6"}) {
			t.Errorf("detail types = %v", types)
		}
		if c.PaymentFrequency != FrequencyMonthly || c.Persons[0].Communications[0].Kind != CommEmail {
			t.Errorf("frequency %s communications %+v", c.PaymentFrequency, c.Persons[0].Communications)
		}
	})
}

func detailOf(t *testing.T, c *Contract, typ string) Detail {
	t.Helper()
	for _, d := range c.Details {
		if d.Type == typ {
			return d
		}
	}
	t.Fatalf("contract %s has no %s detail", c.PolicyNumber, typ)
	return Detail{}
}

func findIssue(is []Issue, code string) *Issue {
	for i := range is {
		if is[i].Code == code {
			return &is[i]
		}
	}
	return nil
}

// TestSamples_ByteExact checks that every sample is listed above and in SOURCES.md, and that
// its git blob id still matches SOURCES.md (the files are kept byte-exact: -text).
func TestSamples_ByteExact(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/SOURCES.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\S+) \| [^|]+\| [0-9a-f]{40} \| ([0-9a-f]{40}) \| (\d+) \|$`)
	blobs := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(src), -1) {
		blobs[m[1]] = m[2]
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || name == "SOURCES.md" || strings.HasPrefix(name, "fuzz") {
			continue
		}
		if !slices.ContainsFunc(samples, func(s sample) bool { return s.file == name }) {
			t.Errorf("%s has no expectations in samples", name)
		}
		want, ok := blobs[name]
		if !ok {
			t.Errorf("%s is not in SOURCES.md", name)
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(b))
		h.Write(b)
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s: blob %s, SOURCES.md says %s (changed?)", name, got, want)
		}
	}
}
