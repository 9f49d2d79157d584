// Package benchextract measures contract extraction's OCR path (issue 25 "Numbers"): a
// three-page policy rendered with app/platform/pdf, rasterised at 200 dpi and wrapped as an
// image-only PDF, read by extractions.Reader exactly as the job does (pdfinfo, pdftotext finding
// no text, then per page pdftoppm at 300 dpi and Tesseract German under prlimit). No database.
//
//	go test -run '^$' -bench BenchmarkOCR3Pages -benchtime 1x ./test/benchextract/
package benchextract

import (
	"context"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/extractions"
	testext "github.com/brokerdesk/brokerdesk/test/extractions"
)

// BenchmarkOCR3Pages reports the seconds one OCR of the 3-page scan takes.
func BenchmarkOCR3Pages(b *testing.B) {
	testext.NeedOCR(b)
	var p testext.Policy
	for _, q := range testext.Policies {
		if q.Name == "stuttgarter-rente" {
			p = q
		}
	}
	scan := testext.Scan(b, p.Render(b))
	b.ResetTimer()
	for b.Loop() {
		text, err := extractions.Reader{}.Read(context.Background(), "application/pdf", scan)
		if err != nil {
			b.Fatal(err)
		}
		if text.Method != "ocr" || len(text.Pages) != 3 {
			b.Fatalf("method %s, %d pages; want ocr of 3 pages", text.Method, len(text.Pages))
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/scan")
}
