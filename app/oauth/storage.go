package oauth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/oauthtoken"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Store is fosite's storage. Every call runs in the transaction of the OAuth request
// (tenancy.Client(ctx)), which the handler begins with tenancy.WithOAuthServer, through the
// functions of sql.go: the transaction is pinned to no company. Tokens are kept
// as the SHA-256 of their signature; a used code or a rotated refresh token stays as an inactive
// row, so that its replay is recognised and revokes its grant.
type Store struct {
	lifespans map[oauthtoken.Kind]time.Duration
}

// Session is what a grant carries: the user (fosite's subject, empty for client credentials)
// and the live company it acts for.
type Session struct {
	fosite.DefaultSession
	CompanyID uuid.UUID `json:"companyId"`
	UserID    uuid.UUID `json:"userId"`
}

// Clone returns a deep copy (fosite's Session interface).
func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	d := s.DefaultSession.Clone().(*fosite.DefaultSession)
	c.DefaultSession = *d
	return &c
}

// hashSignature is what is stored for a token signature.
func hashSignature(sig string) []byte {
	h := sha256.Sum256([]byte(sig))
	return h[:]
}

// GetClient returns an active client (fosite.ClientManager).
func (s *Store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	cid, err := uuid.Parse(id)
	if err != nil {
		return nil, fosite.ErrNotFound
	}
	var (
		c              ent.OAuthClient
		company        uuid.NullUUID
		redirs, scopes []byte
	)
	err = tenancy.QueryRow(ctx, sqlClient, []any{cid}, &c.ID, &company, &c.Name, &redirs, &scopes, &c.Public, &c.Env)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get oauth client: %w", err)
	}
	if company.Valid {
		c.CompanyID = &company.UUID
	}
	if err := errors.Join(json.Unmarshal(redirs, &c.RedirectUris), json.Unmarshal(scopes, &c.Scopes)); err != nil {
		return nil, fmt.Errorf("get oauth client: %w", err)
	}
	return &Client{c: &c}, nil
}

// ClientAssertionJWTValid accepts: JWT client assertions are not offered.
func (s *Store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT does nothing: JWT client assertions are not offered.
func (s *Store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

func (s *Store) create(ctx context.Context, kind oauthtoken.Kind, sig string, req fosite.Requester) error {
	sess, ok := req.GetSession().(*Session)
	if !ok {
		return fmt.Errorf("oauth session of type %T", req.GetSession())
	}
	cid, err := uuid.Parse(req.GetClient().GetID())
	if err != nil {
		return fmt.Errorf("oauth client id: %w", err)
	}
	blob, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	exp := time.Time{}
	switch kind {
	case oauthtoken.KindAccessToken:
		exp = sess.GetExpiresAt(fosite.AccessToken)
	case oauthtoken.KindRefreshToken:
		exp = sess.GetExpiresAt(fosite.RefreshToken)
	default:
		exp = sess.GetExpiresAt(fosite.AuthorizeCode)
	}
	if exp.IsZero() {
		exp = req.GetRequestedAt().Add(s.lifespans[kind])
	}
	var user uuid.NullUUID
	if sess.UserID != uuid.Nil {
		user = uuid.NullUUID{UUID: sess.UserID, Valid: true}
	}
	requested, err1 := json.Marshal(nonNil(req.GetRequestedScopes()))
	granted, err2 := json.Marshal(nonNil(req.GetGrantedScopes()))
	form, err3 := json.Marshal(req.GetRequestForm()) // fosite sanitised it (Request.Sanitize)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	if _, err := tenancy.Client(ctx).ExecContext(ctx, sqlTokenStore, string(kind), hashSignature(sig), req.GetID(), cid,
		sess.CompanyID, user, string(requested), string(granted), string(form), blob, req.GetRequestedAt(), exp); err != nil {
		return fmt.Errorf("store oauth %s: %w", kind, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// get loads a token (locked, so that two concurrent uses of one code or refresh token are
// serialised) and rebuilds its request; an inactive token comes back with its request and
// active false. Company and user come from the token's columns, which the store function
// checked, not from the session blob.
func (s *Store) get(ctx context.Context, kind oauthtoken.Kind, sig string, session fosite.Session) (bool, fosite.Requester, error) {
	var (
		requestID, clientID            string
		company                        uuid.UUID
		user                           uuid.NullUUID
		requested, granted, form, blob []byte
		requestedAt                    time.Time
		active                         bool
	)
	err := tenancy.QueryRow(ctx, sqlToken, []any{string(kind), hashSignature(sig)},
		&requestID, &clientID, &company, &user, &requested, &granted, &form, &blob, &requestedAt, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil, fosite.ErrNotFound
	}
	if err != nil {
		return false, nil, fmt.Errorf("get oauth %s: %w", kind, err)
	}
	cl, err := s.GetClient(ctx, clientID)
	if err != nil {
		return false, nil, err // a disabled or deleted client's tokens are unknown
	}
	r := fosite.NewRequest()
	if form != nil {
		if err := json.Unmarshal(form, &r.Form); err != nil {
			return false, nil, fmt.Errorf("oauth form: %w", err)
		}
	}
	if err := errors.Join(json.Unmarshal(requested, &r.RequestedScope), json.Unmarshal(granted, &r.GrantedScope)); err != nil {
		return false, nil, fmt.Errorf("oauth scopes: %w", err)
	}
	if session != nil {
		if err := json.Unmarshal(blob, session); err != nil {
			return false, nil, fmt.Errorf("oauth session: %w", err)
		}
		if sess, ok := session.(*Session); ok {
			sess.CompanyID, sess.UserID = company, user.UUID
		}
	}
	r.ID = requestID
	r.RequestedAt = requestedAt
	r.Client = cl
	r.Session = session
	return active, r, nil
}

// getAs is get for a kind whose inactive rows answer inactive: with the request for
// ErrInvalidatedAuthorizeCode and ErrInactiveToken (fosite revokes what the request granted),
// without it for ErrNotFound (an inactive access token is simply not there).
func (s *Store) getAs(ctx context.Context, kind oauthtoken.Kind, sig string, session fosite.Session, inactive error) (fosite.Requester, error) {
	active, r, err := s.get(ctx, kind, sig, session)
	if err != nil {
		return nil, err
	}
	if active {
		return r, nil
	}
	if errors.Is(inactive, fosite.ErrNotFound) {
		return nil, inactive
	}
	return r, inactive
}

func (s *Store) deactivate(ctx context.Context, kind oauthtoken.Kind, sig string) error {
	_, err := tenancy.Client(ctx).ExecContext(ctx, sqlTokenDeactivate, string(kind), hashSignature(sig))
	return err
}

// CreateAuthorizeCodeSession stores a code.
func (s *Store) CreateAuthorizeCodeSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, oauthtoken.KindAuthorizeCode, sig, req)
}

// GetAuthorizeCodeSession returns the code's request; a used code returns it with
// ErrInvalidatedAuthorizeCode, upon which fosite revokes the tokens issued for it.
func (s *Store) GetAuthorizeCodeSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	return s.getAs(ctx, oauthtoken.KindAuthorizeCode, sig, session, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession marks a code used.
func (s *Store) InvalidateAuthorizeCodeSession(ctx context.Context, sig string) error {
	return s.deactivate(ctx, oauthtoken.KindAuthorizeCode, sig)
}

// CreatePKCERequestSession stores the code's PKCE challenge.
func (s *Store) CreatePKCERequestSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, oauthtoken.KindPkce, sig, req)
}

// GetPKCERequestSession returns the code's PKCE request.
func (s *Store) GetPKCERequestSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	_, r, err := s.get(ctx, oauthtoken.KindPkce, sig, session)
	return r, err
}

