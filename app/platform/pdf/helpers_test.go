package pdf_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// poppler runs one of Debian's poppler-utils on content and returns its standard output. The
// tools are found or installed by testsvc.Poppler; without them the test fails, never skips:
// they are the independent reader that says our PDFs are what we think they are.
func poppler(t *testing.T, tool string, content []byte, args ...string) string {
	t.Helper()
	dir, err := testsvc.Poppler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(in, content, 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, in)
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	cmd := exec.Command(filepath.Join(dir, tool), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, stderr.String())
	}
	return stdout.String()
}

// text is the text pdftotext extracts (in reading order, -layout off), spaces collapsed.
func text(t *testing.T, content []byte, args ...string) string {
	t.Helper()
	return strings.Join(strings.Fields(poppler(t, "pdftotext", content, args...)), " ")
}

// pageText is the text of one page.
func pageText(t *testing.T, content []byte, page int) string {
	t.Helper()
	p := fmt.Sprint(page)
	return text(t, content, "-f", p, "-l", p)
}

// assertFontsEmbedded fails unless pdffonts lists at least one font and every one is
// embedded (the column emb is "yes").
func assertFontsEmbedded(t *testing.T, content []byte) {
	t.Helper()
	out := poppler(t, "pdffonts", content)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 {
		t.Fatalf("pdffonts lists no font:\n%s", out)
	}
	// The header line "name type encoding emb sub uni object ID" and a ruler; emb is the
	// third column from the right of "emb sub uni object ID" (object ID is two fields).
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) < 6 || f[len(f)-5] != "yes" {
			t.Errorf("font not embedded: %q\n%s", l, out)
		}
	}
}

func mustValidate(t *testing.T, content []byte) {
	t.Helper()
	if err := pdf.Validate(content); err != nil {
		t.Fatal(err)
	}
}

func mustRender(t *testing.T, body string, values map[string]string) pdf.Rendered {
	t.Helper()
	r, err := pdf.Render(body, values, meta)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return r
}

// handPDF builds a minimal PDF by hand from object bodies (object i+1 is objs[i], object 1 the
// catalog) with a correct cross-reference table: the shape of a hostile upload, which our
// writer would never produce.
func handPDF(objs ...string) []byte {
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

// pagesPDF is a hand-made PDF of n empty A4 pages (objects: catalog, pages, n pages).
func pagesPDF(n int, catalogExtra string, extra ...string) []byte {
	kids := make([]string, n)
	objs := []string{"", ""}
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", i+3)
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>")
	}
	objs[0] = "<< /Type /Catalog /Pages 2 0 R " + catalogExtra + " >>"
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return handPDF(append(objs, extra...)...)
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
