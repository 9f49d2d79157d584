package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// IdempotencyKey remembers the first response to a POST sent with an Idempotency-Key, per
// company, credential, method and route, for 24 hours.
type IdempotencyKey struct{ ent.Schema }

// Mixin of IdempotencyKey.
func (IdempotencyKey) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of IdempotencyKey.
func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("credential_id", uuid.UUID{}).Immutable(),
		field.String("key").NotEmpty().MaxLen(255).Immutable(),
		field.String("method").NotEmpty().MaxLen(10).Immutable(),
		field.String("route").NotEmpty().MaxLen(300).Immutable(),
		// fingerprint is the SHA-256 of the request's content type and body.
		field.Bytes("fingerprint").NotEmpty(),
		field.Enum("status").Values("in_progress", "completed").Default("in_progress"),
		// locked_until: an in_progress record past it belongs to a request that died; a retry
		// may take it over.
		field.Time("locked_until"),
		field.Int("response_status").Optional(),
		field.JSON("response_headers", map[string]string{}).Optional(),
		field.Bytes("response_body").Optional(),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("expires_at"),
	}
}

// Indexes of IdempotencyKey.
func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "credential_id", "method", "route", "key").Unique(),
		index.Fields("expires_at"),
	}
}
