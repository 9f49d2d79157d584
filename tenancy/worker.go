package tenancy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Background work (the webhook worker, the dispatcher) pins its transactions exactly as a
// request does: WithPrincipal or WithCompany on the context, then a transaction begun on the
// tenancy Driver (BeginTx sets app.company_id, and whatever else the Principal implies). The
// two helpers here cover what a request gets from the auth middleware instead.

// ErrCredentialInactive is returned by CredentialPrincipal for a credential that is unknown to
// the pinned company, deactivated, deleted, or whose user or company is no longer active.
var ErrCredentialInactive = errors.New("tenancy: credential inactive")

// Querier runs a query in a pinned transaction (an *ent.Tx or *sql.Tx).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// CredentialPrincipal loads the credential keyID as the caller it would be in a request: its
// scopes, user and role, company and license, through webhook_credential (SECURITY DEFINER,
// migrations/), which answers only for the company tx is pinned to and only while the
// credential is active. Background work acting for a credential (a webhook endpoint's
// deliveries) builds its context from this Principal, so the credential's rights are decided
// anew each time, as for a request.
func CredentialPrincipal(ctx context.Context, tx Querier, keyID uuid.UUID) (*Principal, error) {
	return loadCredential(ctx, tx, `SELECT key_id, key_prefix, kind, env, scopes, allowed_domains,
		company_id, live_company_id, sandbox, features, user_id, user_role, NULL::uuid, ''::text
		FROM webhook_credential($1)`, keyID)
}

// OAuthCredentialPrincipal is CredentialPrincipal for an OAuth client's authorization: the
// user's grant to the client (user given), or the company-bound client's client credentials
// (user nil), through webhook_oauth_credential (migrations/). ErrCredentialInactive once the
// client is disabled, the user inactive, or no grant of the client for the user is still live
// (revoked, expired).
func OAuthCredentialPrincipal(ctx context.Context, tx Querier, client uuid.UUID, user *uuid.UUID) (*Principal, error) {
	var u any
	if user != nil {
		u = *user
	}
	return loadCredential(ctx, tx, `SELECT key_id, key_prefix, kind, env, scopes, allowed_domains,
		company_id, live_company_id, sandbox, features, user_id, user_role, client_id, client_name
		FROM webhook_oauth_credential($1, $2)`, client, u)
}

func loadCredential(ctx context.Context, tx Querier, query string, args ...any) (*Principal, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("load credential %v: %w", args[0], err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("load credential %v: %w", args[0], err)
		}
		return nil, ErrCredentialInactive
	}
	var (
		p                      Principal
		scopes, domains, feats []byte
		keyID, userID, client  uuid.NullUUID
		userRole, clientName   sql.NullString
	)
	if err := rows.Scan(&keyID, &p.KeyPrefix, &p.Kind, &p.Env, &scopes, &domains,
		&p.CompanyID, &p.LiveCompanyID, &p.Sandbox, &feats, &userID, &userRole, &client, &clientName); err != nil {
		return nil, fmt.Errorf("load credential %v: %w", args[0], err)
	}
	if err := errors.Join(json.Unmarshal(scopes, &p.Scopes), json.Unmarshal(domains, &p.AllowedDomains),
		json.Unmarshal(feats, &p.Features)); err != nil {
		return nil, fmt.Errorf("load credential %v: %w", args[0], err)
	}
	p.KeyID = keyID.UUID
	p.UserID = userID.UUID
	p.UserRole = userRole.String
	p.ClientID = client.UUID
	p.ClientName = clientName.String
	return &p, rows.Close()
}

// PgxBeginner begins pgx transactions (a *pgxpool.Pool).
type PgxBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// BeginPgx begins a pgx transaction pinned to the company of ctx, for work that must share a
// transaction with the job queue (river inserts jobs through pgx). It pins what
// Driver.BeginTx pins: the company, and the acting user and visibility of a user-bound
// Principal in ctx (a manager's or an admin's key uploading a portfolio file), else
// company-level work that sees every contact.
func BeginPgx(ctx context.Context, db PgxBeginner) (pgx.Tx, error) {
	args, err := pinArgs(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, pinWorkTx, args...); err != nil {
		_ = tx.Rollback(ctx)
		return nil, fmt.Errorf("pin transaction: %w", err)
	}
	return tx, nil
}

// BeginSQL is BeginPgx for database/sql (a *sql.DB over the job pool): for work that writes
// through ent and inserts its job in the same transaction (river's riverdatabasesql driver).
func BeginSQL(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
	args, err := pinArgs(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, pinWorkTx, args...); err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("pin transaction: %w", err)
	}
	return tx, nil
}

// pinWorkTx pins a transaction of BeginPgx or BeginSQL, as Driver.BeginTx pins a request's.
const pinWorkTx = `SELECT set_config('app.company_id', $1, true), set_config('app.user_id', $2, true),
	set_config('app.visibility', $3, true)`

// pinArgs are the arguments of pinWorkTx for ctx.
func pinArgs(ctx context.Context) ([]any, error) {
	id, ok := CompanyID(ctx)
	if !ok {
		return nil, ErrNoCompany
	}
	vis, user := VisibilityOf(ctx)
	uid := ""
	if user != uuid.Nil {
		uid = user.String()
	}
	return []any{id.String(), uid, vis}, nil
}
