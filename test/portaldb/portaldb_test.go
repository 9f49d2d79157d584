// Package portaldb tests the database layer of the customer portal (issue 23): a transaction
// pinned like a portal session (the role brokerdesk_portal, app.visibility 'portal:<contact>')
// sees its own contact and what hangs off it, and nothing else, even when it asks for another
// contact's rows by id, with ent as the portal uses it and in raw SQL without ent's rules.
package portaldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// rows of one contact, by table.
type rows struct {
	contact, contract, released, unreleased, access, session, change uuid.UUID
}

// world: company A with the customer x and another contact y (both with portal accounts),
// company B with z.
type world struct {
	env     *apitest.Env
	a, b    *apitest.Company
	x, y, z rows
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := apitest.New(t)
	w := &world{env: env, a: env.NewCompany(t, "customer_portal"), b: env.NewCompany(t, "customer_portal")}
	w.x = w.customer(t, w.a, "Xaver")
	w.y = w.customer(t, w.a, "Yvonne")
	w.z = w.customer(t, w.b, "Zora")
	return w
}

// customer makes a contact of co with a contract, a released and an unreleased document, a
// portal access with a session and a pending change request.
func (w *world) customer(t *testing.T, co *apitest.Company, name string) rows {
	t.Helper()
	env := w.env
	var r rows
	r.contact = uuid.MustParse(apitest.Create[struct{ ID string }](t, env, co.Secret, "/contacts",
		map[string]any{"type": "private", "firstName": name, "lastName": "Kunde"}).ID)
	var ins struct{ Data []struct{ ID string } }
	env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: co.Secret}).Decode(t, &ins)
	r.contract = uuid.MustParse(apitest.Create[struct{ ID string }](t, env, co.Secret, "/contracts", map[string]any{
		"contactId": r.contact.String(), "insurerId": ins.Data[0].ID, "policyNumber": "P-" + name, "type": "020",
		"status": "active"}).ID)
	r.released = uuid.MustParse(apitest.UploadPDF(t, env, co.Secret, r.contact.String(), name+"-frei.pdf"))
	release(t, env, co.Secret, r.released)
	r.unreleased = uuid.MustParse(apitest.UploadPDF(t, env, co.Secret, r.contact.String(), name+"-intern.pdf"))
	c := portaltest.SignIn(t, env, co.ID, r.contact)
	r.access, r.session = c.Access, c.Session
	r.change = portaltest.ChangeRequest(t, env, c, strings.ToLower(name)+"@neu.test")
	return r
}

// release releases document id through the API.
func release(t *testing.T, env *apitest.Env, key string, id uuid.UUID) {
	t.Helper()
	path := "/documents/" + id.String()
	etag := env.Do(t, apitest.Request{Path: path, Key: key}).Header.Get("ETag")
	r := env.Do(t, apitest.Request{Method: "PATCH", Path: path, Key: key, Body: `{"releasedToCustomer":true}`,
		Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": etag}})
	if r.Status != 200 {
		t.Fatalf("release %s: %d %s", id, r.Status, r.Body)
	}
}

// portalTx runs fn in a raw SQL transaction of the app role pinned as tenancy.PinPortal pins a
// portal session (role, company, no user, visibility 'portal:<contact>'), and rolls it back.
func portalTx(t *testing.T, env *apitest.Env, company, contact uuid.UUID, fn func(tx *sql.Tx)) {
	t.Helper()
	tx, err := env.AppDB.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`SELECT set_config('role', $1, true), set_config('app.company_id', $2, true),
		set_config('app.user_id', '', true), set_config('app.visibility', $3, true)`,
		migrations.RolePortal, company.String(), "portal:"+contact.String()); err != nil {
		t.Fatal(err)
	}
	fn(tx)
}

// count is the number of rows of table with id, or the error.
func count(tx *sql.Tx, table string, id uuid.UUID) (int, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&n)
	return n, err
}

