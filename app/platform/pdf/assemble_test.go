package pdf_test

import (
	"bytes"
	"fmt"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"image/png"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Catches: documents merged out of order, pages lost, and a merged file that does not
// validate (the signing page could not show it, the sealer could not sign it).
func TestMerge(t *testing.T) {
	a := mustRender(t, "Dokument A", nil)
	b := mustRender(t, "Dokument B\n[[pagebreak]]\nB zwei", nil)
	c := mustRender(t, "Dokument C\n[[pagebreak]]\nC zwei\n[[pagebreak]]\nC drei", nil)
	out, err := pdf.Merge([][]byte{a.PDF, b.PDF, c.PDF})
	if err != nil {
		t.Fatal(err)
	}
	mustValidate(t, out)
	pdftest.AssertFontsEmbedded(t, out)
	info, err := pdf.Inspect(out, pdf.Limits{})
	if err != nil || info.Pages != 6 {
		t.Fatalf("merged: %+v, %v; want 6 pages", info, err)
	}
	for page, want := range map[int]string{1: "Dokument A", 2: "Dokument B", 3: "B zwei", 4: "Dokument C", 6: "C drei"} {
		if got := pageText(t, out, page); !strings.Contains(got, want) {
			t.Errorf("page %d: %q, want %q", page, got, want)
		}
	}
	if _, err := pdf.Merge(nil); err == nil {
		t.Error("Merge(nil) gave no error")
	}
	if _, err := pdf.Merge([][]byte{a.PDF, []byte("kein PDF")}); err == nil {
		t.Error("Merge of garbage gave no error")
	}
}

// bbox is a word box from pdftotext -bbox, in points from the top left.
type bbox struct {
	word                   string
	xMin, yMin, xMax, yMax float64
}

var wordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)

func words(t *testing.T, content []byte, page int) []bbox {
	t.Helper()
	p := strconv.Itoa(page)
	var out []bbox
	for _, m := range wordRE.FindAllStringSubmatch(pdftest.Must(t, "pdftotext", content, "-bbox", "-f", p, "-l", p), -1) {
		b := bbox{word: m[5]}
		b.xMin, _ = strconv.ParseFloat(m[1], 64)
		b.yMin, _ = strconv.ParseFloat(m[2], 64)
		b.xMax, _ = strconv.ParseFloat(m[3], 64)
		b.yMax, _ = strconv.ParseFloat(m[4], 64)
		out = append(out, b)
	}
	return out
}

// inside reports whether the word lies in the field's rectangle on an A4 page (points).
func inside(b bbox, f schematype.SignatureField) bool {
	const w, h, slack = 595.28, 841.89, 1.0
	return b.xMin >= f.X*w-slack && b.xMax <= (f.X+f.Width)*w+slack && b.yMin >= f.Y*h-slack && b.yMax <= (f.Y+f.Height)*h+slack
}

func signedDoc(t *testing.T) (pdf.Rendered, []byte) {
	t.Helper()
	r := mustRender(t, "# Maklervollmacht\nText\n{{signature:contact}}\n[[pagebreak]]\nSeite zwei\n{{signature:broker}}", nil)
	var apps []pdf.Appearance
	for i, name := range []string{"Anna Müller", "Jörg Maßmann"} {
		img, err := pdf.TypedSignature(name)
		if err != nil {
			t.Fatal(err)
		}
		apps = append(apps, pdf.Appearance{Field: r.Fields[i], PNG: img, Caption: fmt.Sprintf("%s 08.12.2026 11:0%d", name, i)})
	}
	out, err := pdf.Stamp(r.PDF, apps)
	if err != nil {
		t.Fatal(err)
	}
	return r, out
}

// Catches: appearances placed with the wrong origin (bottom-left vs top-left) or unit, on the
// wrong page, captions missing from the text layer, a stamped file that does not validate or
// whose caption font is not embedded, and the original text lost under the overlay.
func TestStamp(t *testing.T) {
	r, out := signedDoc(t)
	mustValidate(t, out)
	pdftest.AssertFontsEmbedded(t, out)
	for i, want := range []string{"Anna Müller 08.12.2026 11:00", "Jörg Maßmann 08.12.2026 11:01"} {
		page := r.Fields[i].Page
		got := pageText(t, out, page)
		if !strings.Contains(got, want) {
			t.Errorf("page %d lacks the caption %q: %q", page, want, got)
		}
		if !strings.Contains(got, "Unterschrift") {
			t.Errorf("page %d lost its own text: %q", page, got)
		}
		found := false
		for _, b := range words(t, out, page) {
			if b.word == "08.12.2026" {
				found = true
				if !inside(b, r.Fields[i]) {
					t.Errorf("caption word %+v outside field %+v", b, r.Fields[i])
				}
			}
		}
		if !found {
			t.Errorf("page %d: caption word not found in the bbox output", page)
		}
	}
	if info, err := pdf.Inspect(out, pdf.Limits{}); err != nil || info.Pages != 2 {
		t.Errorf("stamped document: %+v, %v", info, err)
	}
}

// Catches: a field on a page the document does not have stamped somewhere else or silently
// dropped; an image that is not a PNG (or a PNG header promising a huge image) accepted.
func TestStamp_Refuses(t *testing.T) {
	r := mustRender(t, "{{signature:contact}}", nil)
	img, err := pdf.TypedSignature("Anna")
	if err != nil {
		t.Fatal(err)
	}
	f := r.Fields[0]
	f.Page = 2
	if _, err := pdf.Stamp(r.PDF, []pdf.Appearance{{Field: f, PNG: img}}); err == nil {
		t.Error("a field on page 2 of a 1-page document was accepted")
	}
	if _, err := pdf.Stamp(r.PDF, []pdf.Appearance{{Field: r.Fields[0], PNG: []byte("GIF89a")}}); err == nil {
		t.Error("a non-PNG image was accepted")
	}
	huge := pngHeader(100_000, 100_000)
	if _, err := pdf.Stamp(r.PDF, []pdf.Appearance{{Field: r.Fields[0], PNG: huge}}); err == nil {
		t.Error("a 100,000 x 100,000 PNG was accepted")
	}
}

