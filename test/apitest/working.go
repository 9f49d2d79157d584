package apitest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
)

var (
	workingOnce sync.Once
	working     *Env
	workingErr  error
)

// Working returns the package's server working jobs like a serve process (analyses, parses,
// exports, erasures run on the queue), built with opts on first use (a package builds it with
// the same options every time) and stopped, jobs first, before the package's database is
// dropped. It outlives the test that built it, so a test's Cleanup never closes it.
func Working(t testing.TB, opts ...app.Option) *Env {
	t.Helper()
	workingOnce.Do(func() {
		if pkgDB.ownerURL == "" {
			workingErr = errors.New("no database: call apitest.Main from TestMain")
			return
		}
		working, workingErr = build(pkgDB.ownerURL, nil, nil, opts...)
		if workingErr != nil {
			return
		}
		if workingErr = working.Server.StartJobs(context.Background()); workingErr != nil {
			working.Server.Close()
			return
		}
		BeforeDrop(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_ = working.Server.StopJobs(ctx)
			working.Server.Close()
		})
	})
	if workingErr != nil {
		t.Fatalf("apitest: working server: %v", workingErr)
	}
	return working
}
