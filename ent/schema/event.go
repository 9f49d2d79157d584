package schema

import (
	"encoding/json"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Event is an outbox entry: what changed, written in the same transaction as the change. seq
// is assigned at commit by a deferred trigger (migrations/) that serialises commits per company,
// so seq order is commit order and /events can page by it without ever skipping a late commit.
type Event struct{ ent.Schema }

// Mixin of Event.
func (Event) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("type").NotEmpty().MaxLen(100).Immutable(),
		field.Time("occurred_at").Default(time.Now).Immutable(),
		field.JSON("data", json.RawMessage{}).Immutable(),
		field.JSON("actor", schematype.Actor{}).Immutable(),
		field.Int64("seq").Optional().Nillable(),
		// What the event concerns, for the visibility of user-bound credentials (issues 8 and
		// 20): a user_scoped event is visible exactly when its resource was, at the time: its
		// contact (contact_id, while it exists) or a user who saw it then (owner_id: the
		// contact's owner, or the resource's own owner; co_owner_id: a second one, the creator
		// of a task or appointment without a contact) must be visible, and for a resource that
		// needs a second contact visible too (a relationship) that contact or its owner then
		// (related_contact_id, related_owner_id). Other events reach everyone who holds the
		// type's scope. app/events sets them; no foreign keys: events outlive all of them.
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("co_owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("related_contact_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("related_owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Bool("user_scoped").Default(false).Immutable(),
	}
}

// Policy of Event: the visibility of user-scoped events (the RLS policy event_visibility).
func (Event) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterVisibleEvent(), rule.FilterOwnCredentialEvents()},
		Mutation: privacy.MutationPolicy{rule.FilterVisibleEvent(), rule.FilterOwnCredentialEvents()},
	}
}

// Indexes of Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "seq").Unique(),
		index.Fields("occurred_at"),
	}
}

// EventCounter holds a company's last event sequence number; its row lock orders commits.
type EventCounter struct{ ent.Schema }

// Mixin of EventCounter.
func (EventCounter) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of EventCounter.
func (EventCounter) Fields() []ent.Field {
	return []ent.Field{field.Int64("last_seq").Default(0)}
}

// Indexes of EventCounter.
func (EventCounter) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id").Unique().StorageKey("eventcounter_company_unique")}
}
