package gdv

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzReader: any input is read without panic, every event is well-formed and JSON-able, and
// the reader's queue stays bounded (MaxRecordsPerContract and MaxIssuesPerCode bound what it
// holds, whatever the input).
//
//	go test -run '^$' -fuzz FuzzReader -fuzztime 2m ./app/formats/gdv/
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil && filepath.Ext(name) != ".md" {
			f.Add(b)
		}
	}
	for _, opt := range []GenerateOptions{
		{Contracts: 6, Seed: 1},
		{Contracts: 6, Packages: 2, Seed: 2, Encoding: EncodingCP850, LineEnding: "none"},
		{Contracts: 6, Seed: 3, Encoding: EncodingUTF8, StripTrailingBlanks: true, LineEnding: "crlf"},
	} {
		var b bytes.Buffer
		if _, err := Generate(&b, opt); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add([]byte("0001"))
	f.Add([]byte("9999\n0200\n0100\n"))
	f.Add([]byte{0xEF, 0xBB, 0xBF, '0', '0', '0', '1', 0xC3})

	const maxRecs, maxIssues = 20, 10
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), Options{MaxRecordsPerContract: maxRecs, MaxIssuesPerCode: maxIssues})
		if err != nil {
			t.Fatal(err)
		}
		events := 0
		for {
			ev, err := rd.Next()
			if err != nil {
				var fe *FormatError
				if !errors.Is(err, io.EOF) && !errors.As(err, &fe) {
					t.Fatalf("error %T %v", err, err)
				}
				break
			}
			events++
			// queued events: one group's contracts and persons, and issues capped per code
			if n := len(rd.out); n > 2*maxRecs+len(rd.issuesByCode)*maxIssues+8 {
				t.Fatalf("%d events queued", n)
			}
			checkEvent(t, ev)
		}
		s := rd.Summary()
		if s.Records > int64(len(data)) || int64(events) > 4*s.Records+2*int64(len(s.IssuesByCode))*maxIssues+8 {
			t.Fatalf("%d records, %d events from %d bytes", s.Records, events, len(data))
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
	})
}

func checkEvent(t *testing.T, ev Event) {
	t.Helper()
	var payload any
	switch ev.Kind {
	case KindIssue:
		is := ev.Issue
		if (is.Severity != Warning && is.Severity != Error) || is.Code == "" || is.Message == "" || is.Line < 0 ||
			utf8.RuneCountInString(is.Raw) > RecordLen || !utf8.ValidString(is.Raw) || !utf8.ValidString(is.Message) {
			t.Fatalf("bad issue %+v", is)
		}
		payload = is
	case KindContract:
		c := ev.Contract
		if len(c.Details) > 20+1 || len(c.Persons) > 20 {
			t.Fatalf("contract holds %d details, %d persons", len(c.Details), len(c.Persons))
		}
		for _, p := range c.Persons {
			if !utf8.ValidString(p.Name1 + p.Name2 + p.Name3 + p.City + p.Street) {
				t.Fatalf("invalid UTF-8 in %+v", p)
			}
		}
		payload = c
	case KindPersons:
		payload = ev.Persons
	case KindPackage, KindPackageEnd:
		payload = ev.Package
	default:
		t.Fatalf("event kind %d", ev.Kind)
	}
	if _, err := json.Marshal(payload); err != nil {
		t.Fatalf("not JSON-able: %v", err)
	}
}
