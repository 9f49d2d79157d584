// Package tenancy pins every piece of request work to one company. It resolves the credential,
// opens the request's transaction, pins it in PostgreSQL with set_config('app.company_id', …, true)
// and hands the transaction's ent client to handlers through the context. Row-level security in
// the database and the ent privacy rules in ent/rule both read what this package stores.
package tenancy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"

	"entgo.io/ent/dialect"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
)

// Credential kinds and environments, as stored on api_keys.
const (
	KindSecret      = "secret"
	KindPublishable = "publishable"
	KindOAuth       = "oauth" // an OAuth 2.0 access token (app/oauth), accepted where secret keys are
	EnvLive         = "live"
	EnvTest         = "test"
)

// Principal is who is calling: the credential, its company and (for user-bound keys) its user.
type Principal struct {
	CompanyID     uuid.UUID // the tenant the request is pinned to (the sandbox twin for test keys)
	LiveCompanyID uuid.UUID // the live company; equals CompanyID for live keys
	Sandbox       bool
	Features      []string
	KeyID         uuid.UUID
	KeyPrefix     string // safe to log
	Kind          string
	Env           string
	Scopes        []string
	UserID        uuid.UUID // uuid.Nil for company-level keys
	UserRole      string
	// Visibility is which contacts and leads the credential sees: VisibilityAll or
	// VisibilityOwnAndDelegated (policy.Visibility of the user's role; all without a user). The
	// auth middleware sets it; empty on a user-bound Principal counts as own_and_delegated.
	Visibility string
	// AllowedDomains are the redirect/origin domains of a publishable key.
	AllowedDomains []string
	// ClientID and ClientName name the OAuth client of an access token (Kind KindOAuth);
	// uuid.Nil for keys.
	ClientID   uuid.UUID
	ClientName string
	// CompanyName and the user's e-mail and names come with the credential lookup's row (the
	// rows it joins anyway) so that GET /me answers without reading them again.
	CompanyName                            string
	UserEmail, UserFirstName, UserLastName string
	// VisibleOwners are the users whose contacts and leads a restricted credential sees (its
	// user and the users whose delegation to it is valid), read with the credential; nil when
	// it sees all, or when its lookup does not read them (VisibleOwners).
	VisibleOwners []uuid.UUID
}

// Visibilities of a credential (issue 8). The request transaction carries them as
// app.visibility; the RLS policies and ent/rule read them.
const (
	VisibilityAll             = "all"
	VisibilityOwnAndDelegated = "own_and_delegated"
	// VisibilityPortal is a customer's portal session (tenancy.WithPortal): one contact and
	// what hangs off it, nothing owned by users.
	VisibilityPortal = "portal"
)

// VisibilityOf returns what the work of ctx may see of user-scoped rows (contacts, leads, and
// what belongs to them): VisibilityAll and uuid.Nil for company-level credentials, operator
// and background work pinned to a company only; for a user-bound credential its visibility
// (own_and_delegated when unset: never all by omission) and its user.
func VisibilityOf(ctx context.Context) (visibility string, userID uuid.UUID) {
	if _, ok := PortalContact(ctx); ok {
		return VisibilityPortal, uuid.Nil
	}
	p, ok := PrincipalFrom(ctx)
	if !ok || !p.HasUser() {
		return VisibilityAll, uuid.Nil
	}
	if p.Visibility == VisibilityAll {
		return VisibilityAll, p.UserID
	}
	return VisibilityOwnAndDelegated, p.UserID
}

// VisibleOwners returns the owners the restricted credential of ctx sees, as its lookup read
// them, and false when the credential sees all or its lookup did not read them (calendar
// feeds, background work). The row-level security policies read the delegations themselves in
// every statement: the list only names these owners for the planner.
func VisibleOwners(ctx context.Context) ([]uuid.UUID, bool) {
	p, ok := PrincipalFrom(ctx)
	if !ok || !p.HasUser() || p.Visibility == VisibilityAll || p.VisibleOwners == nil {
		return nil, false
	}
	return p.VisibleOwners, true
}

// HasUser reports whether the credential acts for one user.
func (p *Principal) HasUser() bool { return p.UserID != uuid.Nil }

