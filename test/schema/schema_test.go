// Package schema checks the database itself: every tenant table behind forced row-level
// security, roles that cannot bypass it, migrations that match the ent schemas and apply safely
// twice and in parallel.
package schema

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"ariga.io/atlas/sql/migrate"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSchema_EveryTenantTableHasPolicy fails when a table that holds company data (companies
// and every table with company_id, from the catalog) lacks ENABLE or FORCE ROW LEVEL SECURITY
// or a company_isolation policy that filters on the pinned company: for every command, for
// the app role, USING (and WITH CHECK, if given) "company column = app_current_company()", and
// app_current_company() reading app.company_id. (It checked the policy's name only: a
// company_isolation USING (true) passed.) No other permissive policy may widen what the app
// role sees (permissive policies are OR-ed: one USING (true) opens the table).
func TestSchema_EveryTenantTableHasPolicy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := open(t, env.OwnerURL)
	var pinned string
	if err := db.QueryRow(`SELECT btrim(p.prosrc) || CASE WHEN p.prosecdef THEN ' SECURITY DEFINER' ELSE '' END
		FROM pg_proc p WHERE p.oid = 'public.app_current_company()'::regprocedure`).Scan(&pinned); err != nil {
		t.Fatal(err)
	}
	if want := "SELECT NULLIF(current_setting('app.company_id', true), '')::uuid"; pinned != want {
		t.Errorf("app_current_company() is %q, want %q: the policies compare with it", pinned, want)
	}
	tenant := map[string]bool{}
	for _, table := range env.TenantTables(t) {
		tenant[table.Name] = true
		var enabled, forced bool
		if err := db.QueryRow(`SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = $1::regclass`,
			"public."+table.Name).Scan(&enabled, &forced); err != nil {
			t.Fatal(err)
		}
		var policy struct {
			permissive, appRole bool
			cmd, using, check   string
		}
		err := db.QueryRow(`SELECT p.polpermissive, p.polcmd::text,
			       0 = ANY (p.polroles) OR $2::regrole = ANY (p.polroles),
			       coalesce(pg_get_expr(p.polqual, p.polrelid), ''), coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '')
			FROM pg_policy p WHERE p.polrelid = $1::regclass AND p.polname = 'company_isolation'`,
			"public."+table.Name, migrations.RoleApp).Scan(&policy.permissive, &policy.cmd, &policy.appRole, &policy.using, &policy.check)
		if errors.Is(err, sql.ErrNoRows) {
			t.Errorf("table %s: no company_isolation policy; call app_enable_tenant_rls in its migration", table.Name)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !enabled || !forced {
			t.Errorf("table %s: rls enabled=%v forced=%v; call app_enable_tenant_rls in its migration", table.Name, enabled, forced)
		}
		// Without WITH CHECK, PostgreSQL checks new rows with USING.
		want := "(" + table.Column + " = app_current_company())"
		if !policy.permissive || policy.cmd != "*" || !policy.appRole || policy.using != want || (policy.check != want && policy.check != "") {
			t.Errorf("table %s: company_isolation is permissive=%v FOR %q, for the app role %v, USING %s WITH CHECK %s; "+
				"want a permissive policy FOR ALL, for PUBLIC or the app role, USING (and WITH CHECK, if any) %s",
				table.Name, policy.permissive, policy.cmd, policy.appRole, policy.using, policy.check, want)
		}
	}
	// Permissive policies the app role is subject to (TO PUBLIC, to it or to a role whose
	// privileges it has), besides company_isolation.
	rows, err := db.Query(`SELECT c.relname || '.' || p.polname, coalesce(pg_get_expr(p.polqual, p.polrelid), '')
		FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND p.polpermissive AND p.polname <> 'company_isolation'
		  AND EXISTS (SELECT FROM unnest(p.polroles) r WHERE r = 0 OR pg_has_role($1, r, 'USAGE'))`, migrations.RoleApp)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name, using string
		if err := rows.Scan(&name, &using); err != nil {
			t.Fatal(err)
		}
		seen[name] = true
		if _, ok := widerPolicies[name]; !ok && tenant[strings.SplitN(name, ".", 2)[0]] {
			t.Errorf("policy %s (USING %s) admits rows to the app role besides company_isolation: make it RESTRICTIVE, "+
				"give it to another role, or list it in widerPolicies with the reason", name, using)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range widerPolicies {
		if !seen[name] {
			t.Errorf("widerPolicies lists %s, which no longer exists: delete the line", name)
		}
	}

	// A table with neither company_id nor a place on an allow-list is a table nobody reviewed.
	// job_runs: cluster-wide job bookkeeping, no company data, reached only by maintenance_purge.
	// insurers: the platform's insurer catalog (app role reads it, the operator writes it).
	var others []string
	orows, err := db.Query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname NOT IN ('companies', 'goose_db_version', 'job_runs', 'insurers')
		  AND NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'company_id')`)
	if err != nil {
		t.Fatal(err)
	}
	defer orows.Close()
	for orows.Next() {
		var n string
		if err := orows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		others = append(others, n)
	}
	if err := orows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(others) > 0 {
		t.Errorf("tables without company_id (not tenant data?): %v; give them company_id and RLS or list them here with the reason", others)
	}
}

// widerPolicies are the permissive policies besides company_isolation that admit rows of a
// tenant table to the app role, and why. None since issue 20 item 1 dropped the authorization
// server's oauth_server policies (its app.oauth switch could be set by any session).
var widerPolicies = map[string]string{}

// TestSchema_AppRoleCannotBypassRLS checks the role the server works as.
func TestSchema_AppRoleCannotBypassRLS(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := open(t, env.AppURL)
	var user string
	var super, bypass bool
	if err := db.QueryRow(`SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`).
		Scan(&user, &super, &bypass); err != nil {
		t.Fatal(err)
	}
	if user != migrations.RoleApp || super || bypass {
		t.Errorf("server role %s superuser=%v bypassrls=%v; want %s, neither", user, super, bypass, migrations.RoleApp)
	}
	var owned int
	if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE tableowner = current_user`).Scan(&owned); err != nil {
		t.Fatal(err)
	}
	if owned != 0 {
		t.Errorf("the app role owns %d tables; owners bypass RLS unless forced", owned)
	}
	if _, err := db.Exec(`SELECT key_id FROM auth_credential('\x00'::bytea, '{}')`); err != nil {
		t.Errorf("the app role cannot call auth_credential: %v", err)
	}
	// auth_owner_ids reads the delegations of any company as brokerdesk_auth when the lookups
	// call it; the app role must not be able to ask it about another company.
	if _, err := db.Exec(`SELECT auth_owner_ids(gen_random_uuid(), gen_random_uuid(), 'agent', '{}')`); err == nil ||
		!strings.Contains(err.Error(), "permission denied") {
		t.Errorf("the app role calls auth_owner_ids: %v, want permission denied", err)
	}
}

