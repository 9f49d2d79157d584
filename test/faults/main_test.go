// Package faults injects the failures a shared deployment meets (issue 13) while load runs:
// its own PostgreSQL cluster restarted, its own Redis killed and restarted, the server sent
// SIGTERM. Nothing here may answer 500; what is lost and what is told is checked request by
// request. The cluster is private (app/platform/devdb, data under <module>/.data/faults), so restarting
// it disturbs no other test package.
package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/devdb"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// cluster is the private PostgreSQL the tests restart; ownerURL its database for this run.
var (
	cluster  *devdb.Cluster
	adminURL string
	ownerURL string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	root, err := testsvc.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 2
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.WarnLevel)
	dir := filepath.Join(root, ".data", "faults")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 2
	}
	if cluster, err = devdb.Open(dir, log); err != nil {
		fmt.Fprintln(os.Stderr, "faults: a private PostgreSQL cluster is needed (initdb, pg_ctl):", err)
		return 2
	}
	cluster.Label = "fault-injection cluster"
	db, err := cluster.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 2
	}
	defer func() { _ = cluster.Stop() }()
	adminURL = db.AdminURL
	tpl, err := pgtest.Template(ctx, adminURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults: template:", err)
		return 2
	}
	var drop func()
	if ownerURL, drop, err = pgtest.Clone(ctx, adminURL, tpl, "bd_faults_"); err != nil {
		fmt.Fprintln(os.Stderr, "faults: database:", err)
		return 2
	}
	code := m.Run()
	drop()
	return code
}
