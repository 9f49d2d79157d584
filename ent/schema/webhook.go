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

// WebhookEndpoint is an HTTPS URL the company's events are pushed to. It receives what its
// credential (the one that created it or last changed its URL) may read, decided at delivery:
// an API key (credential_id) or an OAuth client's authorization (oauth_client_id, and
// oauth_user_id for a user's grant; no user: the company-bound client's client credentials).
// credential_id references api_keys through a composite key (company_id, credential_id) in
// migrations/; deleting the key (or the client) sets it to NULL and deliveries stop.
//
// That credential also owns the endpoint (issue 20 §5): only it and the company's admin
// credentials see and change it (rule.FilterOwnCredential; underneath, the row-level security
// policy endpoint_owner narrows by credential_user_id).
type WebhookEndpoint struct{ ent.Schema }

// Mixin of WebhookEndpoint.
func (WebhookEndpoint) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}}
}

// Fields of WebhookEndpoint.
func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("url").NotEmpty().MaxLen(2048),
		field.String("description").Optional().Nillable().MaxLen(500),
		// event_types are event types of GET /event-types, or the single "*" for all of them.
		field.Strings("event_types"),
		field.Bool("enabled").Default(true),
		// disabled_reason says why the server disabled the endpoint; NULL when enabled or when
		// a caller disabled it.
		// credential_inactive: its key was deactivated or deleted, its user set inactive, its
		// OAuth grant revoked or expired, or its client disabled.
		field.Enum("disabled_reason").Values("endpoint_gone", "failing", "credential_inactive").Optional().Nillable(),
		// secret and previous_secret are the signing secrets, AES-GCM sealed (app/webhooks).
		field.Bytes("secret").NotEmpty().Sensitive(),
		field.Bytes("previous_secret").Optional().Nillable().Sensitive(),
		field.Time("previous_secret_expires_at").Optional().Nillable(),
		field.UUID("credential_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("oauth_client_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("oauth_user_id", uuid.UUID{}).Optional().Nillable(),
		// credential_user_id is the user the credential acts for (a user-bound key's user, or
		// oauth_user_id); NULL for company-level keys and client credentials. The row-level
		// security policy endpoint_owner reads it: the database knows the pinned user, not the
		// credential.
		field.UUID("credential_user_id", uuid.UUID{}).Optional().Nillable(),
		// start_seq: events with seq at or below it committed before the endpoint was created (or
		// re-enabled) and are not delivered to it.
		field.Int64("start_seq").Default(0),
		// failing_since is the first failed attempt after the last success.
		field.Time("failing_since").Optional().Nillable(),
	}
}

// Indexes of WebhookEndpoint.
func (WebhookEndpoint) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "created_at", "id")}
}

// Policy of WebhookEndpoint: a credential sees and changes the endpoints it owns; admin
// credentials and background work (dispatcher, deliveries) all of the company's.
func (WebhookEndpoint) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterOwnCredential()},
		Mutation: privacy.MutationPolicy{rule.FilterOwnCredential()},
	}
}

// WebhookDelivery is one delivery attempt of an event to an endpoint (the delivery log, kept 30
// days). endpoint_id references webhook_endpoints through a composite key in migrations/.
type WebhookDelivery struct{ ent.Schema }

// Mixin of WebhookDelivery.
func (WebhookDelivery) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of WebhookDelivery.
func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("endpoint_id", uuid.UUID{}).Immutable(),
		field.UUID("event_id", uuid.UUID{}).Immutable(),
		field.String("event_type").NotEmpty().MaxLen(100).Immutable(),
		field.Int("attempt").Positive(),
		// status: succeeded (2xx); failed (no further automatic attempt); pending (queued, or
		// failed with another attempt at next_attempt_at).
		field.Enum("status").Values("succeeded", "failed", "pending"),
		field.Int("http_status").Optional().Nillable(),
		field.String("response_body").Optional().Nillable().MaxLen(1024),
		field.Int("duration_ms").Optional().Nillable(),
		field.String("error").Optional().Nillable().MaxLen(1000),
		field.Time("attempted_at").Optional().Nillable(),
		field.Time("next_attempt_at").Optional().Nillable(),
	}
}

// Indexes of WebhookDelivery.
func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "endpoint_id", "created_at", "id"),
		index.Fields("endpoint_id", "event_id"),
		index.Fields("created_at"),
	}
}

// WebhookCursor is how far the company's events have been turned into delivery jobs: the seq of
// the last event dispatched. Its row lock serialises dispatchers of one company.
type WebhookCursor struct{ ent.Schema }

// Mixin of WebhookCursor.
func (WebhookCursor) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of WebhookCursor.
func (WebhookCursor) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("dispatched_seq").Default(0),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Indexes of WebhookCursor.
func (WebhookCursor) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id").Unique().StorageKey("webhookcursor_company_unique")}
}
