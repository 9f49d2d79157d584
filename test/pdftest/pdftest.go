// Package pdftest checks the service's PDFs in tests with tools nobody here wrote (Debian's
// poppler-utils: pdftotext, pdffonts, pdfinfo, pdfsig; found or installed by testsvc.Poppler,
// so a machine without them fails the test, never skips it) and builds hostile PDFs by hand.
package pdftest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// Run runs one of poppler's tools on pdf with args and returns its standard output; err is
// the tool's failure with its standard error (pdfsig exits non-zero on a bad signature: the
// caller decides). pdftotext writes the text to standard output.
func Run(t testing.TB, tool string, pdf []byte, args ...string) (string, error) {
	t.Helper()
	dir, err := testsvc.Poppler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, in)
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	cmd := exec.Command(filepath.Join(dir, tool), args...)
	cmd.Env = append(os.Environ(), "TZ=UTC") // pdfsig prints times in the local zone
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %v: %w: %s", tool, args, err, stderr.String())
	}
	return stdout.String(), nil
}

// Must is Run that fails the test when the tool fails.
func Must(t testing.TB, tool string, pdf []byte, args ...string) string {
	t.Helper()
	out, err := Run(t, tool, pdf, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Text is what pdftotext reads from pdf (UTF-8, reading order), white space collapsed to
// single spaces.
func Text(t testing.TB, pdf []byte, args ...string) string {
	t.Helper()
	return strings.Join(strings.Fields(Must(t, "pdftotext", pdf, append([]string{"-enc", "UTF-8"}, args...)...)), " ")
}

// AssertFontsEmbedded fails unless pdffonts lists at least one font and every one is embedded
// (its column emb is "yes").
func AssertFontsEmbedded(t testing.TB, pdf []byte) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(Must(t, "pdffonts", pdf)), "\n")
	if len(lines) < 3 {
		t.Fatalf("pdffonts lists no font:\n%s", strings.Join(lines, "\n"))
	}
	// columns: name type encoding emb sub uni object ID; emb is the 5th from the right
	for _, l := range lines[2:] {
		if f := strings.Fields(l); len(f) < 7 || f[len(f)-5] != "yes" {
			t.Errorf("font not embedded: %q", l)
		}
	}
}

// Hand builds a minimal PDF from object bodies (object i+1 is objs[i], object 1 the catalog)
// with a correct cross-reference table: the shape of a hostile upload, which our writer never
// produces.
func Hand(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
