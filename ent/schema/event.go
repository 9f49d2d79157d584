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
		// What the event concerns, for the visibility of user-bound credentials (issue 8):
		// user_scoped events (about a contact or lead) are visible when their owner at the time
		// (owner_id) or their contact (contact_id, while it exists) is; the others to everyone
		// who holds the type's scope. app/events sets them; no foreign keys: events outlive both.
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Bool("user_scoped").Default(false).Immutable(),
	}
}

// Policy of Event: the visibility of user-scoped events (the RLS policy event_visibility).
func (Event) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterVisibleEvent()},
		Mutation: privacy.MutationPolicy{rule.FilterVisibleEvent()},
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
