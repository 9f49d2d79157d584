package testsvc

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/devdb"
)

// ErrNoBinaries says the machine has no initdb and pg_ctl for a private cluster.
var ErrNoBinaries = devdb.ErrNoBinaries

// Postgres returns the private PostgreSQL cluster of o.Dir (data in o.Dir/pg), starting it
// unless a postmaster serves it already; only one process at a time gets here, so parallel
// test binaries share one cluster. afterStart, when set, runs once the cluster has started
// and before any other process can use it (under the lock): e.g. dropping what killed test
// runs left. The error wraps ErrNoBinaries when PostgreSQL is not installed.
func Postgres(ctx context.Context, o Options, log zerolog.Logger, afterStart func(ctx context.Context, adminURL string) error) (Service, error) {
	unlock, err := lock(ctx, o.Dir, "pg")
	if err != nil {
		return Service{}, err
	}
	defer unlock()
	c, err := devdb.Open(o.Dir, log)
	if err != nil {
		return Service{}, err
	}
	c.Label = "test cluster"
	if db, ok := c.Attach(); ok {
		return Service{URL: db.AdminURL, Describe: db.Describe}, nil
	}
	db, err := c.Start()
	if err != nil {
		return Service{}, err
	}
	if err := markStarted(o.Dir, "pg", o.Run); err != nil {
		return Service{}, err
	}
	if afterStart != nil {
		if err := afterStart(ctx, db.AdminURL); err != nil {
			return Service{}, fmt.Errorf("after starting the test cluster: %w", err)
		}
	}
	return Service{URL: db.AdminURL, Describe: db.Describe, Started: true}, nil
}

// stopPostgres stops the cluster of o.Dir when it runs and run is "" or the run that started
// it. It says what it did, or "" when nothing ran.
func stopPostgres(ctx context.Context, o Options, run string) (string, error) {
	unlock, err := lock(ctx, o.Dir, "pg")
	if err != nil {
		return "", err
	}
	defer unlock()
	c, err := devdb.Open(o.Dir, zerolog.Nop())
	if err != nil {
		return "", nil // no binaries: there can be no cluster of ours
	}
	db, ok := c.Attach()
	if !ok {
		return "", nil
	}
	if by := startedBy(o.Dir, "pg"); run != "" && by != run {
		return "left running: PostgreSQL, " + db.Describe + " (not started by this run; go tool task test:stop stops it)", nil
	}
	if err := c.Stop(); err != nil {
		return "", err
	}
	_ = markStarted(o.Dir, "pg", "")
	return "stopped PostgreSQL, " + db.Describe, nil
}
