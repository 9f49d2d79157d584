package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
)

// VisibleByOwner makes an entity user-scoped by its owner column (issue 8): a user-bound
// credential sees, updates and deletes only rows it owns or that were delegated to it, unless
// its role sees all. Put it after TenantMixin. The RLS policy app_visible_owner(<field>)
// (migrations/) is the layer underneath.
type VisibleByOwner struct {
	mixin.Schema
	Field string // the owner column, e.g. "owner_id"
	// PortalSelf: the rows are contacts, and a customer's portal session sees its own (by id).
	// Without it a portal session sees none of the rows.
	PortalSelf bool
}

// Policy of VisibleByOwner.
func (m VisibleByOwner) Policy() ent.Policy {
	if m.PortalSelf {
		return privacy.Policy{
			Query:    privacy.QueryPolicy{rule.FilterVisibleOwnerOrPortalSelf(m.Field)},
			Mutation: privacy.MutationPolicy{rule.FilterVisibleOwnerOrPortalSelf(m.Field)},
		}
	}
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterVisibleOwner(m.Field)},
		Mutation: privacy.MutationPolicy{rule.FilterVisibleOwner(m.Field)},
	}
}

// VisibleByContact makes an entity that belongs to a contact as visible as its contact. Put it
// after TenantMixin. The RLS policy app_contact_visible(<field>) is the layer underneath.
type VisibleByContact struct {
	mixin.Schema
	Field string // the contact column, e.g. "contact_id"
}

// Policy of VisibleByContact.
func (m VisibleByContact) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterVisibleContact(m.Field)},
		Mutation: privacy.MutationPolicy{rule.FilterVisibleContact(m.Field)},
	}
}

// Delegation lets delegate see the contacts and leads of delegator (a deputy during leave, an
// assistant), until valid_until when set. Both users belong to the company: composite foreign
// keys in migrations/ keep it so.
type Delegation struct{ ent.Schema }

// Mixin of Delegation.
func (Delegation) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of Delegation.
func (Delegation) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("delegator_id", uuid.UUID{}).Immutable(),
		field.UUID("delegate_id", uuid.UUID{}).Immutable(),
		field.Time("valid_until").Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Edges of Delegation: the two users it joins.
func (Delegation) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("delegator", User.Type).Field("delegator_id").Unique().Required().Immutable(),
		edge.To("delegate", User.Type).Field("delegate_id").Unique().Required().Immutable(),
	}
}

// Indexes of Delegation.
func (Delegation) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "delegator_id", "delegate_id").Unique(),
		index.Fields("company_id", "delegate_id"),
	}
}
