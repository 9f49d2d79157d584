package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun generates a file and checks it, as an operator would.
func TestRun(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "p.gdv")
	var out, errs bytes.Buffer
	if err := run([]string{"generate", "-contracts", "12", "-packages", "2", "-encoding", "cp850", "-o", file}, &out, &errs); err != nil {
		t.Fatalf("generate: %v %s", err, errs.String())
	}
	if !strings.Contains(errs.String(), "12 contracts") {
		t.Errorf("generate said %q", errs.String())
	}
	out.Reset()
	if err := run([]string{"check", file, "../../app/formats/gdv/testdata/kranken.gdv"}, &out, &errs); err != nil {
		t.Fatalf("check: %v", err)
	}
	for _, want := range []string{"encoding cp850", "12 contracts", "Nachsatz consistent", "unknown_code", "Vertragsstatus \"A\""} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run([]string{"check", "-events", file}, &out, &errs); err != nil || strings.Count(out.String(), `"kind":"contract"`) != 12 {
		t.Errorf("events: %v, %d contracts", err, strings.Count(out.String(), `"kind":"contract"`))
	}
	if err := run([]string{"check", "-format", "xls", file}, &out, &errs); err == nil {
		t.Errorf("unknown format accepted")
	}
}
