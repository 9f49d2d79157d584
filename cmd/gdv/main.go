// Command gdv reads portfolio files the way the portfolio import does (GDV VU-Vermittler with
// package app/formats/gdv, BiPRO shipments with app/formats/bipro, CSV with app/formats/portfoliocsv) and generates
// valid GDV files of any size.
//
//	go run ./cmd/gdv check FILE...                 # packages, Nachsatz verdicts, counts, issues
//	go run ./cmd/gdv check -events FILE            # every event as a JSON line
//	go run ./cmd/gdv check -format bipro shipment.xml
//	go run ./cmd/gdv check -format csv -mapping mapping.json bestand.csv
//	go run ./cmd/gdv generate -contracts 100000 -o portfolio.gdv
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/formats/bipro"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/formats/portfoliocsv"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gdv:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: gdv check [-format gdv|bipro|csv] [-mapping FILE] [-encoding E] [-events] [-issues N] FILE... | gdv generate -contracts N [-packages P] [-seed S] [-encoding E] [-line-ending lf|crlf|none] [-strip] -o FILE")
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdout, stderr)
	case "generate":
		return generate(args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown command %q (check, generate)", args[0])
}

func check(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	enc := fs.String("encoding", "auto", "encoding of the files: "+strings.Join(gdv.Encodings(), ", "))
	events := fs.Bool("events", false, "print every event as a JSON line instead of the report")
	maxIssues := fs.Int("issues", 20, "issues to list per file in the report")
	format := fs.String("format", "gdv", "gdv (gdv_vu_vermittler), bipro (bipro_430_4) or csv")
	mappingFile := fs.String("mapping", "", "csv: the column mapping, JSON {\"columns\": {\"Vertragsnummer\": \"contract.policyNumber\", …}}")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("check: no file")
	}
	var mapping portfoliocsv.Mapping
	if *format == "csv" {
		b, err := os.ReadFile(*mappingFile)
		if err != nil {
			return fmt.Errorf("check: csv needs -mapping: %w", err)
		}
		if err := json.Unmarshal(b, &mapping); err != nil {
			return fmt.Errorf("check: mapping: %w", err)
		}
	}
	failed := 0
	for _, name := range fs.Args() {
		open := func(r io.Reader) (gdv.Source, func(), error) {
			switch *format {
			case "gdv":
				rd, err := gdv.NewReader(r, gdv.Options{Encoding: *enc})
				return rd, func() {}, err
			case "csv":
				rd, err := portfoliocsv.NewReader(r, portfoliocsv.Options{Mapping: mapping, Encoding: *enc})
				return rd, func() {}, err
			case "bipro":
				sh, err := bipro.Open(r, bipro.Options{})
				if err != nil {
					return nil, nil, err
				}
				for _, d := range sh.Documents {
					fmt.Fprintf(stdout, "%s: document %s (%s, %s, %d bytes)\n", name, d.Name, d.Kind, d.MIMEType, d.Size)
				}
				return sh.Reader(gdv.Options{Encoding: *enc}), func() { sh.Close() }, nil
			}
			return nil, nil, fmt.Errorf("unknown format %q (gdv, bipro, csv)", *format)
		}
		if err := checkFile(name, open, *events, *maxIssues, stdout); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files not read", failed, fs.NArg())
	}
	return nil
}

