package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
)

// OAuthClient is a partner application registered by the operator. A client with a company acts
// for that company (client credentials); one without (a partner app) gets tokens only through a
// user's consent. Only the SHA-256 of the secret is stored. Not tenant data in the usual sense:
// the authorization server reads it before any company is known, through SECURITY DEFINER
// functions (migrations/20261127120000_oauth_server_functions.sql), never through ent; requests
// pinned to a company see their own company's clients only.
type OAuthClient struct{ ent.Schema }

// Mixin of OAuthClient.
func (OAuthClient) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, TimeMixin{}} }

// Fields of OAuthClient.
func (OAuthClient) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("company_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.String("name").NotEmpty().MaxRuneLen(200),
		field.Bytes("secret_hash").Optional().Nillable().Sensitive(),
		field.Strings("redirect_uris").Default([]string{}),
		field.Strings("scopes").Default([]string{}),
		field.Bool("public").Default(false).Immutable(),
		field.Enum("env").Values("live", "test").Default("live").Immutable(),
		field.Enum("status").Values("active", "disabled").Default("active"),
	}
}

// Policy of OAuthClient: the operator sees and registers every client, a request pinned to a
// company sees its own only. The OAuth entities' rows are written by the authorization
// server's functions and by the operator, never through ent by request work.
func (OAuthClient) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterByCompany()},
		Mutation: privacy.MutationPolicy{rule.OperatorOnly()},
	}
}

// OAuthToken is one fosite token session: an authorization code, its PKCE challenge, an access
// or a refresh token. signature_hash is the SHA-256 of the token's signature; the token itself
// is never stored. request_id ties together every token of one grant (revocation, reuse).
type OAuthToken struct{ ent.Schema }

// Mixin of OAuthToken.
func (OAuthToken) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Fields of OAuthToken.
func (OAuthToken) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("kind").Values("authorize_code", "pkce", "access_token", "refresh_token").Immutable(),
		field.Bytes("signature_hash").NotEmpty().Immutable().Sensitive(),
		field.String("request_id").NotEmpty().MaxLen(100).Immutable(),
		field.UUID("client_id", uuid.UUID{}).Immutable(),
		// company_id is the live company the grant acts for (a test client's tokens act on its
		// sandbox twin: auth_token maps it).
		field.UUID("company_id", uuid.UUID{}).Immutable(),
		field.UUID("user_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Strings("requested_scopes").Default([]string{}).Immutable(),
		field.Strings("granted_scopes").Default([]string{}).Immutable(),
		field.JSON("form", map[string][]string{}).Optional().Immutable(),
		field.Bytes("session").Immutable(),
		field.Time("requested_at").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Bool("active").Default(true),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of OAuthToken.
func (OAuthToken) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("signature_hash", "kind").Unique(),
		index.Fields("request_id"),
		index.Fields("client_id", "user_id"),
	}
}

// Policy of OAuthToken: see OAuthClient.
func (OAuthToken) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterByCompany()},
		Mutation: privacy.MutationPolicy{rule.OperatorOnly()},
	}
}

// OAuthConsent remembers that a user allowed a client a set of scopes, so that the next
// authorization asking no more skips the consent screen.
type OAuthConsent struct{ ent.Schema }

// Mixin of OAuthConsent.
func (OAuthConsent) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, TimeMixin{}} }

// Fields of OAuthConsent.
func (OAuthConsent) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("company_id", uuid.UUID{}).Immutable(),
		field.UUID("user_id", uuid.UUID{}).Immutable(),
		field.UUID("client_id", uuid.UUID{}).Immutable(),
		field.Strings("scopes").Default([]string{}),
	}
}

// Indexes of OAuthConsent.
func (OAuthConsent) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id", "client_id").Unique()}
}

// Policy of OAuthConsent: see OAuthClient.
func (OAuthConsent) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterByCompany()},
		Mutation: privacy.MutationPolicy{rule.OperatorOnly()},
	}
}
