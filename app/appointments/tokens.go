package appointments

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/calendartoken"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// TokenPrefix starts every calendar feed token.
const TokenPrefix = "cal_"

// MaxTokenLifetime bounds an expiresAt given when a token is issued (GitHub's longest custom
// expiry of a personal access token). Without expiresAt a token does not expire; it still dies
// with the credential that issued it.
const MaxTokenLifetime = 366 * 24 * time.Hour

// FeedPath is where a token's feed is served, below the API prefix.
func FeedPath(token string) string { return httpx.URL("calendar", token+".ics") }

// TokenInput is the optional body of POST /users/{userId}/calendar-token.
type TokenInput struct {
	// ExpiresAt ends the token; absent: no expiry.
	ExpiresAt *time.Time `json:"expiresAt"`
}

// TokenView is the answer of POST /users/{userId}/calendar-token: the token is shown once.
type TokenView struct {
	UserID    uuid.UUID  `json:"userId"`
	Token     string     `json:"token"`
	URL       string     `json:"url"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// TokenIssuer names the credential that issued a token: its user, and its API key
// (credentialId) or its OAuth grant's client (oauthClientId), as a webhook endpoint names its
// credential.
type TokenIssuer struct {
	UserID        uuid.UUID  `json:"userId"`
	CredentialID  *uuid.UUID `json:"credentialId"`
	OAuthClientID *uuid.UUID `json:"oauthClientId"`
}

// TokenInfo is one active token of GET /calendar-tokens: never the token itself.
type TokenInfo struct {
	UserID    uuid.UUID   `json:"userId"`
	Prefix    string      `json:"prefix"`
	CreatedAt time.Time   `json:"createdAt"`
	ExpiresAt *time.Time  `json:"expiresAt"`
	IssuedBy  TokenIssuer `json:"issuedBy"`
}

func newTokenInfo(t *ent.CalendarToken) TokenInfo {
	return TokenInfo{UserID: t.UserID, Prefix: t.Prefix, CreatedAt: t.CreatedAt.UTC(), ExpiresAt: utcPtr(t.ExpiresAt),
		IssuedBy: TokenIssuer{UserID: t.IssuerUserID, CredentialID: t.IssuerKeyID, OAuthClientID: t.IssuerClientID}}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// mayManage decides whether the credential of ctx may issue (issue) or revoke userID's feed
// token, after a user of another company (or none) was answered 404. A feed token is a
// credential to one user's calendar, so it is managed by that user's own credential (a key
// bound to the user, or the user's OAuth grant) or by an admin credential (policy.IsAdmin:
// admin:write, and an admin's if user-bound). Issuing needs a user behind the credential even
// for admins: the token remembers who issued it and dies with that credential, and a
// company-level key or client-credentials token acts for nobody in particular.
func mayManage(ctx context.Context, userID uuid.UUID, issue bool) error {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok {
		return errs.Unauthenticated("missing_credential", "no credential")
	}
	exists, err := tenancy.Client(ctx).User.Query().Where(user.ID(userID)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("read user %s: %w", userID, err)
	}
	if !exists {
		return errs.NotFound("user %s not found", userID)
	}
	switch {
	case p.HasUser() && p.UserID == userID:
		return nil
	case issue && !p.HasUser():
		return errs.Forbidden("forbidden",
			"a calendar feed token is issued by a user's credential (the user's own or an admin's), not by a company-level one")
	case !policy.Default().IsAdmin(p):
		return errs.Forbidden("forbidden",
			"a credential manages only its own user's calendar feed unless it administers the company (admin:write)")
	}
	return nil
}

// issuer is what a token remembers of the credential that issued it.
type issuer struct {
	key, client *uuid.UUID
	grant       *string
}

// issuerOf returns the credential of p: its key, or for an OAuth access token the grant behind
// it (the token lives an hour; the grant is what the user authorized).
func issuerOf(ctx context.Context, p *tenancy.Principal) (issuer, error) {
	if p.Kind != tenancy.KindOAuth {
		id := p.KeyID
		return issuer{key: &id}, nil
	}
	var grant string
	var client uuid.UUID
	err := tenancy.QueryRow(ctx, grantQuery, []any{p.KeyID}, &grant, &client)
	if errors.Is(err, sql.ErrNoRows) {
		// The token was resolved by this request's lookup; only a revocation racing it ends here.
		return issuer{}, errs.Unauthenticated("invalid_token", "the access token is no longer active")
	}
	if err != nil {
		return issuer{}, fmt.Errorf("read oauth grant: %w", err)
	}
	return issuer{grant: &grant, client: &client}, nil
}

// checkExpiry validates expiresAt of TokenInput against now.
func checkExpiry(in TokenInput, now time.Time) error {
	if in.ExpiresAt == nil {
		return nil
	}
	var v errs.Invalid
	v.Check("expiresAt", in.ExpiresAt.After(now), "in_the_past", "must lie in the future")
	v.Check("expiresAt", !in.ExpiresAt.After(now.Add(MaxTokenLifetime)), "too_far_ahead",
		"must be at most 366 days ahead; leave it out for a token without expiry")
	return v.Err()
}

// IssuedToken is a feed token as IssueToken stored it, with the token itself: shown once, never
// stored (the row keeps its hash).
type IssuedToken struct {
	*ent.CalendarToken
	Token string
}

// newTokenView is the answer of POST /users/{userId}/calendar-token.
func newTokenView(t IssuedToken) TokenView {
	return TokenView{UserID: t.UserID, Token: t.Token, URL: FeedPath(t.Token), CreatedAt: t.CreatedAt.UTC(),
		ExpiresAt: utcPtr(t.ExpiresAt)}
}

// IssueToken creates the user's feed token, replacing (revoking) the one it had. The token
// remembers the issuing credential and answers only while it is alive and before expiresAt.
func (s *Service) IssueToken(ctx context.Context, userID uuid.UUID, in TokenInput) (IssuedToken, error) {
	if err := mayManage(ctx, userID, true); err != nil {
		return IssuedToken{}, err
	}
	now := s.now()
	if err := checkExpiry(in, now); err != nil {
		return IssuedToken{}, err
	}
	p, _ := tenancy.PrincipalFrom(ctx)
	iss, err := issuerOf(ctx, p)
	if err != nil {
		return IssuedToken{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return IssuedToken{}, err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	db := tenancy.Client(ctx)
	if _, err := db.CalendarToken.Delete().Where(calendartoken.UserID(userID)).Exec(ctx); err != nil {
		return IssuedToken{}, fmt.Errorf("revoke calendar token: %w", err)
	}
	var expires *time.Time
	if in.ExpiresAt != nil {
		e := in.ExpiresAt.UTC().Truncate(time.Microsecond) // as PostgreSQL keeps it
		expires = &e
	}
	t, err := db.CalendarToken.Create().SetUserID(userID).SetTokenHash(tenancy.HashKey(token)).
		SetPrefix(token[:10]).SetCreatedAt(now).SetNillableExpiresAt(expires).SetIssuerUserID(p.UserID).
		SetNillableIssuerKeyID(iss.key).SetNillableIssuerGrantID(iss.grant).SetNillableIssuerClientID(iss.client).
		Save(ctx)
	if err != nil {
		return IssuedToken{}, fmt.Errorf("store calendar token: %w", err)
	}
	return IssuedToken{CalendarToken: t, Token: token}, nil
}

// RevokeToken deletes the user's feed token (404 when it has none).
func (s *Service) RevokeToken(ctx context.Context, userID uuid.UUID) error {
	if err := mayManage(ctx, userID, false); err != nil {
		return err
	}
	n, err := tenancy.Client(ctx).CalendarToken.Delete().Where(calendartoken.UserID(userID)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("revoke calendar token: %w", err)
	}
	if n == 0 {
		return errs.NotFound("user %s has no calendar feed", userID)
	}
	return nil
}

// tokensOldestFirst orders GET /calendar-tokens: (createdAt, id).
var tokensOldestFirst = paging.ByCreated(func(t *ent.CalendarToken) (time.Time, uuid.UUID) { return t.CreatedAt, t.ID })

// ListTokens pages the company's active feed tokens, oldest first (admins: the route needs
// admin:write). Expired tokens and those whose issuing credential died are left out.
func (s *Service) ListTokens(ctx context.Context, _ struct{}, page paging.Page) ([]*ent.CalendarToken, error) {
	k, err := tokensOldestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	rows, err := tenancy.Client(ctx).CalendarToken.Query().Where(liveToken).
		Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list calendar tokens: %w", err)
	}
	return rows, nil
}

// issueToken handles POST /users/{userId}/calendar-token; the body (TokenInput) is optional.
func (h *Handler) issueToken(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	var in TokenInput
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
	}
	t, err := h.svc.IssueToken(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(newTokenView(t))
}

// revokeToken handles DELETE /users/{userId}/calendar-token.
func (h *Handler) revokeToken(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	if err := h.svc.RevokeToken(c.UserContext(), id); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// listTokens handles GET /calendar-tokens: Paged, oldest first.
func (h *Handler) listTokens(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "calendar-tokens", httpx.NoFilter, h.svc.ListTokens, tokensOldestFirst, newTokenInfo)
}