// tables are the tables the portal role reads, with the id of each fixture row in them.
var tables = []struct {
	name string
	id   func(rows) uuid.UUID
}{
	{"contacts", func(r rows) uuid.UUID { return r.contact }},
	{"contracts", func(r rows) uuid.UUID { return r.contract }},
	{"documents", func(r rows) uuid.UUID { return r.released }},
	{"portal_accesses", func(r rows) uuid.UUID { return r.access }},
	{"portal_sessions", func(r rows) uuid.UUID { return r.session }},
	{"portal_change_requests", func(r rows) uuid.UUID { return r.change }},
}

// TestPortalDB_RawSQL: without ent, a transaction pinned to x sees x's rows and none of y's (same
// company) or z's (another company) when it selects them by id; x's unreleased document is
// invisible too. The own rows are the control: a pin that hid everything would pass the rest.
// Catches a policy that admits by company only, a portal visibility read as "all", and the
// released-documents policy missing.
func TestPortalDB_RawSQL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	portalTx(t, w.env, w.a.ID, w.x.contact, func(tx *sql.Tx) {
		for _, tb := range tables {
			for _, c := range []struct {
				who  string
				id   uuid.UUID
				want int
			}{{"own", tb.id(w.x), 1}, {"same company's other contact", tb.id(w.y), 0}, {"other company's", tb.id(w.z), 0}} {
				if n, err := count(tx, tb.name, c.id); err != nil || n != c.want {
					t.Errorf("%s, %s row: %d rows, %v; want %d", tb.name, c.who, n, err, c.want)
				}
			}
		}
		if n, err := count(tx, "documents", w.x.unreleased); err != nil || n != 0 {
			t.Errorf("own unreleased document: %d rows, %v; want 0", n, err)
		}
		var all int
		if err := tx.QueryRow(`SELECT count(*) FROM contacts`).Scan(&all); err != nil || all != 1 {
			t.Errorf("all contacts: %d, %v; want the own one only", all, err)
		}
		if err := tx.QueryRow(`SELECT count(*) FROM documents`).Scan(&all); err != nil || all != 1 {
			t.Errorf("all documents: %d, %v; want the own released one only", all, err)
		}
	})
}

// TestPortalDB_Ent: the same through ent as the portal runs it (tenancy.PinPortal on a company
// transaction): another contact's rows are not found by id, the own ones are. Catches the ent
// rules and the pin disagreeing (a rule that lets a query through the database then answers
// differently than the page expects).
func TestPortalDB_Ent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(w.env.AppDB)))
	ctx := tenancy.WithCompany(context.Background(), w.a.ID)
	tx, err := client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	pctx, err := tenancy.PinPortal(tenancy.WithTx(ctx, tx), w.a.ID, w.x.contact)
	if err != nil {
		t.Fatal(err)
	}
	db := tenancy.Client(pctx)
	get := map[string]func(uuid.UUID) error{
		"contact":        func(id uuid.UUID) error { _, err := db.Contact.Get(pctx, id); return err },
		"contract":       func(id uuid.UUID) error { _, err := db.Contract.Get(pctx, id); return err },
		"document":       func(id uuid.UUID) error { _, err := db.Document.Get(pctx, id); return err },
		"access":         func(id uuid.UUID) error { _, err := db.PortalAccess.Get(pctx, id); return err },
		"session":        func(id uuid.UUID) error { _, err := db.PortalSession.Get(pctx, id); return err },
		"change request": func(id uuid.UUID) error { _, err := db.PortalChangeRequest.Get(pctx, id); return err },
	}
	ids := map[string]func(rows) uuid.UUID{"contact": func(r rows) uuid.UUID { return r.contact },
		"contract": func(r rows) uuid.UUID { return r.contract }, "document": func(r rows) uuid.UUID { return r.released },
		"access": func(r rows) uuid.UUID { return r.access }, "session": func(r rows) uuid.UUID { return r.session },
		"change request": func(r rows) uuid.UUID { return r.change }}
	for name, g := range get {
		if err := g(ids[name](w.x)); err != nil {
			t.Errorf("own %s: %v", name, err)
		}
		for who, r := range map[string]rows{"same company's other contact": w.y, "other company's": w.z} {
			if err := g(ids[name](r)); !ent.IsNotFound(err) {
				t.Errorf("%s of %s: %v, want not found", name, who, err)
			}
		}
	}
	if err := get["document"](w.x.unreleased); !ent.IsNotFound(err) {
		t.Errorf("own unreleased document: %v, want not found", err)
	}
	if err := tenancy.ReadCompanyWide(pctx, func() error { return nil }); err == nil {
		t.Errorf("a portal transaction lifted its visibility")
	}
}