// HasFeature reports whether the company licenses feature f.
func (p *Principal) HasFeature(f string) bool { return slices.Contains(p.Features, f) }

type ctxKey int

const (
	principalKey ctxKey = iota
	clientKey
	operatorKey
	companyKey
	portalKey
)

// WithPortal pins ctx to one contact of one company for a customer's portal session
// (app/portal): its transactions run as the role brokerdesk_portal (which may touch the
// portal's tables and what a customer reads, nothing else) with app.visibility
// 'portal:<contact id>', so the row-level security policies show the contact and what hangs
// off it only; the ent rules (ent/rule) narrow every query to the same. Only app/portal calls
// this, after it checked the session.
func WithPortal(ctx context.Context, company, contact uuid.UUID) context.Context {
	return context.WithValue(WithCompany(ctx, company), portalKey, contact)
}

// PortalContact returns the contact a portal session of ctx is pinned to.
func PortalContact(ctx context.Context) (uuid.UUID, bool) {
	id, ok := ctx.Value(portalKey).(uuid.UUID)
	return id, ok && id != uuid.Nil
}

// WithPrincipal stores the caller. The company pin follows from it.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	ctx = context.WithValue(ctx, principalKey, p)
	return WithCompany(ctx, p.CompanyID)
}

// PrincipalFrom returns the caller stored by the auth middleware.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey).(*Principal)
	return p, ok
}

// ActingUser is the user of the caller's credential when it is user-bound (a user's key or
// OAuth grant), nil for company-level credentials and background work without one: the
// author or creator a write records.
func ActingUser(ctx context.Context) *uuid.UUID {
	if p, ok := PrincipalFrom(ctx); ok && p.HasUser() {
		id := p.UserID
		return &id
	}
	return nil
}

// WithCompany pins ctx to one company: transactions begun with it set app.company_id, and the
// ent privacy rules filter by it.
func WithCompany(ctx context.Context, id uuid.UUID) context.Context {
	return context.WithValue(ctx, companyKey, id)
}

// CompanyID returns the company ctx is pinned to.
func CompanyID(ctx context.Context) (uuid.UUID, bool) {
	id, ok := ctx.Value(companyKey).(uuid.UUID)
	return id, ok && id != uuid.Nil
}

// WithOperator marks ctx as operator work (the CLI): its transactions run as the
// brokerdesk_operator role, which row-level security lets see every company. Only cmd/ and the
// operator service call this; no HTTP path does.
func WithOperator(ctx context.Context) context.Context {
	return context.WithValue(ctx, operatorKey, true)
}

// IsOperator reports whether ctx is operator work.
func IsOperator(ctx context.Context) bool {
	v, _ := ctx.Value(operatorKey).(bool)
	return v
}

// WithClient stores the ent client of the request's transaction.
func WithClient(ctx context.Context, c *ent.Client) context.Context {
	return context.WithValue(ctx, clientKey, c)
}

type txKey struct{}

// requestTx is the request transaction the auth middleware began (and pinned) together with
// the credential lookup. Its ent transaction and client are built on first use (Client,
// AfterCommit, AfterRollback): ent builds a client per entity for a Tx and again for its
// Client, a quarter of GET /me's allocations, which a handler answering from the Principal
// (GET /me) never uses. Either way every statement runs on the one pinned transaction.
type requestTx struct {
	ctx    context.Context // the request's, as the transaction was begun with
	dtx    dialect.Tx      // the pinned transaction, begun by Driver.beginLookup
	client *ent.Client     // the Authenticator's, over the Driver that began dtx

	mu sync.Mutex
	tx *ent.Tx // nil until first used
}

// ent returns the ent transaction over dtx, building it on first use.
func (r *requestTx) ent() *ent.Tx {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tx == nil {
		// Driver.BeginTx hands back dtx itself (withOpenTx): no statement is sent.
		tx, err := r.client.BeginTx(withOpenTx(r.ctx, r.dtx), nil)
		if err != nil { // cannot happen: ent fails only when the driver does
			panic(fmt.Sprintf("tenancy: ent transaction over the request transaction: %v", err))
		}
		r.tx = tx
	}
	return r.tx
}

