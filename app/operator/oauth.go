package operator

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/oauthclient"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// OAuthClient is a registered partner app as the operator sees it. Secret is set only in the
// answer of create and rotate-secret.
type OAuthClient struct {
	ID           uuid.UUID  `json:"id"`
	Name         string     `json:"name"`
	CompanyID    *uuid.UUID `json:"companyId"`
	RedirectURIs []string   `json:"redirectUris"`
	Scopes       []string   `json:"scopes"`
	Public       bool       `json:"public"`
	Env          string     `json:"env"`
	Status       string     `json:"status"`
	CreatedAt    time.Time  `json:"createdAt"`
	Secret       string     `json:"secret,omitempty"`
}

func newOAuthClient(c *ent.OAuthClient) OAuthClient {
	return OAuthClient{ID: c.ID, Name: c.Name, CompanyID: c.CompanyID, RedirectURIs: c.RedirectUris, Scopes: c.Scopes,
		Public: c.Public, Env: string(c.Env), Status: string(c.Status), CreatedAt: c.CreatedAt}
}

// NewOAuthClientInput is what CreateOAuthClient needs. CompanyID binds the client to one live
// company (client credentials allowed); without it the client is a partner app for any
// company's users.
type NewOAuthClientInput struct {
	Name         string
	RedirectURIs []string
	Scopes       []string
	Public       bool
	CompanyID    *uuid.UUID
	Env          string
}

// newClientSecret returns a secret (256 random bits) and its SHA-256.
func newClientSecret() (string, []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	s := "bdcs_" + base64.RawURLEncoding.EncodeToString(b)
	h := sha256.Sum256([]byte(s))
	return s, h[:]
}

// validRedirectURI: absolute, no fragment, https, or http only on a loopback host (RFC 8252).
func validRedirectURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.User != nil {
		return false
	}
	h := u.Hostname()
	return u.Scheme == "https" || u.Scheme == "http" && (h == "localhost" || h == "127.0.0.1" || h == "::1")
}

// CreateOAuthClient registers a client and returns it with its secret (confidential clients),
// shown this once: only its SHA-256 is stored.
func (s *Service) CreateOAuthClient(ctx context.Context, in NewOAuthClientInput) (OAuthClient, error) {
	var out OAuthClient
	var v errs.Invalid
	in.Name = strings.TrimSpace(in.Name)
	v.Require("name", in.Name != "")
	v.Check("redirectUris", len(in.RedirectURIs) > 0, "required", "at least one redirect URI")
	for _, u := range in.RedirectURIs {
		v.Check("redirectUris", validRedirectURI(u), "invalid_redirect_uri",
			fmt.Sprintf("%q must be an absolute https URI (http only on localhost) without fragment", u))
	}
	v.Check("scopes", len(in.Scopes) > 0, "required", "name the scopes the client may ask for")
	for _, sc := range in.Scopes {
		v.Check("scopes", sc != "*" && policy.ValidScope(sc), "unknown_scope", fmt.Sprintf("%q is not a scope", sc))
	}
	if in.Env == "" {
		in.Env = tenancy.EnvLive
	}
	v.Check("env", in.Env == tenancy.EnvLive || in.Env == tenancy.EnvTest, "invalid_enum", "must be live or test")
	if err := v.Err(); err != nil {
		return out, err
	}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		q := db.OAuthClient.Create().SetName(in.Name).SetRedirectUris(uniq(in.RedirectURIs)).
			SetScopes(uniq(in.Scopes)).SetPublic(in.Public).SetEnv(oauthclient.Env(in.Env))
		if in.CompanyID != nil {
			live, err := liveCompany(ctx, db, *in.CompanyID)
			if err != nil {
				return err
			}
			q.SetCompanyID(live.ID)
		}
		secret := ""
		if !in.Public {
			var hash []byte
			secret, hash = newClientSecret()
			q.SetSecretHash(hash)
		}
		c, err := q.Save(ctx)
		if err != nil {
			return err
		}
		out = newOAuthClient(c)
		out.Secret = secret
		return nil
	})
	return out, err
}

// ListOAuthClients lists every client.
func (s *Service) ListOAuthClients(ctx context.Context) ([]OAuthClient, error) {
	var out []OAuthClient
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		cs, err := db.OAuthClient.Query().Order(ent.Asc(oauthclient.FieldCreatedAt)).All(ctx)
		for _, c := range cs {
			out = append(out, newOAuthClient(c))
		}
		return err
	})
	return out, err
}

func findClient(ctx context.Context, db *ent.Client, ref string) (*ent.OAuthClient, error) {
	id, err := uuid.Parse(ref)
	if err != nil {
		return nil, errs.NotFound("oauth client %s not found", ref)
	}
	c, err := db.OAuthClient.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "oauth client %s", ref)
	}
	return c, nil
}

// RotateOAuthClientSecret replaces a confidential client's secret at once: the old one stops
// working (tokens already issued stay valid).
func (s *Service) RotateOAuthClientSecret(ctx context.Context, ref string) (OAuthClient, error) {
	var secret string
	return onOne(ctx, s, ref, findClient, func(ctx context.Context, _ *ent.Client, c *ent.OAuthClient) (*ent.OAuthClient, error) {
		if c.Public {
			return nil, errs.Conflict("public_client", "a public client has no secret")
		}
		var hash []byte
		secret, hash = newClientSecret()
		return c.Update().SetSecretHash(hash).Save(ctx)
	}, func(c *ent.OAuthClient) OAuthClient {
		out := newOAuthClient(c)
		out.Secret = secret
		return out
	})
}

// DisableOAuthClient refuses the client's tokens from the next request on and its new
// authorizations.
func (s *Service) DisableOAuthClient(ctx context.Context, ref string) (OAuthClient, error) {
	return onOne(ctx, s, ref, findClient, func(ctx context.Context, _ *ent.Client, c *ent.OAuthClient) (*ent.OAuthClient, error) {
		return c.Update().SetStatus(oauthclient.StatusDisabled).Save(ctx)
	}, newOAuthClient)
}

// DeleteOAuthClient removes a client with its tokens and consents.
func (s *Service) DeleteOAuthClient(ctx context.Context, ref string) error {
	_, err := onOne(ctx, s, ref, findClient, func(ctx context.Context, db *ent.Client, c *ent.OAuthClient) (*ent.OAuthClient, error) {
		return c, db.OAuthClient.DeleteOne(c).Exec(ctx)
	}, newOAuthClient)
	return err
}

// SetPassword sets the sign-in password (argon2id) of a user of a live company, by id or by
// e-mail within companyID.
func (s *Service) SetPassword(ctx context.Context, companyID uuid.UUID, ref, password string) error {
	if len([]rune(password)) < 10 {
		return errs.InvalidField("password", "too_short", "must have at least 10 characters")
	}
	if len(password) > 1024 {
		return errs.InvalidField("password", "too_long", "must have at most 1024 bytes")
	}
	hash := passhash.Hash(password)
	return s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		live, err := liveCompany(ctx, db, companyID)
		if err != nil {
			return err
		}
		q := db.User.Query().Where(user.CompanyID(live.ID))
		if id, err := uuid.Parse(ref); err == nil {
			q.Where(user.ID(id))
		} else {
			q.Where(user.Email(strings.ToLower(strings.TrimSpace(ref))))
		}
		u, err := q.Only(ctx)
		if ent.IsNotFound(err) { // not errs.FromEnt: the message names the company after "not found"
			return errs.NotFound("user %s not found in company %s", ref, live.ID)
		}
		if err != nil {
			return err
		}
		return u.Update().SetPasswordHash(hash).Exec(ctx)
	})
}
