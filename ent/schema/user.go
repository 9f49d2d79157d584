package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// User is a person working at a brokerage. The operator creates users; a user-bound key acts
// with the user's role.
type User struct{ ent.Schema }

// Mixin of User.
func (User) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}, ExternalRefMixin{Resource: "user"}}
}

// Fields of User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		// email is stored trimmed and lower-cased (the service normalises it), unique per company.
		field.String("email").NotEmpty().MaxRuneLen(320),
		field.String("first_name").Default("").MaxRuneLen(100),
		field.String("last_name").Default("").MaxRuneLen(100),
		field.Enum("status").Values("active", "inactive", "suspended").Default("active"),
		field.Enum("role").Values("admin", "manager", "agent").Default("agent"),
		// password_hash is an argon2id PHC string (brokerdesk user set-password); the OAuth
		// sign-in never reads it: SECURITY DEFINER functions give its salt and compare
		// (oauth_server_login_params, oauth_server_login).
		field.String("password_hash").Optional().Nillable().Sensitive(),
	}
}

// Indexes of User.
func (User) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "email").Unique(),
		// keyset pagination of GET /users walks (created_at, id) inside one company
		index.Fields("company_id", "created_at", "id"),
	}
}
