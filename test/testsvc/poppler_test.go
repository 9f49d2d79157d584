package testsvc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPoppler: the PDF tools are found or installed (fails on a machine that has neither them
// nor root with apt-get, as the PDF tests would).
func TestPoppler(t *testing.T) {
	dir, err := Poppler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"pdftotext", "pdffonts", "pdfsig", "pdfinfo"} {
		if _, err := os.Stat(filepath.Join(dir, tool)); err != nil {
			t.Errorf("%s: %v", tool, err)
		}
	}
}
