package tenancy

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"

	"entgo.io/ent/dialect"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
)

// PrincipalLocal is the fiber.Ctx local under which the request log finds the caller.
const PrincipalLocal = "principal"

// Authenticator resolves credentials to companies and runs each request in one pinned
// transaction.
type Authenticator struct {
	client     *ent.Client // over drv
	drv        *Driver     // over a pool of app-role connections
	seeAll     []string    // roles whose visibility is all (policy.RolesSeeingAll)
	validToken func(token string) bool
}

// NewAuthenticator returns the middleware factory for client, an ent client over drv. seeAll
// lists the user roles that see every contact (policy.Default().RolesSeeingAll()); any other
// role sees its own and delegated ones. validToken tells whether an OAuth access token was
// signed by the authorization server (oauth.Server.ValidAccessToken): only such a token is
// looked up, so a token row anyone else stored (SQL of the app role) authenticates nothing.
func NewAuthenticator(client *ent.Client, drv *Driver, seeAll []string, validToken func(token string) bool) *Authenticator {
	return &Authenticator{client: client, drv: drv, seeAll: seeAll, validToken: validToken}
}

// errInvalidKey is the one answer for unknown, deactivated and deleted keys alike: telling them
// apart would help someone guessing keys.
func errInvalidKey() error {
	return errs.Unauthenticated("invalid_credential", "the credential is unknown or inactive")
}

// Secret guards /api/public/v1: a secret key as Authorization: Bearer. Publishable keys are
// refused there (401): they are public and serve only the lead intake.
func (a *Authenticator) Secret() fiber.Handler { return a.secret(true) }

// SecretUnpinned is Secret for a route that must not hold a database connection while it runs
// (POST /portfolio-transfers streams a file of hundreds of MB from a client that may be slow):
// the credential is resolved in a transaction of its own that ends at once, and the chain runs
// with the Principal in its context but no request transaction (Client panics, TxClient says
// so). Its handler opens short transactions of its own for what it stores.
func (a *Authenticator) SecretUnpinned() fiber.Handler { return a.secret(false) }

func (a *Authenticator) secret(pinned bool) fiber.Handler {
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
			if sig, ok := accessTokenSignature(key); ok && a.validToken(key) {
				return a.run(c, sig, KindOAuth, pinned)
			}
			return errInvalidKey()
		}
		return a.run(c, key, KindSecret, pinned)
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
		return a.run(c, key, KindPublishable, true)
	}
}

// run resolves key inside a new transaction, pins it, serves the rest of the chain with the
// transaction's client in the context, and commits on success or rolls back on error or panic.
// Not pinned, the transaction ends after the lookup and the chain runs without one.
func (a *Authenticator) run(c *fiber.Ctx, key, kind string, pinned bool) (err error) {
	ctx := c.UserContext()
	dtx, p, err := a.begin(ctx, key, kind)
	if err != nil {
		return err
	}
	tx := &requestTx{ctx: ctx, dtx: dtx, client: a.client}
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	if p.Kind != kind {
		return errInvalidKey()
	}
	ctx = WithPrincipal(ctx, p)
	if pinned {
		ctx = withRequestTx(ctx, tx)
	} else {
		done = true
		if err := tx.Commit(); err != nil { // a read: nothing to lose, the client may retry
			return err
		}
	}
	lc := zerolog.Ctx(ctx).With().Str("company_id", p.CompanyID.String())
	if p.ClientID != uuid.Nil {
		lc = lc.Str("oauth_client_id", p.ClientID.String()).Str("token_id", p.KeyID.String())
	} else {
		lc = lc.Str("key_prefix", p.KeyPrefix)
	}
	l := lc.Logger()
	ctx = l.WithContext(ctx)
	c.SetUserContext(ctx)
	c.Locals(PrincipalLocal, p)
	if err := c.Next(); err != nil {
		return err // deferred rollback
	}
	if !pinned {
		return nil
	}
	done = true
	if err := tx.Commit(); err != nil {
		return &commitError{err: err} // Classify: outcome unknown when the connection broke
	}
	return nil
}

// begin begins the request transaction and resolves the credential in it, in one round trip
// (BEGIN and the lookup as one batch, pipeline.go). Both happen before any work of the
// request, so a passing failure (no connection, the server restarting) is tried again within
// the retry deadline of ctx (WithRetryDeadline). ent's transaction over it is built only when
// the request uses ent (requestTx).
func (a *Authenticator) begin(ctx context.Context, key, kind string) (dialect.Tx, *Principal, error) {
	for n := 0; ; n++ {
		var p Principal
		l := a.keyLookup(key, &p)
		if kind == KindOAuth {
			l = a.tokenLookup(key, &p)
		}
		tx, err := a.drv.beginLookup(ctx, l)
		if err == nil {
			return tx, &p, nil
		}
		if errors.Is(err, errNoCredential) {
			return nil, nil, errInvalidKey()
		}
		if Classify(err) != Transient || !WaitRetry(ctx, n) {
			return nil, nil, err
		}
	}
}

