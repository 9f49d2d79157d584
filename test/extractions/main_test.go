// Package extractions tests contract extraction end to end: German insurer Policies rendered
// with app/platform/pdf, uploaded as documents, read from their text layer and, rasterised with
// pdftoppm and wrapped as image-only PDFs, through Tesseract OCR for real; the accuracy per
// field on that set; points taken and refunded on the one ledger; every error case of the
// start and the apply; visibility and isolation.
package extractions

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var (
	worldOnce sync.Once
	world     *apitest.Env
)

type keep struct{ testing.TB }

func (keep) Cleanup(func()) {}

// setup returns the package's server, working jobs like a serve process (the extraction runs
// on the queue).
func setup(t testing.TB) *apitest.Env {
	t.Helper()
	worldOnce.Do(func() {
		world = apitest.New(keep{t})
		if err := world.Server.StartJobs(context.Background()); err != nil {
			t.Fatalf("start jobs: %v", err)
		}
		apitest.BeforeDrop(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_ = world.Server.StopJobs(ctx)
			world.Server.Close()
		})
	})
	if world == nil {
		t.Fatal("no test server")
	}
	return world
}
