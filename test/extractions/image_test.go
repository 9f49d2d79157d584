package extractions

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// TestExtraction_ImageScan: a scan uploaded as a PNG (a phone photo's format, not a PDF) is
// OCRed as one page. Catches images refused or sent to pdftotext, or their page not numbered.
func TestExtraction_ImageScan(t *testing.T) {
	t.Parallel()
	NeedOCR(t)
	env := setup(t)
	co, contact := company(t, env, 5)
	dir, err := testsvc.Poppler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "p.pdf"), Policies[0].Render(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(dir, "pdftoppm"), "-r", "200", "-gray", "-png", "-singlefile", "-f", "1", "-l", "1",
		filepath.Join(tmp, "p.pdf"), filepath.Join(tmp, "scan")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	png, err := os.ReadFile(filepath.Join(tmp, "scan.png"))
	if err != nil {
		t.Fatal(err)
	}
	doc := upload(t, env, co.Secret, contact, "scan.png", "image/png", png)
	e := await(t, env, co.Secret, start(t, env, co.Secret, doc, map[string]any{}).ID)
	if e.Status != "completed" || e.Method == nil || *e.Method != "ocr" || e.Pages != 1 {
		t.Fatalf("extraction %+v, want completed by OCR, 1 page", e)
	}
	for k, want := range map[string]string{"policyNumber": "PHV-2026-004711", "holder.name": "Frau Erika Mustermann",
		"premium": "84.50", "startDate": "2026-02-01"} {
		if got, _ := e.value(k).(string); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, f := range e.Fields {
		if f.Page != 1 {
			t.Errorf("field %s on page %d, want 1", f.Key, f.Page)
		}
	}
}
