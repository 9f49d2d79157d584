package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/oauthclient"
	"github.com/brokerdesk/brokerdesk/ent/oauthtoken"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Store is fosite's storage over ent. Every call runs in the transaction of the OAuth request
// (tenancy.Client(ctx)), which the handler begins with tenancy.WithOAuthServer. Tokens are kept
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
	cl, err := tenancy.Client(ctx).OAuthClient.Query().
		Where(oauthclient.ID(cid), oauthclient.StatusEQ(oauthclient.StatusActive)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get oauth client: %w", err)
	}
	return &Client{c: cl}, nil
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
	q := tenancy.Client(ctx).OAuthToken.Create().SetKind(kind).SetSignatureHash(hashSignature(sig)).
		SetRequestID(req.GetID()).SetClientID(cid).SetCompanyID(sess.CompanyID).
		SetRequestedScopes(nonNil(req.GetRequestedScopes())).SetGrantedScopes(nonNil(req.GetGrantedScopes())).
		SetForm(map[string][]string(req.GetRequestForm())).SetSession(blob).
		SetRequestedAt(req.GetRequestedAt()).SetExpiresAt(exp)
	if sess.UserID != uuid.Nil {
		q.SetUserID(sess.UserID)
	}
	if err := q.Exec(ctx); err != nil {
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

// get loads a token row (locked, so that two concurrent uses of one code or refresh token are
// serialised) and rebuilds its request; inactive rows come back with their request too.
func (s *Store) get(ctx context.Context, kind oauthtoken.Kind, sig string, session fosite.Session) (*ent.OAuthToken, fosite.Requester, error) {
	row, err := tenancy.Client(ctx).OAuthToken.Query().
		Where(oauthtoken.SignatureHash(hashSignature(sig)), oauthtoken.KindEQ(kind)).ForUpdate().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("get oauth %s: %w", kind, err)
	}
	cl, err := s.GetClient(ctx, row.ClientID.String())
	if err != nil {
		return nil, nil, err // a disabled or deleted client's tokens are unknown
	}
	if session != nil {
		if err := json.Unmarshal(row.Session, session); err != nil {
			return nil, nil, fmt.Errorf("oauth session: %w", err)
		}
	}
	r := fosite.NewRequest()
	r.ID = row.RequestID
	r.RequestedAt = row.RequestedAt
	r.Client = cl
	r.RequestedScope = row.RequestedScopes
	r.GrantedScope = row.GrantedScopes
	r.Form = url.Values(row.Form)
	r.Session = session
	return row, r, nil
}

func (s *Store) deactivate(ctx context.Context, kind oauthtoken.Kind, sig string) error {
	_, err := tenancy.Client(ctx).OAuthToken.Update().
		Where(oauthtoken.SignatureHash(hashSignature(sig)), oauthtoken.KindEQ(kind)).SetActive(false).Save(ctx)
	return err
}

func (s *Store) remove(ctx context.Context, kind oauthtoken.Kind, sig string) error {
	_, err := tenancy.Client(ctx).OAuthToken.Delete().
		Where(oauthtoken.SignatureHash(hashSignature(sig)), oauthtoken.KindEQ(kind)).Exec(ctx)
	return err
}

// CreateAuthorizeCodeSession stores a code.
func (s *Store) CreateAuthorizeCodeSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, oauthtoken.KindAuthorizeCode, sig, req)
}

// GetAuthorizeCodeSession returns the code's request; a used code returns it with
// ErrInvalidatedAuthorizeCode, upon which fosite revokes the tokens issued for it.
func (s *Store) GetAuthorizeCodeSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	row, r, err := s.get(ctx, oauthtoken.KindAuthorizeCode, sig, session)
	if err != nil {
		return nil, err
	}
	if !row.Active {
		return r, fosite.ErrInvalidatedAuthorizeCode
	}
	return r, nil
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
	return s.remove(ctx, oauthtoken.KindPkce, sig)
}

// CreateAccessTokenSession stores an access token.
func (s *Store) CreateAccessTokenSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, oauthtoken.KindAccessToken, sig, req)
}

// GetAccessTokenSession returns an active access token's request.
func (s *Store) GetAccessTokenSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	row, r, err := s.get(ctx, oauthtoken.KindAccessToken, sig, session)
	if err != nil {
		return nil, err
	}
	if !row.Active {
		return nil, fosite.ErrNotFound
	}
	return r, nil
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
	row, r, err := s.get(ctx, oauthtoken.KindRefreshToken, sig, session)
	if err != nil {
		return nil, err
	}
	if !row.Active {
		return r, fosite.ErrInactiveToken
	}
	return r, nil
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
	n, err := tenancy.Client(ctx).OAuthToken.Update().
		Where(oauthtoken.RequestID(requestID), oauthtoken.KindEQ(kind), oauthtoken.Active(true)).
		SetActive(false).Save(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		return 0, fmt.Errorf("revoke oauth %s: %w", kind, err)
	}
	return n, err
}