// pngHeader is the signature and IHDR chunk of a PNG of w x h pixels, with no image data.
func pngHeader(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := []byte{0, 0, 0, 13, 'I', 'H', 'D', 'R',
		byte(w >> 24), byte(w >> 16), byte(w >> 8), byte(w), byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h),
		8, 6, 0, 0, 0}
	b.Write(ihdr)
	crc := crc32IEEE(ihdr[4:])
	b.Write([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	return b.Bytes()
}

// Catches: an audit page missing what proves the signing (hash, request, verification and
// signing times in German time, IP, browser), a long user agent running off the page, values
// read as markup, times in UTC instead of Europe/Berlin, many signers not continued on a
// further page, and an appended file that does not validate.
func TestAppendAudit(t *testing.T) {
	r, stamped := signedDoc(t)
	sig, err := pdf.TypedSignature("Anna Müller")
	if err != nil {
		t.Fatal(err)
	}
	ua := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) " + strings.Repeat("Chrome/131.0.0.0 ", 12) + "UAENDE"
	winter := time.Date(2026, 12, 8, 10, 5, 0, 0, time.UTC)
	summer := time.Date(2026, 7, 1, 10, 5, 0, 0, time.UTC)
	a := pdf.Audit{
		Title: "Maklervollmacht {{contact.name}}", RequestID: "0193a1b2-0000-7000-8000-000000000001",
		DocumentHash: strings.Repeat("ab", 32), Pages: r.Pages,
		CreatedAt: winter.Add(-time.Hour), CompletedAt: winter.Add(time.Minute),
	}
	for i := range 8 {
		a.Signers = append(a.Signers, pdf.AuditSigner{
			Name: fmt.Sprintf("Person%d Müller", i), Email: fmt.Sprintf("p%d@example.org", i), Role: "contact",
			VerifiedAt: winter, SignedAt: summer, IP: "2001:db8::1", UserAgent: ua, Signature: sig,
		})
	}
	out, err := pdf.AppendAudit(stamped, a)
	if err != nil {
		t.Fatal(err)
	}
	mustValidate(t, out)
	pdftest.AssertFontsEmbedded(t, out)
	info, err := pdf.Inspect(out, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Pages < r.Pages+2 {
		t.Fatalf("pages = %d: eight signers should need at least two audit pages", info.Pages)
	}
	if got := pageText(t, out, 1); strings.Contains(got, "Prüfprotokoll") {
		t.Error("the audit is not after the document")
	}
	var all strings.Builder
	for p := r.Pages + 1; p <= info.Pages; p++ {
		all.WriteString(pageText(t, out, p) + " ")
	}
	got := all.String()
	for _, want := range []string{
		"Prüfprotokoll", "Maklervollmacht {{contact.name}}", a.RequestID, a.DocumentHash, "Seitenzahl: 2",
		"E-Mail bestätigt per Einmalcode: 08.12.2026, 11:05:00 Uhr MEZ", "Unterschrieben: 01.07.2026, 12:05:00 Uhr MESZ",
		"Abgeschlossen: 08.12.2026, 11:06:00 Uhr MEZ", "IP-Adresse: 2001:db8::1", "Rolle: Kunde/Kundin",
		"p7@example.org", "Person7 Müller", "UAENDE", fmt.Sprintf("Prüfprotokoll · Seite 1 von %d", info.Pages-r.Pages),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %q:\n%s", want, got)
		}
	}
	// The user agent wraps: no word beyond the right margin (20 mm = 56.7 pt).
	for p := r.Pages + 1; p <= info.Pages; p++ {
		for _, b := range words(t, out, p) {
			if b.xMax > 595.28-56 {
				t.Errorf("page %d: %q runs past the margin (%.1f)", p, b.word, b.xMax)
			}
		}
	}
}

// Catches: a typed signature that is empty, opaque (it would cover the line and text under
// the field), cut at the edges, or different for the same name.
func TestTypedSignature(t *testing.T) {
	for _, name := range []string{"Anna Müller", "Dr. Maximilian Alexander von Hohenberg-Schwarzenfeld zu Großbrückenau"} {
		b, err := pdf.TypedSignature(name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if s := img.Bounds().Size(); s.X != 600 || s.Y != 150 {
			t.Errorf("size %v", s)
		}
		inked, edge := 0, 0
		for y := 0; y < 150; y++ {
			for x := 0; x < 600; x++ {
				if _, _, _, a := img.At(x, y).RGBA(); a > 0 {
					inked++
					if x < 2 || x > 597 {
						edge++
					}
				}
			}
		}
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Error("background not transparent")
		}
		if inked < 1000 || inked > 600*150/2 {
			t.Errorf("%q: %d inked pixels", name, inked)
		}
		if edge > 0 {
			t.Errorf("%q: cut at the edge", name)
		}
		again, _ := pdf.TypedSignature(name)
		if !bytes.Equal(b, again) {
			t.Error("same name, different image")
		}
	}
	if _, err := pdf.TypedSignature("  \t "); err == nil {
		t.Error("an empty name gave an image")
	}
}
