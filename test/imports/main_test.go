// Package imports tests /imports end to end: uploads in every encoding, delimiter and as
// xlsx, the suggested and the given mapping, every error case, invalid and ragged rows,
// duplicates and the three commit policies, the resumable commit (a run stopped after a batch
// and run again), and duplicate detection pinned as the import's creator.
package imports

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

// setup returns the package's server, working jobs like a serve process (analysis and commit
// run on the queue).
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
