// Package commissions tests /commission-statements and /commission-entries end to end: the
// upload and its error cases, the parse on the job queue, matching to contracts, the status
// and link patches, visibility of entries for an agent, and the acceptance run of a GDV file
// whose contracts are imported through /portfolio-transfers and whose 0400 statement matches
// every entry with the file's sum.
package commissions

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

// setup returns the package's server, working jobs like a serve process (the parse runs on
// the queue).
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