// started returns the ent transaction if one was built.
func (r *requestTx) started() *ent.Tx {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tx
}

// Commit commits, through ent's transaction (and its commit hooks: AfterCommit) when one was
// built.
func (r *requestTx) Commit() error {
	if tx := r.started(); tx != nil {
		return tx.Commit()
	}
	return r.dtx.Commit()
}

// Rollback rolls back, through ent's transaction (and its hooks: AfterRollback) when one was
// built.
func (r *requestTx) Rollback() error {
	if tx := r.started(); tx != nil {
		return tx.Rollback()
	}
	return r.dtx.Rollback()
}

// withRequestTx stores the request's transaction, whose ent client Client returns and which
// AfterCommit and AfterRollback hook into.
func withRequestTx(ctx context.Context, r *requestTx) context.Context {
	return context.WithValue(ctx, txKey{}, r)
}

// WithTx makes tx the transaction of ctx for work outside a request (a job, a public page in a
// company transaction): Client returns its client, and AfterCommit and AfterRollback hook into
// it as into a request's, so services written for requests (documents.Service.Create removes
// its blob when the transaction rolls back) run unchanged. tx must be pinned to the company of
// ctx (a transaction begun on the job pool with tenancy.WithCompany is).
func WithTx(ctx context.Context, tx *ent.Tx) context.Context {
	r := &requestTx{ctx: ctx, tx: tx}
	return WithClient(withRequestTx(ctx, r), tx.Client())
}

// entTx returns the ent transaction of the request transaction of ctx.
func entTx(ctx context.Context) (*ent.Tx, bool) {
	r, ok := ctx.Value(txKey{}).(*requestTx)
	if !ok {
		return nil, false
	}
	return r.ent(), true
}

// AfterCommit runs fn once the request transaction of ctx has committed, never when it rolls
// back or its COMMIT fails (then the outcome may be unknown). It is for effects outside the
// database that must follow only what was stored: removing the blobs of deleted documents.
// Outside a request transaction (the auth middleware's) it returns an error, so the effect is
// never lost silently.
func AfterCommit(ctx context.Context, fn func()) error {
	tx, ok := entTx(ctx)
	if !ok {
		return errors.New("tenancy: AfterCommit outside a request transaction")
	}
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				fn()
			}
			return err
		})
	})
	return nil
}

// AfterRollback runs fn once the request transaction of ctx has rolled back (an error, a
// panic, a retried request): undoing effects outside the database that only a commit would
// have kept, such as a blob written for a row that is gone. Outside a request transaction it
// returns an error.
func AfterRollback(ctx context.Context, fn func()) error {
	tx, ok := entTx(ctx)
	if !ok {
		return errors.New("tenancy: AfterRollback outside a request transaction")
	}
	tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
		return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Rollback(ctx, tx)
			fn()
			return err
		})
	})
	return nil
}

// TxClient is Client for code that also runs without a request transaction (a route behind
// SecretUnpinned): ok is false there.
func TxClient(ctx context.Context) (*ent.Client, bool) {
	if c, ok := ctx.Value(clientKey).(*ent.Client); ok {
		return c, true
	}
	if tx, ok := entTx(ctx); ok {
		return tx.Client(), true
	}
	return nil, false
}

// Client returns the ent client bound to the request's pinned transaction. Handlers and services
// use only this; none touches the pool. It panics when called outside a request transaction,
// which is a programming error that tests catch at once.
func Client(ctx context.Context) *ent.Client {
	if c, ok := TxClient(ctx); ok {
		return c
	}
	panic("tenancy: no request transaction in context")
}

// QueryRow runs a statement of one row in the request transaction of ctx and scans the row
// into dest (sql.ErrNoRows when there is none): ent's client offers QueryContext only.
func QueryRow(ctx context.Context, query string, args []any, dest ...any) error {
	rows, err := Client(ctx).QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

type oauthServerKey struct{}

// WithOAuthServer marks ctx as work of the OAuth authorization server (app/oauth): its
// transactions pin no company, for the server works before it knows one, and so reach no
// tenant row; it reads and writes the OAuth tables through the oauth_server_* SECURITY DEFINER
// functions only. No other path sets it.
func WithOAuthServer(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauthServerKey{}, true)
}

