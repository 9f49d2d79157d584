package isolation

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/ent/portfoliomapping"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// rawRoutes mounts test-only routes that run SQL inside the request's pinned transaction,
// below the ent privacy layer. A refused statement answers 409 with PostgreSQL's message and
// SQLSTATE, so that a test tells "row-level security refused it" from "the role may not".
func rawRoutes(v1 fiber.Router, m app.Middleware) {
	refused := func(err error) error { return fiber.NewError(fiber.StatusConflict, err.Error()) }
	// Every row's company of a table, as SQL in the request sees it.
	v1.Get("/_test/raw/:table", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		table, col := c.Params("table"), "company_id"
		if table == "companies" {
			col = "id"
		}
		rows, err := tenancy.Client(ctx).QueryContext(ctx,
			"SELECT "+pgx.Identifier{col}.Sanitize()+"::text FROM "+pgx.Identifier{"public", table}.Sanitize())
		if err != nil {
			return refused(err)
		}
		defer rows.Close()
		ids := []string{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return refused(err)
		}
		return c.JSON(ids)
	})
	// Ent with its privacy rules switched off: only RLS stands between the request and B's rows.
	v1.Get("/_test/bypass/users", m.Auth, func(c *fiber.Ctx) error {
		ctx := privacy.DecisionContext(c.UserContext(), privacy.Allow)
		us, err := tenancy.Client(ctx).User.Query().All(ctx)
		if err != nil {
			return err
		}
		ids := []string{}
		for _, u := range us {
			ids = append(ids, u.CompanyID.String())
		}
		return c.JSON(ids)
	})
	// An UPDATE of the portfolio mappings of the company in the path, privacy bypassed: a table
	// the app role may update, with no policy but company_isolation, so the row count is what
	// that policy let through.
	v1.Post("/_test/bypass/portfolio-mappings/:companyId", m.Auth, func(c *fiber.Ctx) error {
		ctx := privacy.DecisionContext(c.UserContext(), privacy.Allow)
		co, err := uuid.Parse(c.Params("companyId"))
		if err != nil {
			return err
		}
		n, err := tenancy.Client(ctx).PortfolioMapping.Update().Where(portfoliomapping.CompanyID(co)).SetName("pwned").Save(ctx)
		if err != nil {
			return refused(err)
		}
		return c.JSON(fiber.Map{"updated": n})
	})
	// The app role may not write users, whatever the company (least privilege under RLS).
	v1.Post("/_test/bypass/users/:companyId", m.Auth, func(c *fiber.Ctx) error {
		ctx := privacy.DecisionContext(c.UserContext(), privacy.Allow)
		other, err := uuid.Parse(c.Params("companyId"))
		if err != nil {
			return err
		}
		_, err = tenancy.Client(ctx).User.Update().Where(user.CompanyID(other)).SetFirstName("pwned").Save(ctx)
		if err != nil {
			return refused(err)
		}
		return c.JSON(fiber.Map{"updated": 1})
	})
	// An INSERT of a row of the company in the path (WITH CHECK of company_isolation).
	v1.Post("/_test/raw-insert/:companyId", m.Auth, func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		_, err := tenancy.Client(ctx).ExecContext(ctx,
			"INSERT INTO external_refs (id, resource, resource_id, source, external_id, company_id) VALUES ($1, 'user', $1, 'x', $2, $3)",
			uuid.New(), uuid.NewString(), c.Params("companyId"))
		if err != nil {
			return refused(err)
		}
		return c.JSON(fiber.Map{"inserted": 1})
	})
}