// DeletePKCERequestSession removes the challenge once the code was exchanged.
func (s *Store) DeletePKCERequestSession(ctx context.Context, sig string) error {
	_, err := tenancy.Client(ctx).ExecContext(ctx, sqlPKCEDelete, hashSignature(sig))
	return err
}

// CreateAccessTokenSession stores an access token.
func (s *Store) CreateAccessTokenSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, oauthtoken.KindAccessToken, sig, req)
}

// GetAccessTokenSession returns an active access token's request.
func (s *Store) GetAccessTokenSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	return s.getAs(ctx, oauthtoken.KindAccessToken, sig, session, fosite.ErrNotFound)
}

// DeleteAccessTokenSession removes an access token.
func (s *Store) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return s.deactivate(ctx, oauthtoken.KindAccessToken, sig)
}

// CreateRefreshTokenSession stores a refresh token.
func (s *Store) CreateRefreshTokenSession(ctx context.Context, sig, _ string, req fosite.Requester) error {
	return s.create(ctx, oauthtoken.KindRefreshToken, sig, req)
}

// GetRefreshTokenSession returns a refresh token's request; a rotated one returns it with
// ErrInactiveToken, upon which fosite revokes the whole grant (reuse detection).
func (s *Store) GetRefreshTokenSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	return s.getAs(ctx, oauthtoken.KindRefreshToken, sig, session, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession deactivates a refresh token.
func (s *Store) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return s.deactivate(ctx, oauthtoken.KindRefreshToken, sig)
}

// RotateRefreshToken retires the used refresh token and the grant's access tokens.
func (s *Store) RotateRefreshToken(ctx context.Context, requestID, sig string) error {
	if err := s.deactivate(ctx, oauthtoken.KindRefreshToken, sig); err != nil {
		return err
	}
	_, err := s.revoke(ctx, requestID, oauthtoken.KindAccessToken) // the grant lives on: no event
	return err
}

// RevokeRefreshToken revokes every refresh token of a grant (fosite: revocation, reuse).
func (s *Store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.revokeGrant(ctx, requestID, oauthtoken.KindRefreshToken)
}

// RevokeRefreshTokenMaybeGracePeriod revokes at once: there is no grace period.
func (s *Store) RevokeRefreshTokenMaybeGracePeriod(ctx context.Context, requestID, _ string) error {
	return s.RevokeRefreshToken(ctx, requestID)
}

// RevokeAccessToken revokes every access token of a grant (fosite: revocation, reuse).
func (s *Store) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.revokeGrant(ctx, requestID, oauthtoken.KindAccessToken)
}

// revokeGrant revokes the tokens of kind of a grant and, when that ends the grant, records
// oauth_grant.revoked.
func (s *Store) revokeGrant(ctx context.Context, requestID string, kind oauthtoken.Kind) error {
	n, err := s.revoke(ctx, requestID, kind)
	if err != nil || n == 0 {
		return err
	}
	return s.grantRevoked(ctx, requestID)
}

func (s *Store) revoke(ctx context.Context, requestID string, kind oauthtoken.Kind) (int, error) {
	var n int
	err := tenancy.QueryRow(ctx, sqlGrantRevoke, []any{requestID, string(kind)}, &n)
	if err != nil && !errors.Is(err, context.Canceled) {
		return 0, fmt.Errorf("revoke oauth %s: %w", kind, err)
	}
	return n, err
}
