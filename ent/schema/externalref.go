package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// ExternalRef is the lookup table behind externalReferences: which record of a resource carries
// (source, externalId) in one company. ExternalRefMixin keeps it in step with the records.
type ExternalRef struct{ ent.Schema }

// Mixin of ExternalRef.
func (ExternalRef) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of ExternalRef.
func (ExternalRef) Fields() []ent.Field {
	return []ent.Field{
		field.String("resource").NotEmpty().MaxLen(50),
		field.UUID("resource_id", uuid.UUID{}),
		field.String("source").NotEmpty().MaxLen(100),
		field.String("external_id").NotEmpty().MaxLen(255),
	}
}

// Indexes of ExternalRef.
func (ExternalRef) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "resource", "source", "external_id").Unique(),
		index.Fields("company_id", "resource", "resource_id"),
	}
}
