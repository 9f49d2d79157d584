package pdf_test

import (
	"fmt"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
)

// pageText is the text of one page.
func pageText(t *testing.T, content []byte, page int) string {
	t.Helper()
	p := fmt.Sprint(page)
	return pdftest.Text(t, content, "-f", p, "-l", p)
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
	return pdftest.Hand(append(objs, extra...)...)
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
