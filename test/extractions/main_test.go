// Package extractions tests contract extraction end to end: German insurer Policies rendered
// with app/platform/pdf, uploaded as documents, read from their text layer and, rasterised with
// pdftoppm and wrapped as image-only PDFs, through Tesseract OCR for real; the accuracy per
// field on that set; points taken and refunded on the one ledger; every error case of the
// start and the apply; visibility and isolation.
package extractions

import (
	"os"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// setup returns the package's server, working jobs like a serve process (the extraction runs
// on the queue).
func setup(t testing.TB) *apitest.Env { return apitest.Working(t) }