// authQuery resolves the credential and pins the transaction in one round trip: the company,
// the acting user (” for company-level keys) and the visibility ($2: the roles that see all).
// auth_credential is SECURITY DEFINER (migrations/): it reads keys of every company for the
// app role, which itself cannot.
const authQuery = `SELECT key_id, key_prefix, key_hash, kind, env, scopes, allowed_domains,
	company_id, live_company_id, sandbox, features, user_id, user_role,
	company_name, user_email, user_first_name, user_last_name, owner_ids,
	set_config('app.company_id', company_id::text, true),
	set_config('app.user_id', coalesce(user_id::text, ''), true),
	set_config('app.visibility', CASE WHEN user_id IS NULL OR user_role = ANY($2::text[]) THEN 'all'
		ELSE 'own_and_delegated' END, true)
FROM auth_credential($1, $2::text[])`

// seeAllArg is the lookups' $2: the roles whose visibility is all, as a text[] literal (role
// names are identifiers: no quoting needed).
func (a *Authenticator) seeAllArg() string { return "{" + strings.Join(a.seeAll, ",") + "}" }

// keyLookup resolves a key into p: by its SHA-256, compared again in constant time (it costs
// nothing and keeps the check independent of how the database compares).
func (a *Authenticator) keyLookup(key string, p *Principal) *authLookup {
	hash := HashKey(key)
	return &authLookup{query: authQuery, args: []any{hash, a.seeAllArg()}, scan: func(rows pgx.Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return errNoCredential
		}
		var (
			stored, scopes, domains, feats []byte
			keyID, company, live, user     pgtype.UUID
			userRole, email, first, last   pgtype.Text
			owners                         []pgtype.UUID
			pinned, pinnedUser             string
		)
		if err := rows.Scan(&keyID, &p.KeyPrefix, &stored, &p.Kind, &p.Env, &scopes, &domains,
			&company, &live, &p.Sandbox, &feats, &user, &userRole, &p.CompanyName, &email, &first, &last,
			&owners, &pinned, &pinnedUser, &p.Visibility); err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(stored, hash) != 1 {
			return errNoCredential
		}
		if err := errors.Join(parseStrings(scopes, &p.Scopes), parseStrings(domains, &p.AllowedDomains),
			parseStrings(feats, &p.Features)); err != nil {
			return err
		}
		p.KeyID, p.CompanyID, p.LiveCompanyID, p.UserID = keyID.Bytes, company.Bytes, live.Bytes, user.Bytes
		p.setUser(userRole, email, first, last, owners)
		return nil
	}}
}

// setUser takes the lookup's user columns (NULL without a user) and the owners a restricted
// credential sees (NULL when it sees all).
func (p *Principal) setUser(role, email, first, last pgtype.Text, owners []pgtype.UUID) {
	p.UserRole, p.UserEmail, p.UserFirstName, p.UserLastName = role.String, email.String, first.String, last.String
	if owners != nil {
		p.VisibleOwners = make([]uuid.UUID, len(owners))
		for i, o := range owners {
			p.VisibleOwners[i] = o.Bytes
		}
	}
}

// AccessTokenPrefix starts every OAuth access token (fosite's HMAC strategy: prefix, key,
// ".", signature). Only the signature's SHA-256 is stored.
const AccessTokenPrefix = "ory_at_"

// accessTokenSignature returns the signature part of what looks like an access token.
func accessTokenSignature(tok string) (string, bool) {
	rest, ok := strings.CutPrefix(tok, AccessTokenPrefix)
	if !ok {
		return "", false
	}
	_, sig, ok := strings.Cut(rest, ".")
	return sig, ok && sig != ""
}

// tokenQuery resolves an OAuth access token and pins the transaction in one round trip, like
// authQuery a key: auth_token (migrations/) is SECURITY DEFINER as auth_credential is.
const tokenQuery = `SELECT key_id, key_hash, env, scopes, company_id, live_company_id, sandbox, features,
	user_id, user_role, client_id, client_name,
	company_name, user_email, user_first_name, user_last_name, owner_ids,
	set_config('app.company_id', company_id::text, true),
	set_config('app.user_id', coalesce(user_id::text, ''), true),
	set_config('app.visibility', CASE WHEN user_id IS NULL OR user_role = ANY($2::text[]) THEN 'all'
		ELSE 'own_and_delegated' END, true)
FROM auth_token($1, $2::text[])`

// tokenLookup is keyLookup for access tokens: sig is the token's signature. A token issued
// through a user's consent gets the user's visibility, exactly as a key bound to that user.
func (a *Authenticator) tokenLookup(sig string, p *Principal) *authLookup {
	hash := HashKey(sig)
	return &authLookup{query: tokenQuery, args: []any{hash, a.seeAllArg()}, scan: func(rows pgx.Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return errNoCredential
		}
		var (
			stored, scopes, feats                []byte
			keyID, company, live, user, clientID pgtype.UUID
			userRole, email, first, last         pgtype.Text
			owners                               []pgtype.UUID
			pinned, pinnedUser                   string
		)
		if err := rows.Scan(&keyID, &stored, &p.Env, &scopes, &company, &live, &p.Sandbox,
			&feats, &user, &userRole, &clientID, &p.ClientName, &p.CompanyName, &email, &first, &last,
			&owners, &pinned, &pinnedUser, &p.Visibility); err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(stored, hash) != 1 {
			return errNoCredential
		}
		if err := errors.Join(parseStrings(scopes, &p.Scopes), parseStrings(feats, &p.Features)); err != nil {
			return err
		}
		p.Kind = KindOAuth
		p.KeyID, p.CompanyID, p.LiveCompanyID, p.UserID, p.ClientID = keyID.Bytes, company.Bytes, live.Bytes, user.Bytes, clientID.Bytes
		p.setUser(userRole, email, first, last, owners)
		return nil
	}}
}
