package apitest

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Company is a live company made for a test, with its sandbox twin, an admin user and keys.
type Company struct {
	ID          uuid.UUID
	SandboxID   uuid.UUID
	Admin       operator.User
	Secret      string // sk_live_, every scope, company-level
	TestSecret  string // sk_test_, every scope, acts on the sandbox twin
	Publishable string // pk_live_, bound to Admin
	env         *Env
}

var seq atomic.Int64

// NewCompany activates a company licensing features (default: leads) and issues its keys.
func (e *Env) NewCompany(t testing.TB, features ...string) *Company {
	t.Helper()
	if features == nil {
		features = []string{"leads"}
	}
	ctx := context.Background()
	n := seq.Add(1)
	co, err := e.Ops.CreateCompany(ctx, fmt.Sprintf("Makler %d GmbH", n), features)
	if err != nil {
		t.Fatalf("create company: %v", err)
	}
	c := &Company{ID: co.ID, SandboxID: co.SandboxID, env: e}
	c.Admin = e.NewUser(t, c, "admin")
	c.Secret = c.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive}).Secret
	c.TestSecret = c.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvTest}).Secret
	c.Publishable = c.Key(t, operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvLive,
		UserID: &c.Admin.ID, AllowedDomains: []string{"example.com"}}).Secret
	return c
}

// NewUser creates a user of role in c.
func (e *Env) NewUser(t testing.TB, c *Company, role string) operator.User {
	t.Helper()
	u, err := e.Ops.CreateUser(context.Background(), operator.NewUser{CompanyID: c.ID,
		Email: fmt.Sprintf("user%d@example.com", seq.Add(1)), FirstName: "Test", LastName: role, Role: role})
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	return u
}

// Key issues a key for c; in.CompanyID is filled in.
func (c *Company) Key(t testing.TB, in operator.NewKeyInput) operator.Key {
	t.Helper()
	in.CompanyID = c.ID
	k, err := c.env.Ops.CreateKey(context.Background(), in)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return k
}

// KeyWithScopes issues a live company-level secret key holding only scopes.
func (c *Company) KeyWithScopes(t testing.TB, scopes ...string) string {
	t.Helper()
	return c.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, Scopes: scopes}).Secret
}

// UserKey issues a live secret key bound to user u, holding scopes (default all).
func (c *Company) UserKey(t testing.TB, u operator.User, scopes ...string) string {
	t.Helper()
	return c.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, UserID: &u.ID, Scopes: scopes}).Secret
}

// Pinned runs fn in a transaction of the app role pinned to company, as a request's would be
// (RLS applies), and commits it when fn returns nil.
func (e *Env) Pinned(ctx context.Context, company uuid.UUID, fn func(tx *sql.Tx) error) error {
	tx, err := e.AppDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', $1, true)", company.String()); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Operator runs fn in a transaction of the operator role (SET LOCAL ROLE brokerdesk_operator on
// the owner's connection, as operator commands do) pinned to company, and commits it when fn
// returns nil. Fixtures the app role may not write (users, api_keys) go through it.
func (e *Env) Operator(ctx context.Context, company uuid.UUID, fn func(tx *sql.Tx) error) error {
	tx, err := e.OwnerDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT set_config('role', $1, true), set_config('app.company_id', $2, true)",
		migrations.RoleOperator, company.String()); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// UserIDs returns the ids of company's users whose e-mail starts with prefix, in e-mail order:
// the users InsertUsers seeded with that prefix.
func (e *Env) UserIDs(ctx context.Context, company uuid.UUID, prefix string) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := e.Operator(ctx, company, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM users WHERE starts_with(email, $1) ORDER BY email`, prefix)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id uuid.UUID
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	return ids, err
}

// AppDBSetUserStatus changes a user's status directly in the database as the operator role
// (no operator command exists for it yet; the app role may not write users).
func (e *Env) AppDBSetUserStatus(ctx context.Context, companyID, userID uuid.UUID, status string) (int64, error) {
	var n int64
	err := e.Operator(ctx, companyID, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE users SET status = $1 WHERE id = $2", status, userID)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// InsertUsers adds n users to a company straight in the database (fast fixtures for paging),
// as the operator role pinned to the company (the app role may not write users). Their e-mails
// are prefix<i>@example.com.
func (e *Env) InsertUsers(ctx context.Context, companyID uuid.UUID, prefix string, n int) error {
	return e.Operator(ctx, companyID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (id, company_id, email, first_name, last_name, status, role, version, created_at, updated_at)
			SELECT gen_random_uuid(), $1, $2 || i || '@example.com', 'F', 'L', 'active', 'agent', 1,
			       clock_timestamp(), clock_timestamp()
			FROM generate_series(1, $3) AS i`, companyID, prefix, n)
		return err
	})
}

// Delegate lets user to see the contacts and leads of user from in company (live or sandbox)
// until validUntil (nil: until deleted), straight in the database as the app role pinned to
// company, and returns the delegation's id. The endpoint /users/{id}/delegations does the same.
func (e *Env) Delegate(t testing.TB, company, from, to uuid.UUID, validUntil *time.Time) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	err := e.Pinned(context.Background(), company, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO delegations (id, company_id, delegator_id, delegate_id, valid_until, created_at)
			VALUES ($1, $2, $3, $4, $5, now())`, id, company, from, to, validUntil)
		return err
	})
	if err != nil {
		t.Fatalf("delegate: %v", err)
	}
	return id
}

// Delegate lets user to see from's contacts and leads in c (live) until validUntil (nil:
// until deleted); see Env.Delegate.
func (c *Company) Delegate(t testing.TB, from, to uuid.UUID, validUntil *time.Time) uuid.UUID {
	t.Helper()
	return c.env.Delegate(t, c.ID, from, to, validUntil)
}
