package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// The sub-resources of a contact (issue 8): relationships, household finances and the
// activity timeline (notes, e-mails, system entries). Each belongs to one contact of the
// company (composite foreign keys with ON DELETE CASCADE in migrations/) and is exactly as
// visible as it: VisibleByContact here, app_restrict_visibility in the tenancy migration.

// ContactRelationship is one direction of a relation between two contacts: role is the role
// of the related contact seen from contact_id. Both directions are stored (pair_id joins them):
// partner is symmetric, parent and child are each other's inverse, employer's inverse is
// employee.
type ContactRelationship struct{ ent.Schema }

// Mixin of ContactRelationship: visible only when both contacts are.
func (ContactRelationship) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"},
		VisibleByContact{Field: "related_contact_id"}, TimeMixin{}}
}

// Fields of ContactRelationship.
func (ContactRelationship) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.UUID("related_contact_id", uuid.UUID{}).Immutable(),
		field.Enum("role").Values("partner", "parent", "child", "employer", "employee").Immutable(),
		// position is the job of the employee, on both rows of an employer pair.
		field.String("position").Default("").MaxRuneLen(150).Immutable(),
		field.UUID("pair_id", uuid.UUID{}).Immutable(),
	}
}

// Indexes of ContactRelationship.
func (ContactRelationship) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "contact_id", "related_contact_id", "role").Unique(),
		index.Fields("company_id", "related_contact_id"),
		index.Fields("company_id", "pair_id"),
	}
}

// ContactFinance is the household finances of a private contact: one row per contact, lists
// stored as JSON (replaced as a whole by PUT), totals computed on read.
type ContactFinance struct{ ent.Schema }

// Mixin of ContactFinance.
func (ContactFinance) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of ContactFinance.
func (ContactFinance) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.JSON("income", []schematype.FinanceItem{}).Default([]schematype.FinanceItem{}),
		field.JSON("expenses", []schematype.FinanceItem{}).Default([]schematype.FinanceItem{}),
		field.JSON("assets", []schematype.FinanceItem{}).Default([]schematype.FinanceItem{}),
		field.JSON("liabilities", []schematype.FinanceItem{}).Default([]schematype.FinanceItem{}),
		field.JSON("real_estate", []schematype.FinanceItem{}).Default([]schematype.FinanceItem{}),
	}
}

// Indexes of ContactFinance.
func (ContactFinance) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "contact_id").Unique()}
}

// ContactActivity is one entry of a contact's timeline: a note (written by a user, editable,
// deletable), an e-mail or a system entry (written by the service, immutable).
type ContactActivity struct{ ent.Schema }

// Mixin of ContactActivity.
func (ContactActivity) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{},
		ExternalRefMixin{Resource: "note"}}
}

// Fields of ContactActivity.
func (ContactActivity) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.Enum("kind").Values("note", "email", "system").Immutable(),
		// event names what a system entry records (e.g. "relationship.created"); empty otherwise.
		field.String("event").Default("").MaxLen(100).Immutable(),
		field.Text("content").Default("").MaxRuneLen(50000),
		field.Time("occurred_at").Default(time.Now),
		// author_id is the user whose credential wrote the entry; nil for company-level keys and
		// the service.
		field.UUID("author_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// related_contact_id is the other contact a system entry is about (a relationship). Its
		// content holds the placeholder {contact} where the name goes, rendered at read time:
		// the name for a reader who may see that contact, its id for anyone else (issue 20
		// item 4). No foreign key: the entry stays when that contact goes.
		field.UUID("related_contact_id", uuid.UUID{}).Optional().Nillable().Immutable(),
	}
}

// Indexes of ContactActivity: the timeline walks newest first by (occurred_at, id).
func (ContactActivity) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "contact_id", "occurred_at", "id")}
}