// IsOAuthServer reports whether ctx is work of the authorization server.
func IsOAuthServer(ctx context.Context) bool {
	v, _ := ctx.Value(oauthServerKey{}).(bool)
	return v
}

// HandOver runs fn, a write that hands a row the caller may see to another owner, with
// app.visibility 'all' in the request transaction of ctx, and then pins the credential's
// visibility again. An agent assigns a contact, lead, task or appointment to a colleague, or
// creates one for them: PostgreSQL checks the new row of an UPDATE with a WHERE clause, and of an
// INSERT … RETURNING, against the SELECT policies, so the handover would be refused although it
// is allowed. The caller must have read the row through the visibility layer first; the ent
// rules still filter by the Principal of ctx meanwhile (fn's update matches the old row).
func HandOver(ctx context.Context, fn func() error) error { return withVisibilityAll(ctx, fn) }

// ReadCompanyWide runs fn, reads of a key that is unique in the whole company (external
// references, a contract's insurer, policy number and type), with app.visibility 'all' in the
// request transaction of ctx, and then pins the credential's visibility again. Such a key may be
// held by a row the caller does not see: without the lift the check would answer "free" and
// the unique index would fail as a 500, or an upsert would take over a row it may not see. The
// same holds for keeping the external_refs lookup in step when a cascade removes rows of any
// owner. fn must not hand data of rows it cannot see back to the caller, only yes or no.
func ReadCompanyWide(ctx context.Context, fn func() error) error { return withVisibilityAll(ctx, fn) }

func withVisibilityAll(ctx context.Context, fn func() error) error {
	vis, _ := VisibilityOf(ctx)
	if vis == VisibilityPortal {
		// A customer never hands rows over nor probes company-wide keys.
		return errors.New("tenancy: a portal session cannot lift its visibility")
	}
	if vis == VisibilityAll {
		return fn()
	}
	db := Client(ctx)
	if _, err := db.ExecContext(ctx, "SELECT set_config('app.visibility', 'all', true)"); err != nil {
		return fmt.Errorf("lift visibility: %w", err)
	}
	ferr := fn()
	if _, err := db.ExecContext(ctx, "SELECT set_config('app.visibility', $1, true)", vis); err != nil {
		return errors.Join(ferr, fmt.Errorf("restore visibility: %w", err))
	}
	return ferr
}

// IsPortal reports whether ctx is a customer's portal session (WithPortal).
func IsPortal(ctx context.Context) bool {
	_, ok := PortalContact(ctx)
	return ok
}

// CompanyTx runs fn in a company-level transaction of company begun on db (ent on the job
// pool) and commits when fn returns nil: the one way work without a credential reaches a
// company's rows (jobs, the signing page, the e-mail links, the customer portal before and
// around its pin). fn's ctx is pinned to the company and carries the transaction as a
// request's does (WithTx: Client, AfterCommit, AfterRollback), so services written for
// requests run unchanged; row-level security and the ent rules apply as for a company-level key.
func CompanyTx(ctx context.Context, db *ent.Client, company uuid.UUID, fn func(ctx context.Context) error) error {
	ctx = WithCompany(ctx, company)
	tx, err := db.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction of company %s: %w", company, err)
	}
	if err := fn(WithTx(ctx, tx)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Savepoint runs fn inside a savepoint of the transaction of ctx: what fn wrote is undone when
// it fails (its error is returned) and the transaction stays usable, kept when it succeeds. For
// a write that may fail on a constraint the caller answers as a refusal (409) in a transaction
// that goes on, or one item of a batch.
func Savepoint(ctx context.Context, fn func() error) error {
	db := Client(ctx)
	if _, err := db.ExecContext(ctx, `SAVEPOINT app_item`); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := fn(); err != nil {
		if _, rerr := db.ExecContext(ctx, `ROLLBACK TO SAVEPOINT app_item`); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback to savepoint: %w", rerr))
		}
		return err
	}
	if _, err := db.ExecContext(ctx, `RELEASE SAVEPOINT app_item`); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}
