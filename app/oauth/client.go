package oauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/ory/fosite"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Client adapts a stored client to fosite.Client. A company-bound client may also use client
// credentials; a partner client only the authorization code.
type Client struct{ c *ent.OAuthClient }

// GetID is the client_id: the client's UUID.
func (c *Client) GetID() string { return c.c.ID.String() }

// GetHashedSecret is what fosite hands secretHasher.Compare with the presented secret: not the
// stored hash, which stays in the database (oauth_server_client gives none), but the client's
// id, for which the database tells whether the secret is right. Nil for a public client.
func (c *Client) GetHashedSecret() []byte {
	if c.c.Public {
		return nil
	}
	return c.c.ID[:]
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

// secretHasher checks client secrets: the database compares the SHA-256 of the presented
// secret with the client's (oauth_server_client_secret) and answers with a verdict. Secrets
// carry 256 random bits, like API keys, so a slow hash buys nothing
// (docs/decisions/auth-and-oauth.md "Secrets").
type secretHasher struct{}

// Compare checks data, the presented secret, for the client whose id is hash
// (Client.GetHashedSecret), in the transaction of ctx.
func (secretHasher) Compare(ctx context.Context, hash, data []byte) error {
	id, err := uuid.FromBytes(hash)
	if err != nil {
		return errors.New("client secret mismatch")
	}
	h := sha256.Sum256(data)
	var ok bool
	if err := tenancy.QueryRow(ctx, sqlClientSecret, []any{id, h[:]}, &ok); err != nil {
		return fmt.Errorf("check client secret: %w", err)
	}
	if !ok {
		return errors.New("client secret mismatch")
	}
	return nil
}

// Hash is the SHA-256 of a secret, as the operator stores it.
func (secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	h := sha256.Sum256(data)
	return h[:], nil
}
