package tenancy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/migrations"
)

// ErrNoTx is returned for a statement sent outside a pinned transaction: every piece of tenant
// work runs inside one, so such a statement is a bug, refused before it reaches the database.
var ErrNoTx = errors.New("tenancy: statement outside a tenant transaction")

// ErrNoCompany is returned when a transaction is begun with no company, operator mark or
// pending authentication in its context.
var ErrNoCompany = errors.New("tenancy: no company in context")

// Driver wraps ent's SQL driver so that every transaction is pinned before its first statement:
// set_config('app.company_id', id, true) for a company, SET LOCAL ROLE brokerdesk_operator for
// operator work. Both are transaction-local, so nothing survives on the pooled connection (ent's
// sql.WithVar would issue a session-level SET that does).
type Driver struct {
	*entsql.Driver
	db *sql.DB
	// Trace, when set, sees every statement sent in a transaction (tests read the SQL a list
	// runs, to EXPLAIN it).
	Trace func(query string, args any)
}

// NewDriver wraps db, a pool of connections as the app role or the owner.
func NewDriver(db *sql.DB) *Driver {
	return &Driver{Driver: entsql.OpenDB(dialect.Postgres, db), db: db}
}

// Exec refuses statements outside a transaction.
func (d *Driver) Exec(context.Context, string, any, any) error { return ErrNoTx }

// Query refuses statements outside a transaction.
func (d *Driver) Query(context.Context, string, any, any) error { return ErrNoTx }

// ExecContext refuses statements outside a transaction (ent's generated client.ExecContext
// would otherwise reach the pool unpinned, through the embedded driver).
func (d *Driver) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	return nil, ErrNoTx
}

// QueryContext refuses statements outside a transaction.
func (d *Driver) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, ErrNoTx
}

// Tx begins a pinned transaction.
func (d *Driver) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

type authPendingKey struct{}

// withAuthPending lets the auth middleware begin the transaction in which its first statement
// both resolves the credential and pins the company.
func withAuthPending(ctx context.Context) context.Context {
	return context.WithValue(ctx, authPendingKey{}, true)
}

type openTxKey struct{}

// withOpenTx makes the next BeginTx on the Driver return tx, a request transaction it began
// before (requestTx builds ent's transaction over it on first use).
func withOpenTx(ctx context.Context, tx dialect.Tx) context.Context {
	return context.WithValue(ctx, openTxKey{}, tx)
}

// BeginTx begins a transaction and pins it to the company (or operator role) in ctx.
func (d *Driver) BeginTx(ctx context.Context, opts *entsql.TxOptions) (dialect.Tx, error) {
	if tx, ok := ctx.Value(openTxKey{}).(dialect.Tx); ok && opts == nil {
		return tx, nil
	}
	tx, err := d.Driver.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	var stmt string
	var args []any
	id, pinned := CompanyID(ctx)
	switch {
	case IsOperator(ctx) && pinned:
		stmt, args = "SELECT set_config('role', $1, true), set_config('app.company_id', $2, true)",
			[]any{migrations.RoleOperator, id.String()}
	case IsOperator(ctx):
		stmt, args = "SELECT set_config('role', $1, true)", []any{migrations.RoleOperator}
	case pinned && IsPortal(ctx):
		contact, _ := PortalContact(ctx)
		stmt, args = portalPin, portalPinArgs(id, contact)
	case pinned:
		// The acting user and its visibility (issue 8): a Principal's, else company-level work
		// that sees every contact.
		vis, user := VisibilityOf(ctx)
		uid := ""
		if user != uuid.Nil {
			uid = user.String()
		}
		stmt, args = `SELECT set_config('app.company_id', $1, true), set_config('app.user_id', $2, true),
			set_config('app.visibility', $3, true)`, []any{id.String(), uid, vis}
	case ctx.Value(authPendingKey{}) != nil || IsOAuthServer(ctx):
		// Unpinned: the credential lookup pins in its own first statement; the authorization
		// server reaches the OAuth tables only through SECURITY DEFINER functions (no policy
		// admits a transaction pinned to no company, nor may any setting open one).
		if d.Trace != nil {
			return tracedTx{Tx: planTx{tx}, trace: d.Trace}, nil
		}
		return planTx{tx}, nil
	default:
		_ = tx.Rollback()
		return nil, ErrNoCompany
	}
	var rows entsql.Rows
	if err := tx.Query(ctx, stmt, args, &rows); err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("pin transaction: %w", err)
	}
	if err := rows.Close(); err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("pin transaction: %w", err)
	}
	if d.Trace != nil {
		return tracedTx{Tx: planTx{tx}, trace: d.Trace}, nil
	}
	return planTx{tx}, nil
}

type tracedTx struct {
	dialect.Tx
	trace func(string, any)
}

func (t tracedTx) Query(ctx context.Context, q string, args, v any) error {
	t.trace(q, args)
	return t.Tx.Query(ctx, q, args, v)
}

func (t tracedTx) Exec(ctx context.Context, q string, args, v any) error {
	t.trace(q, args)
	return t.Tx.Exec(ctx, q, args, v)
}

// QueryContext passes through to the transaction (ent's sql/execquery feature needs it).
func (t tracedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.trace(q, args)
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}).QueryContext(ctx, q, args...)
}

// ExecContext passes through to the transaction.
func (t tracedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	t.trace(q, args)
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}).ExecContext(ctx, q, args...)
}
