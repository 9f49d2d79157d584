package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// Contact is a person or business the brokerage advises. This is the minimal shape lead
// conversion needs; the contacts issue extends it with field groups.
type Contact struct{ ent.Schema }

// Mixin of Contact.
func (Contact) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByOwner{Field: "owner_id"}, TimeMixin{}, VersionMixin{},
		ExternalRefMixin{Resource: "contact"}}
}

// Fields of Contact.
func (Contact) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("type").Values("private", "business"),
		field.String("first_name").Default("").MaxRuneLen(100),
		field.String("last_name").Default("").MaxRuneLen(100),
		field.String("company_name").Default("").MaxRuneLen(200),
		field.String("email").Optional().Nillable().MaxRuneLen(255),
		field.String("email_key").Optional().Nillable().MaxRuneLen(255),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable(),
	}
}

// Indexes of Contact.
func (Contact) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "email_key"),
	}
}

// ContactPhone is one phone number of a contact.
type ContactPhone struct{ ent.Schema }

// Mixin of ContactPhone.
func (ContactPhone) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}}
}

// Fields of ContactPhone.
func (ContactPhone) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}),
		field.String("number").NotEmpty().MaxRuneLen(50),
		// number_key is the number in E.164, for matching.
		field.String("number_key").Default("").MaxRuneLen(50),
		field.String("type").Default("other").MaxRuneLen(20),
		field.Bool("is_primary").Default(false),
	}
}

// Indexes of ContactPhone.
func (ContactPhone) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "number_key"),
	}
}
