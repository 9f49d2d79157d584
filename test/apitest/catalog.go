package apitest

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/migrations"
)

// TenantTable is a table that holds company data; Column names the row's company (company_id,
// or id for companies itself).
type TenantTable struct{ Name, Column string }

// TenantTables lists, from the catalog, companies and every table of schema public with a
// company_id column, by name: a table added later is covered by the tests that range over
// them without anyone listing it.
func (e *Env) TenantTables(t testing.TB) []TenantTable {
	t.Helper()
	rows, err := e.OwnerDB.QueryContext(context.Background(), `
		SELECT c.relname, CASE WHEN c.relname = 'companies' THEN 'id' ELSE 'company_id' END
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
		  AND (c.relname = 'companies' OR EXISTS (SELECT FROM pg_catalog.pg_attribute a
		       WHERE a.attrelid = c.oid AND a.attname = 'company_id' AND NOT a.attisdropped))
		ORDER BY c.relname`)
	if err != nil {
		t.Fatalf("tenant tables: %v", err)
	}
	defer rows.Close()
	var out []TenantTable
	for rows.Next() {
		var tt TenantTable
		if err := rows.Scan(&tt.Name, &tt.Column); err != nil {
			t.Fatalf("tenant tables: %v", err)
		}
		out = append(out, tt)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("tenant tables: %v", err)
	}
	if len(out) < 4 {
		t.Fatalf("found %d tenant tables, want at least companies, users, api_keys, external_refs", len(out))
	}
	return out
}

// Explain returns EXPLAIN (ANALYZE, BUFFERS) of query with args, run as the app role pinned as
// a request of user (uuid.Nil: a company-level credential) with visibility vis is, after the
// statements setup ran as the owner, in a transaction it rolls back: setup may ANALYZE a table
// (statistics as autovacuum would have them), drop an index or change a function to show the
// plan before a migration.
func (e *Env) Explain(t testing.TB, company, user uuid.UUID, vis, query string, args []any, setup ...string) string {
	t.Helper()
	ctx := context.Background()
	tx, err := e.OwnerDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, s := range setup {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	usr := ""
	if user != uuid.Nil {
		usr = user.String()
	}
	if _, err := tx.ExecContext(ctx, `SELECT set_config('role', $1, true), set_config('app.company_id', $2, true),
		set_config('app.user_id', $3, true), set_config('app.visibility', $4, true)`,
		migrations.RoleApp, company.String(), usr, vis); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		out = append(out, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}