// TestPortalDB_Denied: the tables a customer has no business with are permission-denied for the
// role (not merely empty), as is a write the portal never makes. Catches a grant to the role
// (or to PUBLIC) on them.
func TestPortalDB_Denied(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, q := range []string{
		`SELECT count(*) FROM api_keys`, `SELECT count(*) FROM users`, `SELECT count(*) FROM webhook_endpoints`,
		`SELECT count(*) FROM leads`, `SELECT count(*) FROM tasks`, `SELECT count(*) FROM emails`,
		`SELECT count(*) FROM mailboxes`, `SELECT count(*) FROM portal_tokens`, `SELECT count(*) FROM external_refs`,
		`SELECT features FROM companies`,
		`UPDATE contacts SET first_name = 'x'`, `DELETE FROM documents`, `UPDATE documents SET released_at = now()`,
		`INSERT INTO contact_phones (id) VALUES (gen_random_uuid())`, `DELETE FROM portal_change_requests`,
	} {
		portalTx(t, w.env, w.a.ID, w.x.contact, func(tx *sql.Tx) {
			_, err := tx.Exec(q)
			var pg *pgconn.PgError
			if !errors.As(err, &pg) || pg.Code != "42501" {
				t.Errorf("%s: %v, want permission denied (42501)", q, err)
			}
		})
	}
}

// TestPortalDB_UpdateOtherChangeRequest: the role may update change requests (withdraw), but an
// UPDATE of another contact's, even by id, affects no row; the own one is the control. Catches
// an UPDATE policy looser than the SELECT one.
func TestPortalDB_UpdateOtherChangeRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	portalTx(t, w.env, w.a.ID, w.x.contact, func(tx *sql.Tx) {
		for _, c := range []struct {
			who  string
			id   uuid.UUID
			want int64
		}{{"same company's other contact", w.y.change, 0}, {"other company's", w.z.change, 0}, {"own", w.x.change, 1}} {
			res, err := tx.Exec(`UPDATE portal_change_requests SET status = 'withdrawn', withdrawn_at = now() WHERE id = $1`, c.id)
			if err != nil {
				t.Fatalf("%s: %v", c.who, err)
			}
			if n, _ := res.RowsAffected(); n != c.want {
				t.Errorf("UPDATE of the %s change request: %d rows, want %d", c.who, n, c.want)
			}
		}
		// Nor can the role move a row of its own to another contact.
		_, err := tx.Exec(`UPDATE portal_change_requests SET contact_id = $1 WHERE id = $2`, w.y.contact, w.x.change)
		if err == nil {
			t.Errorf("moving the own change request to another contact succeeded")
		}
	})
	var status string
	if err := w.env.OwnerDB.QueryRow(`SELECT status FROM portal_change_requests WHERE id = $1`, w.y.change).Scan(&status); err == nil &&
		status != "pending" {
		t.Errorf("the other contact's change request is %s", status)
	}
}

// TestPortalDB_CraftedVisibility: app.visibility 'portal:<id>' set without the role (the app
// role, as a bug in code other than the pin might) still cannot reach another company's rows,
// whichever contact it names: company isolation does not depend on the visibility. Catches a
// contacts policy whose portal branch skips the company check.
func TestPortalDB_CraftedVisibility(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	err := w.env.Pinned(context.Background(), w.a.ID, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`SELECT set_config('app.visibility', $1, true)`, "portal:"+w.z.contact.String()); err != nil {
			return err
		}
		for _, tb := range tables {
			n, err := count(tx, tb.name, tb.id(w.z))
			if err != nil {
				return fmt.Errorf("%s: %w", tb.name, err)
			}
			if n != 0 {
				t.Errorf("%s: company A's transaction naming company B's contact sees its row", tb.name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
