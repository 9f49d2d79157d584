package tenancy

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/ent"
)

// PrincipalLocal is the fiber.Ctx local under which the request log finds the caller.
const PrincipalLocal = "principal"

// Authenticator resolves credentials to companies and runs each request in one pinned
// transaction.
type Authenticator struct {
	client *ent.Client // over a pool of app-role connections, wrapped by Driver
	seeAll []string    // roles whose visibility is all (policy.RolesSeeingAll)
}

// NewAuthenticator returns the middleware factory for client. seeAll lists the user roles that
// see every contact (policy.Default().RolesSeeingAll()); any other role sees its own and
// delegated ones.
func NewAuthenticator(client *ent.Client, seeAll []string) *Authenticator {
	return &Authenticator{client: client, seeAll: seeAll}
}

// errInvalidKey is the one answer for unknown, deactivated and deleted keys alike: telling them
// apart would help someone guessing keys.
func errInvalidKey() error {
	return errs.Unauthenticated("invalid_credential", "the credential is unknown or inactive")
}

// Secret guards /api/public/v1: a secret key as Authorization: Bearer. Publishable keys are
// refused there (401): they are public and serve only the lead intake.
func (a *Authenticator) Secret() fiber.Handler {
	return func(c *fiber.Ctx) error {
		h := c.Get(fiber.HeaderAuthorization)
		if h == "" {
			return errs.Unauthenticated("missing_credential", "send a secret key as Authorization: Bearer <key>")
		}
		scheme, key, ok := strings.Cut(h, " ")
		key = strings.TrimSpace(key)
		if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
			return errs.Unauthenticated("malformed_credential", "the Authorization header must be Bearer <key>")
		}
		switch KindOf(key) {
		case KindSecret:
		case KindPublishable:
			return errs.Unauthenticated("publishable_key_not_allowed", "publishable keys are accepted only by the lead intake")
		default:
			return errInvalidKey()
		}
		return a.run(c, key, KindSecret)
	}
}

// Publishable guards the lead intake: keyOf extracts the publishable key from the request
// (header or form field). Secret keys are refused there (401).
func (a *Authenticator) Publishable(keyOf func(*fiber.Ctx) string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := keyOf(c)
		if key == "" {
			return errs.Unauthenticated("missing_credential", "send a publishable key")
		}
		if KindOf(key) != KindPublishable {
			return errInvalidKey()
		}
		return a.run(c, key, KindPublishable)
	}
}

// run resolves key inside a new transaction, pins it, serves the rest of the chain with the
// transaction's client in the context, and commits on success or rolls back on error or panic.
func (a *Authenticator) run(c *fiber.Ctx, key, kind string) (err error) {
	ctx := c.UserContext()
	tx, err := a.client.BeginTx(withAuthPending(ctx), nil)
	if err != nil {
		return fmt.Errorf("begin request transaction: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	p, err := a.resolve(ctx, tx, key)
	if err != nil {
		return err
	}
	if p.Kind != kind {
		return errInvalidKey()
	}
	ctx = WithClient(WithPrincipal(ctx, p), tx.Client())
	l := zerolog.Ctx(ctx).With().Str("company_id", p.CompanyID.String()).Str("key_prefix", p.KeyPrefix).Logger()
	ctx = l.WithContext(ctx)
	c.SetUserContext(ctx)
	c.Locals(PrincipalLocal, p)
	if err := c.Next(); err != nil {
		return err // deferred rollback
	}
	done = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit request transaction: %w", err)
	}
	return nil
}

// authQuery resolves the credential and pins the transaction in one round trip: the company,
// the acting user (” for company-level keys) and the visibility ($2: the roles that see all).
// auth_credential is SECURITY DEFINER (migrations/): it reads keys of every company for the
// app role, which itself cannot.
const authQuery = `SELECT key_id, key_prefix, key_hash, kind, env, scopes, allowed_domains,
	company_id, live_company_id, sandbox, features, user_id, user_role,
	set_config('app.company_id', company_id::text, true),
	set_config('app.user_id', coalesce(user_id::text, ''), true),
	set_config('app.visibility', CASE WHEN user_id IS NULL OR user_role = ANY($2::text[]) THEN 'all'
		ELSE 'own_and_delegated' END, true)
FROM auth_credential($1)`

func (a *Authenticator) resolve(ctx context.Context, tx *ent.Tx, key string) (*Principal, error) {
	hash := HashKey(key)
	seeAll := "{" + strings.Join(a.seeAll, ",") + "}" // role names are identifiers: no quoting needed
	rows, err := tx.QueryContext(ctx, authQuery, hash, seeAll)
	if err != nil {
		return nil, fmt.Errorf("resolve credential: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("resolve credential: %w", err)
		}
		return nil, errInvalidKey()
	}
	var (
		p                      Principal
		stored                 []byte
		scopes, domains, feats []byte
		userID                 uuid.NullUUID
		userRole               sql.NullString
		pinned, pinnedUser     string
	)
	if err := rows.Scan(&p.KeyID, &p.KeyPrefix, &stored, &p.Kind, &p.Env, &scopes, &domains,
		&p.CompanyID, &p.LiveCompanyID, &p.Sandbox, &feats, &userID, &userRole, &pinned, &pinnedUser, &p.Visibility); err != nil {
		return nil, fmt.Errorf("resolve credential: %w", err)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("resolve credential: %w", err)
	}
	// The lookup was by hash already; comparing again in constant time costs nothing and keeps
	// the check independent of how the database compares.
	if subtle.ConstantTimeCompare(stored, hash) != 1 {
		return nil, errInvalidKey()
	}
	if err := errors.Join(json.Unmarshal(scopes, &p.Scopes), json.Unmarshal(domains, &p.AllowedDomains),
		json.Unmarshal(feats, &p.Features)); err != nil {
		return nil, fmt.Errorf("resolve credential: %w", err)
	}
	p.UserID = userID.UUID
	p.UserRole = userRole.String
	return &p, nil
}