func checkFile(name string, open func(io.Reader) (gdv.Source, func(), error), events bool, maxIssues int, out io.Writer) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, done, err := open(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return err
	}
	defer done()
	w := bufio.NewWriter(out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	var (
		packages []*gdv.Package
		issues   []gdv.Issue
		vn       = map[string]bool{}
	)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if events {
			if err := enc.Encode(eventJSON(ev)); err != nil {
				return err
			}
			continue
		}
		switch ev.Kind {
		case gdv.KindPackageEnd:
			packages = append(packages, ev.Package)
		case gdv.KindIssue:
			if len(issues) < maxIssues {
				issues = append(issues, *ev.Issue)
			}
		case gdv.KindContract:
			for _, p := range ev.Contract.PolicyHolders() {
				vn[p.Name1+"|"+p.Name3+"|"+p.BirthDate.String()] = true
			}
		}
	}
	s := rd.Summary()
	if events {
		return enc.Encode(map[string]any{"kind": "summary", "summary": s})
	}
	fmt.Fprintf(w, "%s\n  encoding %s (detected: %v), line ends %s, %d records (%d short)\n",
		name, s.Encoding, s.EncodingDetected, s.LineEnding, s.Records, s.ShortRecords)
	fmt.Fprintf(w, "  %d contracts, %d persons, %d distinct policyholders (name, first name, birth date), insurers %s\n",
		s.Contracts, s.Persons, len(vn), strings.Join(s.Insurers, " "))
	fmt.Fprintf(w, "  records by Satzart: %s\n", counts(s.RecordsBySatzart))
	for _, p := range packages {
		declared := "—"
		if p.Check.RecordsDeclared != nil {
			declared = fmt.Sprint(*p.Check.RecordsDeclared)
		}
		premium := "—"
		if p.Check.PremiumDeclared != nil {
			premium = p.Check.PremiumDeclared.String()
		}
		if p.Check.Status == "" { // CSV: no Nachsatz
			fmt.Fprintf(w, "  package %d: %d records, %d contracts\n", p.Number, p.Records, p.Contracts)
			continue
		}
		fmt.Fprintf(w, "  package %d (line %d%s): VU %s %q, %d contracts; Nachsatz %s: records %d (declared %s), Gesamtbeitrag %s (declared %s)\n",
			p.Number, p.Line, sourceOf(p), p.VUNumber, p.Sender, p.Contracts, p.Check.Status, p.Check.RecordsCounted, declared, p.Check.PremiumCounted, premium)
	}
	fmt.Fprintf(w, "  %d warnings, %d errors", s.Warnings, s.Errors)
	if len(s.IssuesByCode) > 0 {
		fmt.Fprintf(w, ": %s", counts(s.IssuesByCode))
	}
	fmt.Fprintln(w)
	sort.SliceStable(issues, func(i, j int) bool { return issues[i].Line < issues[j].Line })
	for _, is := range issues {
		if is.Source != "" {
			fmt.Fprintf(w, "    [%s]", is.Source)
		}
		fmt.Fprintf(w, "    line %d %s %s %s %s: %s", is.Line, is.Satzart, is.Field, is.Severity, is.Code, is.Message)
		if is.Raw != "" {
			fmt.Fprintf(w, " [%s]", is.Raw)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func sourceOf(p *gdv.Package) string {
	if p.Source == "" {
		return ""
	}
	return " of " + p.Source
}

func eventJSON(ev gdv.Event) map[string]any {
	switch ev.Kind {
	case gdv.KindPackage:
		return map[string]any{"kind": "package", "package": ev.Package}
	case gdv.KindPackageEnd:
		return map[string]any{"kind": "packageEnd", "package": ev.Package}
	case gdv.KindContract:
		return map[string]any{"kind": "contract", "contract": ev.Contract}
	case gdv.KindPersons:
		return map[string]any{"kind": "persons", "persons": ev.Persons}
	}
	return map[string]any{"kind": "issue", "issue": ev.Issue}
}

func counts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}

func generate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opt gdv.GenerateOptions
	fs.IntVar(&opt.Contracts, "contracts", 1000, "contracts")
	fs.IntVar(&opt.Packages, "packages", 1, "packages (insurers)")
	fs.Uint64Var(&opt.Seed, "seed", 1, "seed: the same seed gives the same file")
	fs.StringVar(&opt.Encoding, "encoding", gdv.EncodingLatin9, "iso-8859-15, iso-8859-1, cp850 or utf-8")
	fs.StringVar(&opt.LineEnding, "line-ending", "lf", "lf, crlf or none")
	fs.BoolVar(&opt.StripTrailingBlanks, "strip", false, "strip trailing blanks (short lines)")
	outName := fs.String("o", "", "output file (default stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var w io.Writer = stdout
	if *outName != "" {
		f, err := os.Create(*outName)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	st, err := gdv.Generate(w, opt)
	if err != nil {
		return err
	}
	if *outName != "" {
		fmt.Fprintf(stderr, "%s: %d contracts, %d records, %d bytes, Gesamtbeitrag %s\n", *outName, st.Contracts, st.Records, st.Bytes, st.Premium)
	}
	return nil
}
