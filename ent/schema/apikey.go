package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// APIKey is a credential. Only the SHA-256 of the key is stored; prefix (the first characters)
// identifies it in lists and logs. Authentication reads this table through the SECURITY DEFINER
// function auth_credential (migrations/), before any company is known.
type APIKey struct{ ent.Schema }

// Mixin of APIKey.
func (APIKey) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		// user_id binds the key to one user; a composite FK (company_id, user_id) in migrations/
		// keeps it inside the company.
		field.UUID("user_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Enum("kind").Values("secret", "publishable").Immutable(),
		field.Enum("env").Values("live", "test").Immutable(),
		field.String("prefix").NotEmpty().MaxLen(32).Immutable(),
		field.Bytes("hash").NotEmpty().Immutable().Sensitive(),
		field.Strings("scopes").Default([]string{}),
		field.Strings("allowed_domains").Default([]string{}),
		field.String("name").Default("").MaxLen(200),
		field.Enum("status").Values("active", "inactive").Default("active"),
	}
}

// Indexes of APIKey.
func (APIKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("hash").Unique()}
}
