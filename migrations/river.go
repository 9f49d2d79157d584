package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// RiverSchema holds the tables of the job queue (github.com/riverqueue/river). They carry no
// company data (job arguments are ids only) and live outside tenant row-level security, in
// their own schema, so the ent drift check and the tenant-table checks of public never see them.
const RiverSchema = "river"

// riverLock serialises concurrent `migrate` runs around river's migrator (goose's own lock is
// released when Up gets here). Any fixed 64-bit number nothing else uses.
const riverLock = 0x62645f7269766572 // "bd_river"

// upRiver applies river's own migrations (rivermigrate, the versions of the river module in
// go.mod) into RiverSchema and grants the job queue's role (RoleJobs) what the queue needs: rows
// of the queue tables and their sequences, nothing on river_migration, no DDL. The app role,
// which request work runs as, gets nothing there (it had it all before issue 20: job arguments
// name companies), so whatever was granted to it is revoked every time. River's reindexer is off in
// the app (app/jobs), since REINDEX needs ownership. River applies each of its versions in a
// transaction of its own (some add enum values, which PostgreSQL refuses to use in the
// transaction that added them); a session advisory lock held on another connection keeps two
// `migrate` runs from interleaving.
func upRiver(ctx context.Context, db *sql.DB) error {
	lock, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(riverLock)); err != nil {
		return err
	}
	defer lock.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", int64(riverLock)) //nolint:errcheck // the session ends with Close anyway
	var connString string
	if err := lock.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("river migrations: want a pgx connection, got %T", dc)
		}
		connString = sc.Conn().Config().ConnString()
		return nil
	}); err != nil {
		return err
	}
	pcfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return err
	}
	pcfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+RiverSchema); err != nil {
		return err
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{
		Schema: RiverSchema, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	for _, s := range []string{
		"REVOKE ALL ON SCHEMA " + RiverSchema + " FROM PUBLIC",
		"REVOKE ALL ON ALL TABLES IN SCHEMA " + RiverSchema + " FROM " + RoleApp,
		"REVOKE ALL ON ALL SEQUENCES IN SCHEMA " + RiverSchema + " FROM " + RoleApp,
		"REVOKE ALL ON SCHEMA " + RiverSchema + " FROM " + RoleApp,
		"GRANT USAGE ON SCHEMA " + RiverSchema + " TO " + RoleJobs,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + RiverSchema + " TO " + RoleJobs,
		"REVOKE ALL ON " + RiverSchema + ".river_migration FROM " + RoleJobs,
		"GRANT USAGE ON ALL SEQUENCES IN SCHEMA " + RiverSchema + " TO " + RoleJobs,
	} {
		if _, err := pool.Exec(ctx, s); err != nil {
			return fmt.Errorf("river grants: %s: %w", s, err)
		}
	}
	return nil
}