// TestSchema_MigrationsMatchEnt fails when ent/schema changed without a migration (or the
// reverse), and when atlas.sum does not match the files.
func TestSchema_MigrationsMatchEnt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgtest.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	devURL, drop, err := pgtest.EmptyDatabase(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	dir := t.TempDir()
	entries, err := os.ReadDir("../../migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile("../../migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+e.Name(), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err = migrations.Diff(ctx, open(t, devURL), dir, "drift", true)
	if !errors.Is(err, migrate.ErrNoPlan) {
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if f.Name() != "atlas.sum" {
				if _, err := os.Stat("../../migrations/" + f.Name()); os.IsNotExist(err) {
					b, _ := os.ReadFile(dir + "/" + f.Name())
					t.Logf("the ent schemas need this migration:\n%s", b)
				}
			}
		}
		t.Fatalf("ent schemas and migrations differ (run go tool task migration NAME=...): %v", err)
	}
}

// TestSchema_MigrateTwiceAndInParallel runs Up from three goroutines on one fresh database,
// then once more.
func TestSchema_MigrateTwiceAndInParallel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgtest.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url, drop, err := pgtest.EmptyDatabase(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	applied := make([]int, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sql.Open("pgx", url)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			res, err := migrations.Up(ctx, db, "")
			errs[i], applied[i] = err, len(res)
		}()
	}
	wg.Wait()
	total := 0
	for i := range 3 {
		if errs[i] != nil {
			t.Errorf("migrator %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	files, _ := os.ReadDir("../../migrations")
	want := 0
	for _, f := range files {
		if len(f.Name()) > 4 && f.Name()[len(f.Name())-4:] == ".sql" {
			want++
		}
	}
	if total != want {
		t.Errorf("parallel migrators applied %d files in all, want each of %d once", total, want)
	}
	res, err := migrations.Up(ctx, open(t, url), "")
	if err != nil || len(res) != 0 {
		t.Errorf("second run: applied %v, err %v; want nothing", res, err)
	}
}

// TestSchema_RiverQueue checks the job queue's tables: in their own schema (outside tenant RLS
// and the ent drift check), the jobs role may work rows but not change the schema nor read
// river's migration bookkeeping; the app role, which request work runs as, may not touch them
// (job arguments name companies).
func TestSchema_RiverQueue(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	var appRiver bool
	if err := open(t, env.AppURL).QueryRow(`SELECT has_schema_privilege('river', 'USAGE')`).Scan(&appRiver); err != nil || appRiver {
		t.Errorf("the app role has USAGE on schema river (%v): request work must not reach the job queue", err)
	}
	db := open(t, env.Config.JobsDatabaseURL)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename IN ('river_job', 'river_leader', 'river_queue')`,
		migrations.RiverSchema).Scan(&n); err != nil || n != 3 {
		t.Fatalf("river tables in schema %s: %d (%v)", migrations.RiverSchema, n, err)
	}
	for _, q := range []struct {
		sql  string
		want bool
	}{
		{`SELECT has_table_privilege('river.river_job', 'INSERT, SELECT, UPDATE, DELETE')`, true},
		{`SELECT has_table_privilege('river.river_job', 'TRUNCATE') OR has_table_privilege('river.river_job', 'TRIGGER')`, false},
		{`SELECT has_table_privilege('river.river_migration', 'SELECT')`, false},
		{`SELECT has_schema_privilege('river', 'CREATE')`, false},
		{`SELECT EXISTS (SELECT FROM pg_tables WHERE schemaname = 'river' AND tableowner = current_user)`, false},
	} {
		var got bool
		if err := db.QueryRow(q.sql).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		if got != q.want {
			t.Errorf("%s = %v, want %v", q.sql, got, q.want)
		}
	}
}
