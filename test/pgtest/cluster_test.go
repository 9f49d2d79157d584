package pgtest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// The private cluster path of Server, for real: several test processes start it at once in a
// temp dir, one starts it and the others join it; a run's stop leaves a cluster another run
// started; the next start reuses the data, drops leftover package databases and keeps the
// template.
func TestPrivateCluster_SharedByProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(testsvc.UsableTempDir(t), "test")
	o := testsvc.Options{Dir: dir, Run: "run-1"}
	t.Cleanup(func() { _, _ = testsvc.Stop(context.Background(), o, "") })

	results := testsvc.RunProcesses(ctx, t, 4, "TestHelperProcess", "PGTEST_HELPER_DIR="+dir, testsvc.RunEnv+"="+o.Run)
	admin := testsvc.OneStarted(t, results).URL
	var dataDir string
	query(ctx, t, admin, "SHOW data_directory", &dataDir)
	if !strings.HasPrefix(dataDir, dir) && !strings.Contains(dataDir, "brokerdesk-dev-") {
		t.Errorf("data_directory %s, want the cluster under %s", dataDir, dir)
	}
	// A UTF-8 locale, as on the servers we run on: case-insensitive search folds umlauts.
	var folds bool
	query(ctx, t, admin, "SELECT 'Müller' ILIKE '%MÜLLER%'", &folds)
	if !folds {
		t.Errorf("'Müller' ILIKE '%%MÜLLER%%' is false on the private cluster: want a UTF-8 locale")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "pg.run")); err != nil || strings.TrimSpace(string(b)) != "run-1" {
		t.Errorf("pg.run = %q (%v), want the run that started it", b, err)
	}

	// What a killed test binary leaves, and a template, which must survive.
	mustExec(ctx, t, admin, "CREATE DATABASE bd_t_leftover", "CREATE DATABASE bd_tpl_keep")

	// Another run's stop leaves it running; its own run's stop stops it.
	lines, err := testsvc.Stop(ctx, o, "run-2")
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "left running: PostgreSQL") {
		t.Fatalf("stop by another run: %q, %v; want it left running", lines, err)
	}
	query(ctx, t, admin, "SELECT 'up'", new(string))
	lines, err = testsvc.Stop(ctx, o, "run-1")
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "stopped PostgreSQL") {
		t.Fatalf("stop by its run: %q, %v; want it stopped", lines, err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid after stop: %v, want none", err)
	}

	// The next run starts it again on the kept data (no initdb) and cleans up.
	o.Run = "run-3"
	admin, err = privateCluster(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var names string
	query(ctx, t, admin, "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE datname LIKE 'bd%'", &names)
	if names != "bd_tpl_keep" {
		t.Errorf("databases after a restart: %q, want the template kept and the leftover dropped", names)
	}
}

// TestHelperProcess is one test binary of a parallel run (started by runHelpers).
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("PGTEST_HELPER_DIR")
	if dir == "" {
		return // not a helper
	}
	o := testsvc.Options{Dir: dir, Run: os.Getenv(testsvc.RunEnv)}
	s, err := testsvc.Postgres(context.Background(), o, zerolog.Nop(), dropLeftovers)
	if err != nil {
		t.Fatal(err)
	}
	testsvc.PrintResult(s)
}

func query(ctx context.Context, t *testing.T, dsn, q string, dest any) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, q).Scan(dest); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func mustExec(ctx context.Context, t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	if err := exec(ctx, dsn, stmts...); err != nil {
		t.Fatal(err)
	}
}
