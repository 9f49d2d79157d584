package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"

	"github.com/ory/fosite"

	"github.com/brokerdesk/brokerdesk/ent"
)

// Client adapts a stored client to fosite.Client. A company-bound client may also use client
// credentials; a partner client only the authorization code.
type Client struct{ c *ent.OAuthClient }

// GetID is the client_id: the client's UUID.
func (c *Client) GetID() string { return c.c.ID.String() }

// GetHashedSecret is the SHA-256 of the secret (secretHasher).
func (c *Client) GetHashedSecret() []byte {
	if c.c.SecretHash == nil {
		return nil
	}
	return *c.c.SecretHash
}

// GetRedirectURIs are the registered redirect URIs, matched exactly.
func (c *Client) GetRedirectURIs() []string { return c.c.RedirectUris }

// GetGrantTypes lists what the client may use.
func (c *Client) GetGrantTypes() fosite.Arguments {
	g := fosite.Arguments{"authorization_code", "refresh_token"}
	if c.c.CompanyID != nil && !c.c.Public {
		g = append(g, "client_credentials")
	}
	return g
}

// GetResponseTypes: the authorization code only.
func (c *Client) GetResponseTypes() fosite.Arguments { return fosite.Arguments{"code"} }

// GetScopes are the scopes the client may ask for.
func (c *Client) GetScopes() fosite.Arguments { return c.c.Scopes }

// IsPublic reports a client without a secret (PKCE only).
func (c *Client) IsPublic() bool { return c.c.Public }

// GetAudience: audiences are not used.
func (c *Client) GetAudience() fosite.Arguments { return nil }

// secretHasher compares client secrets by SHA-256: they carry 256 random bits, like API keys,
// so a slow hash buys nothing (docs/decisions/auth-and-oauth.md "Secrets").
type secretHasher struct{}

func (secretHasher) Compare(_ context.Context, hash, data []byte) error {
	h := sha256.Sum256(data)
	if len(hash) == 0 || subtle.ConstantTimeCompare(hash, h[:]) != 1 {
		return errors.New("client secret mismatch")
	}
	return nil
}

func (secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	h := sha256.Sum256(data)
	return h[:], nil
}
