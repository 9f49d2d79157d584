package extractions

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Catches: a server without Tesseract or poppler failing the extraction with an opaque error
// (or retrying it for ever) instead of errNoTool naming the Debian package to install.
func TestRead_MissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct{ mediaType, pkg string }{
		{"image/png", "tesseract-ocr-deu"},
		{"application/pdf", "poppler-utils"},
	} {
		_, err := Reader{}.Read(context.Background(), tc.mediaType, []byte("x"))
		if !errors.Is(err, errNoTool) || !strings.Contains(err.Error(), tc.pkg) {
			t.Errorf("%s: err %v, want errNoTool naming %s", tc.mediaType, err, tc.pkg)
		}
	}
}
