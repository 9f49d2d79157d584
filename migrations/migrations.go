// Package migrations holds the versioned SQL schema: files generated from the ent schemas
// (cmd/migdiff) and hand-written files for roles, row-level security and composite keys, all in
// goose format, checksummed in atlas.sum. Up applies them.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS

// Database roles. They are cluster-wide, so EnsureRoles creates them idempotently before the
// per-database migrations that grant to them.
const (
	// RoleApp is the login role the server does request work as: it owns no table, is no
	// superuser and has no BYPASSRLS, so row-level security always applies to it.
	RoleApp = "brokerdesk_app"
	// RoleAuth owns the SECURITY DEFINER function that looks up credentials before a company is
	// known; a policy lets it read api_keys, companies and users of every company.
	RoleAuth = "brokerdesk_auth"
	// RoleOperator is taken (SET LOCAL ROLE) by operator commands; policies let it see every
	// company. The server never takes it.
	RoleOperator = "brokerdesk_operator"
	// RoleMaintainer owns the tables a portfolio commit grows and the SECURITY DEFINER function
	// that analyses them (ANALYZE needs the owner before PostgreSQL 17): no superuser does
	// (migration 20261127110100). Nobody logs in as it.
	RoleMaintainer = "brokerdesk_maintainer"
	// RoleJobs is the login role of the job queue's pool (app/jobs): the app role's rights
	// (it is a member and inherits them, policies included) plus river's tables and
	// webhook_pending_companies, which request work has no use for and which name companies
	// (job arguments carry company ids). Request work never connects as it.
	RoleJobs = "brokerdesk_jobs"
	// RolePortal is taken (SET LOCAL ROLE) by a customer's portal request (tenancy.WithPortal):
	// it may read what a customer sees and write the portal's own rows, nothing else (no keys,
	// users, webhooks, leads, tasks), and policies narrow it to its one contact. The app role is
	// a member without inheriting its rights (the app role is NOINHERIT).
	RolePortal = "brokerdesk_portal"
)

// EnsureRoles creates the roles when they are missing and lets the migrating role act as
// RoleAuth, RoleOperator and RoleMaintainer (a migration that alters the maintainer's tables
// needs to). appPassword, when not empty, becomes the password of RoleApp and RoleJobs (the
// server's two login roles; one secret to configure, APP_DB_PASSWORD).
func EnsureRoles(ctx context.Context, db *sql.DB, appPassword string) error {
	stmts := []string{
		createRole(RoleApp, "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT"),
		createRole(RoleAuth, "NOLOGIN NOSUPERUSER NOBYPASSRLS"),
		createRole(RoleOperator, "NOLOGIN NOSUPERUSER NOBYPASSRLS"),
		createRole(RoleMaintainer, "NOLOGIN NOSUPERUSER NOBYPASSRLS"),
		createRole(RoleJobs, "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE INHERIT"),
		createRole(RolePortal, "NOLOGIN NOSUPERUSER NOBYPASSRLS"),
		"GRANT " + RoleApp + " TO " + RoleJobs,
		"GRANT " + RolePortal + " TO " + RoleApp,
		"GRANT " + RoleAuth + ", " + RoleOperator + ", " + RoleMaintainer + " TO CURRENT_USER",
	}
	if appPassword != "" {
		// ALTER ROLE takes no bind parameters: send a SCRAM-SHA-256 verifier computed here, so
		// the password never appears in SQL text (statement logs, pg_stat_statements).
		for _, role := range []string{RoleApp, RoleJobs} {
			v, err := newScramVerifier(appPassword)
			if err != nil {
				return fmt.Errorf("ensure roles: %w", err)
			}
			stmts = append(stmts, "ALTER ROLE "+role+" PASSWORD '"+v+"'") // base64, '$', ':' and digits only
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("ensure roles: %w", err)
		}
	}
	return nil
}

// createRole is a CREATE ROLE that tolerates a concurrent creator (two databases migrating at
// once on one cluster).
func createRole(name, opts string) string {
	return fmt.Sprintf(`DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%[1]s') THEN
    CREATE ROLE %[1]s %[2]s;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$`, name, opts)
}

// Up creates the roles and applies every pending migration, then river's (upRiver). It is safe to run twice and from
// two processes at once: goose holds a PostgreSQL advisory lock while it migrates.
func Up(ctx context.Context, db *sql.DB, appPassword string) ([]string, error) {
	if err := EnsureRoles(ctx, db, appPassword); err != nil {
		return nil, err
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, FS, goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	applied := make([]string, 0, len(res))
	for _, r := range res {
		applied = append(applied, r.Source.Path)
	}
	if err := upRiver(ctx, db); err != nil {
		return applied, err
	}
	if err := SecureDatabase(ctx, db); err != nil {
		return applied, err
	}
	return applied, nil
}

// SecureDatabase revokes TEMPORARY on the current database from PUBLIC. The migration
// 20261124010000_hardening does it once, but database privileges live in pg_database, not in
// the database: a database created from a template or restored from a dump starts with the
// default ACL (PUBLIC may create temporary objects) again. Up runs it every time, and so do the
// tests for every database they clone. Temporary objects could shadow tables inside SECURITY
// DEFINER functions that forgot to pin search_path; the app role needs none.
func SecureDatabase(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx,
		`DO $$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database()); END $$`); err != nil {
		return fmt.Errorf("revoke temporary: %w", err)
	}
	return nil
}
