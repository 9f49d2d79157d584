package extractions

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// Policy is a rendered insurer document and what an extraction must read from it.
type Policy struct {
	Name string
	Body string
	Want map[string]string // key -> value; insurerId as the insurer's catalog name (resolved by the test)
}

const filler = "Grundlage des Vertrags sind die Allgemeinen Versicherungsbedingungen, die Besonderen " +
	"Bedingungen und die Tarifbestimmungen in der bei Vertragsschluss gültigen Fassung. Bitte prüfen Sie " +
	"die Angaben in diesem Dokument und teilen Sie uns Abweichungen unverzüglich mit.\n"

// Policies are three German insurer documents of two insurers, in different layouts: label and
// value on one line (a HanseMerkur policy), value on the line under its label with a period
// (a HanseMerkur Nachtrag), and the data on page 2 of three (a Stuttgarter policy).
var Policies = []Policy{
	{Name: "hansemerkur-phv", Body: "# HanseMerkur Allgemeine Versicherung AG\n## Versicherungsschein Privathaftpflichtversicherung\n" +
		"Siegfried-Wedells-Platz 1, 20354 Hamburg\n---\n" +
		"Versicherungsschein-Nr.: PHV-2026-004711\nVersicherungsnehmer: Frau Erika Mustermann\n" +
		"Anschrift: Königstraße 12, 70173 Stuttgart\nVersicherungsbeginn: 01.02.2026\nVertragsende: 01.02.2029\n" +
		"Gesamtbeitrag: 84,50 EUR jährlich\n\n## Versicherte Gefahren\n" + strings.Repeat(filler, 3) +
		"[[pagebreak]]\n## Hinweise zum Beitrag\n" + strings.Repeat(filler, 6),
		Want: map[string]string{"insurerId": "HanseMerkur Allgemeine Versicherung AG", "policyNumber": "PHV-2026-004711",
			"type": "041", "startDate": "2026-02-01", "endDate": "2029-02-01", "premium": "84.50",
			"paymentFrequency": "yearly", "holder.name": "Frau Erika Mustermann"}},
	{Name: "hansemerkur-hausrat", Body: "# Hausratversicherung\nHanseMerkur Allgemeine Versicherung AG\n" +
		"Nachtrag zum Versicherungsschein\n---\nVertragsnummer\nHR-55123456\nVersicherungsnehmer\n" +
		"Herr Jürgen Müller-Lüdenscheidt\n\nVersicherungsdauer: vom 15.03.2026 bis 15.03.2027\n" +
		"Beitrag vierteljährlich: 45,30 €\nVersicherungssumme: 65.000,00 EUR\n\n" + strings.Repeat(filler, 4),
		Want: map[string]string{"insurerId": "HanseMerkur Allgemeine Versicherung AG", "policyNumber": "HR-55123456",
			"type": "130", "startDate": "2026-03-15", "endDate": "2027-03-15", "premium": "45.30",
			"paymentFrequency": "quarterly", "holder.name": "Herr Jürgen Müller-Lüdenscheidt"}},
	{Name: "stuttgarter-rente", Body: "# Stuttgarter Lebensversicherung a.G.\n## Ihre Rentenversicherung\n" +
		"Rotebühlstraße 120, 70197 Stuttgart\n---\nSehr geehrte Kundin,\nanbei erhalten Sie Ihre Vertragsunterlagen.\n" +
		strings.Repeat(filler, 4) + "[[pagebreak]]\n## Versicherungsschein\nPolicen-Nr. LV-2026-778899\n" +
		"Versicherungsnehmerin: Frau Özlem Kaya\nVertragsbeginn 01.12.2025\nAblauf 01.12.2060\n" +
		"Monatsbeitrag 150,00 €\nZahlungsweise: monatlich\n\n" + strings.Repeat(filler, 2) +
		"[[pagebreak]]\n## Überschussbeteiligung\n" + strings.Repeat(filler, 5),
		Want: map[string]string{"insurerId": "Stuttgarter Lebensversicherung a.G.", "policyNumber": "LV-2026-778899",
			"type": "010", "startDate": "2025-12-01", "endDate": "2060-12-01", "premium": "150.00",
			"paymentFrequency": "monthly", "holder.name": "Frau Özlem Kaya"}},
}

// Render is p as a PDF with a text layer.
func (p Policy) Render(t testing.TB) []byte {
	t.Helper()
	r, err := pdf.Render(p.Body, nil, pdf.Meta{Title: p.Name, CreatedAt: time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatalf("render %s: %v", p.Name, err)
	}
	return r.PDF
}

// Scan is content rasterised page by page (pdftoppm, 200 dpi gray, as an office scanner) and
// wrapped as an image-only PDF (pdfcpu): no text layer, so only OCR reads it.
func Scan(t testing.TB, content []byte) []byte {
	t.Helper()
	dir, err := testsvc.Poppler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "in.pdf"), content, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "pdftoppm"), "-r", "200", "-gray", "-png", filepath.Join(tmp, "in.pdf"),
		filepath.Join(tmp, "page")).CombinedOutput()
	if err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(tmp, "page-*.png"))
	sort.Strings(files)
	var imgs []io.Reader
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, bytes.NewReader(b))
	}
	api.DisableConfigDir()
	imp := pdfcpu.DefaultImportConfig()
	// An A4 page with the image filling it, as a scanner writes it (200 dpi): without UserDim
	// pdfcpu makes the page as large as the image in points (23 by 32 inches), which the reader
	// would render at 300 dpi into 6,892 by 9,746 pixels.
	imp.UserDim = true
	var buf bytes.Buffer
	if err := api.ImportImages(nil, &buf, imgs, imp, nil); err != nil {
		t.Fatalf("import images: %v", err)
	}
	return buf.Bytes()
}

// NeedOCR fails the test (never skips) when Tesseract with German cannot be had.
func NeedOCR(t testing.TB) {
	t.Helper()
	if _, err := testsvc.Tesseract(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := testsvc.Poppler(context.Background()); err != nil {
		t.Fatal(err)
	}
}
