// Package privacy tests the data-subject requests end to end: GET /privacy-requests and its
// filters, POST /contacts/{contactId}/privacy/data-export with its ZIP built on the job queue
// and served by the public download link (expiry by the server's clock, other tokens), the
// error cases, visibility for an agent and isolation between companies.
package privacy

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var (
	worldOnce sync.Once
	world     *apitest.Env
	// skew moves the server's clock (app.WithClock): the expiry test sets it, alone (it does
	// not run in parallel), and puts it back.
	skew atomic.Int64
)

func now() time.Time { return time.Now().Add(time.Duration(skew.Load())) }

type keep struct{ testing.TB }

func (keep) Cleanup(func()) {}

// setup returns the package's server, working jobs like a serve process (exports run on the
// queue), on the skewable clock.
func setup(t testing.TB) *apitest.Env {
	t.Helper()
	worldOnce.Do(func() {
		world = apitest.New(keep{t}, app.WithClock(now))
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