// TestIsolation_BelowTheAPI: underneath the endpoints, with rows of both companies in every
// tenant table the catalog lists (seedEveryTable), SQL in company A's request transaction
// reads, changes and adds A's rows only, also with the ent privacy layer switched off, and the
// app role with no company pinned sees nothing. Every refusal has its positive control (the
// same statement on A's own rows works), so that a policy which filters nothing (say
// company_isolation recreated USING (true)) fails here instead of passing on an empty table or
// on a statement the role may not run at all (the earlier probe was an UPDATE of lead_stages,
// which the app role lost: "permission denied", read as "0 rows updated").
func TestIsolation_BelowTheAPI(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(rawRoutes))
	ctx := context.Background()
	a, b := env.NewCompany(t), env.NewCompany(t)
	seedEveryTable(t, env, a)
	seedEveryTable(t, env, b)
	tables := env.TenantTables(t)

	// rows counts company's rows of table (plus the condition and), as the operator role,
	// whose policy admits every row: what is there, whatever the app role may see.
	rows := func(table apitest.TenantTable, company uuid.UUID, and string) (int, error) {
		var n int
		err := env.Operator(ctx, company, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, "SELECT count(*) FROM "+pgx.Identifier{"public", table.Name}.Sanitize()+
				" WHERE "+pgx.Identifier{table.Column}.Sanitize()+" = $1"+and, company).Scan(&n)
		})
		return n, err
	}
	count := func(t *testing.T, table apitest.TenantTable, company uuid.UUID, and string) int {
		t.Helper()
		n, err := rows(table, company, and)
		if err != nil {
			t.Fatalf("count %s of company %s: %v", table.Name, company, err)
		}
		return n
	}
	// appReads: may the app role read the table's company column at all? Where it may not
	// (api_keys, test/schema appPrivileges), every read below must be refused.
	appReads := func(t *testing.T, table apitest.TenantTable) bool {
		t.Helper()
		var ok bool
		if err := env.OwnerDB.QueryRowContext(ctx, "SELECT has_column_privilege($1, $2::regclass, $3, 'SELECT')",
			migrations.RoleApp, pgx.Identifier{"public", table.Name}.Sanitize(), table.Column).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	denied := func(err error) bool { return err != nil && strings.Contains(err.Error(), "permission denied") }

	// B's rows exist before anything below claims they are invisible.
	t.Run("every tenant table holds rows of both companies", func(t *testing.T) {
		for _, table := range tables {
			for _, co := range []uuid.UUID{a.ID, b.ID} {
				switch n, err := rows(table, co, ""); {
				case err != nil:
					t.Errorf("%s: cannot count company %s's rows as the operator role (%v): a new tenant table needs the "+
						"grants and policies of the others (test/schema) and a row in seedEveryTable (seed_test.go)", table.Name, co, err)
				case n == 0:
					t.Errorf("%s: no row of company %s, so the checks below prove nothing for it: give it a row in "+
						"seedEveryTable (seed_test.go)", table.Name, co)
				}
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("raw SQL in A's request transaction sees all of A's rows and none of B's", func(t *testing.T) {
		for _, table := range tables {
			r := env.Do(t, apitest.Request{Path: "/_test/raw/" + table.Name, Key: a.Secret})
			if !appReads(t, table) {
				if r.Status != 409 || !strings.Contains(string(r.Body), "permission denied") {
					t.Errorf("%s: the app role may not read it, yet A's request got %d %s", table.Name, r.Status, r.Body)
				}
				continue
			}
			if r.Status != 200 {
				t.Errorf("%s: status %d: %s", table.Name, r.Status, r.Body)
				continue
			}
			var ids []string
			r.Decode(t, &ids)
			own := 0
			for _, id := range ids {
				if id == a.ID.String() {
					own++
				} else {
					t.Errorf("%s: A's transaction saw a row of company %s", table.Name, id)
				}
			}
			if want := count(t, table, a.ID, ""); own != want {
				t.Errorf("%s: A's transaction saw %d of A's %d rows", table.Name, own, want)
			}
		}
	})

	t.Run("the app role with no company pinned sees nothing", func(t *testing.T) {
		for _, table := range tables {
			var n int
			err := env.AppDB.QueryRowContext(ctx, "SELECT count(*) FROM "+pgx.Identifier{"public", table.Name}.Sanitize()).Scan(&n)
			switch {
			case !appReads(t, table):
				if !denied(err) {
					t.Errorf("%s: the app role may not read it, yet: %d rows, %v", table.Name, n, err)
				}
			case err != nil:
				t.Errorf("%s: %v", table.Name, err)
			case n != 0:
				t.Errorf("%s: the app role with no company sees %d rows", table.Name, n)
			}
		}
		// Pinned in a transaction it sees the company's users (the positive control), and the
		// setting does not outlive the transaction on the connection.
		users := apitest.TenantTable{Name: "users", Column: "company_id"}
		conn, err := env.AppDB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', $1, true)", a.ID.String()); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil || n != count(t, users, a.ID, "") {
			t.Errorf("pinned transaction saw %d users (%v), want A's %d", n, err, count(t, users, a.ID, ""))
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var setting string
		if err := conn.QueryRowContext(ctx, "SELECT coalesce(current_setting('app.company_id', true), '')").Scan(&setting); err != nil {
			t.Fatal(err)
		}
		if setting != "" {
			t.Errorf("app.company_id outlived its transaction: %q", setting)
		}
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil || n != 0 {
			t.Errorf("after the transaction the connection sees %d users (%v), want none", n, err)
		}
	})

	t.Run("with ent privacy bypassed RLS still holds", func(t *testing.T) {
		users := apitest.TenantTable{Name: "users", Column: "company_id"}
		r := env.Do(t, apitest.Request{Path: "/_test/bypass/users", Key: a.Secret})
		if r.Status != 200 {
			t.Fatalf("bypass read: %d %s", r.Status, r.Body)
		}
		var ids []string
		r.Decode(t, &ids)
		if want := count(t, users, a.ID, ""); len(ids) != want {
			t.Errorf("bypass saw %d users, want A's %d: %v", len(ids), want, ids)
		}
		for _, id := range ids {
			if id != a.ID.String() {
				t.Errorf("bypass saw a user of company %s", id)
			}
		}

		// UPDATE: none of B's rows is reached, every one of A's is (else the probe could not
		// tell row-level security from a statement that updates nothing).
		mappings := apitest.TenantTable{Name: "portfolio_mappings", Column: "company_id"}
		update := func(company uuid.UUID) int {
			t.Helper()
			r := env.Do(t, apitest.Request{Method: "POST", Path: "/_test/bypass/portfolio-mappings/" + company.String(), Key: a.Secret})
			if r.Status != 200 {
				t.Fatalf("A's request updating company %s's portfolio mappings: %d %s", company, r.Status, r.Body)
			}
			var res struct{ Updated int }
			r.Decode(t, &res)
			return res.Updated
		}
		if n := update(b.ID); n != 0 {
			t.Errorf("A updated %d of B's portfolio mappings", n)
		}
		if n := count(t, mappings, b.ID, " AND name = 'pwned'"); n != 0 {
			t.Errorf("%d of B's portfolio mappings renamed from A's request", n)
		}
		if n, want := update(a.ID), count(t, mappings, a.ID, ""); n != want {
			t.Errorf("A updated %d of its own %d portfolio mappings, want all (the positive control)", n, want)
		}

		// INSERT: a row of B is refused by the policy (not by a privilege), one of A is taken.
		r = env.Do(t, apitest.Request{Method: "POST", Path: "/_test/raw-insert/" + b.ID.String(), Key: a.Secret})
		if r.Status != 409 || !strings.Contains(string(r.Body), "row-level security") {
			t.Errorf("raw insert of a B row from A's transaction: %d %s, want refused by row-level security", r.Status, r.Body)
		}
		if r := env.Do(t, apitest.Request{Method: "POST", Path: "/_test/raw-insert/" + a.ID.String(), Key: a.Secret}); r.Status != 200 {
			t.Errorf("raw insert of an A row from A's transaction: %d %s, want taken (the positive control)", r.Status, r.Body)
		}

		// The app role may not write users at all, whatever the company.
		if r := env.Do(t, apitest.Request{Method: "POST", Path: "/_test/bypass/users/" + b.ID.String(), Key: a.Secret}); r.Status != 409 ||
			!strings.Contains(string(r.Body), "permission denied") {
			t.Errorf("the app role wrote users: status %d: %s", r.Status, r.Body)
		}
		if n := count(t, users, b.ID, " AND first_name = 'pwned'"); n != 0 {
			t.Errorf("%d of B's users changed from A's request", n)
		}
	})
}
