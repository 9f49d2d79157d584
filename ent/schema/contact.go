package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Contact is a person or business the brokerage advises. This is the minimal shape lead
// conversion needs; the contacts issue extends it with field groups.
type Contact struct{ ent.Schema }

// Mixin of Contact.
func (Contact) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByOwner{Field: "owner_id", PortalSelf: true}, TimeMixin{}, VersionMixin{},
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
		field.Strings("tags").Default([]string{}),
		field.Strings("labels").Default([]string{}),
		field.JSON("custom_fields", map[string]any{}).Default(map[string]any{}),
		// groups holds the non-sensitive field groups (address, personal, ...), sensitive the
		// sensitive ones (identity, health, bank, income), each sealed on its own with its key id.
		field.JSON("groups", schematype.ContactGroups{}).Default(schematype.ContactGroups{}),
		field.JSON("sensitive", map[string]schematype.Sealed{}).Default(map[string]schematype.Sealed{}),
		// search_text is what q searches (lower-case: names, company name, e-mail, city, street,
		// profession, tags), served by a pg_trgm GIN index; sort_name is the key of sort=name.
		// The database derives both, and email_key, from the row on every write (trigger
		// contacts_search_columns, migrations/20261127110000): what a writer sets is replaced.
		field.Text("search_text").Default(""),
		field.String("sort_name").Default("").MaxRuneLen(420),
	}
}

// Edges of Contact. phones rides on contact_phones.contact_id, whose constraint is the
// hand-written tenant_contact_phones_contact ((company_id, contact_id) -> contacts, ON DELETE
// CASCADE, migrations/20261122003400): the edge adds no constraint of its own (migrations.Diff
// leaves an ent foreign key out where a hand-written one covers its columns).
func (Contact) Edges() []ent.Edge {
	return []ent.Edge{edge.To("phones", ContactPhone.Type)}
}

// Indexes of Contact.
func (Contact) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "email_key"),
		index.Fields("company_id", "updated_at", "id"),
		index.Fields("company_id", "sort_name", "id"),
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

// Edges of ContactPhone: the contact the number belongs to (Contact.Edges).
func (ContactPhone) Edges() []ent.Edge {
	return []ent.Edge{edge.From("contact", Contact.Type).Ref("phones").Field("contact_id").Unique().Required()}
}

// Indexes of ContactPhone.
func (ContactPhone) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "number_key"),
	}
}

// CustomFieldDefinition is a company-specific contact field, addressed by key (at most 10 per
// company); contacts hold their values in custom_fields.
type CustomFieldDefinition struct{ ent.Schema }

// Mixin of CustomFieldDefinition.
func (CustomFieldDefinition) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of CustomFieldDefinition.
func (CustomFieldDefinition) Fields() []ent.Field {
	return []ent.Field{
		field.String("key").NotEmpty().MaxRuneLen(50).Immutable(),
		field.String("label").NotEmpty().MaxRuneLen(100),
		field.Enum("data_type").Values("string", "number", "boolean", "date", "enum"),
		field.Strings("options").Default([]string{}),
		field.Int("position").Default(0),
	}
}

// Indexes of CustomFieldDefinition.
func (CustomFieldDefinition) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "key").Unique()}
}
