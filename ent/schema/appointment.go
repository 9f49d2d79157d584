package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
)

// AppointmentTypes are the allowed values of an appointment's type.
var AppointmentTypes = []string{"meeting", "call", "video", "visit", "other"}

// Appointment is a single appointment or the master of a recurring series (recurrence holds
// an RFC 5545 RRULE, expanded in time_zone). owner_id, contact_id and creator_id are kept
// inside the company by composite foreign keys (migrations/).
type Appointment struct{ ent.Schema }

// Mixin of Appointment.
func (Appointment) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}}
}

// Fields of Appointment.
func (Appointment) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").NotEmpty().MaxRuneLen(500),
		field.Text("description").Default(""),
		field.String("location").Default("").MaxRuneLen(500),
		field.Enum("type").Values(AppointmentTypes...).Default("meeting"),
		field.Time("start_at"),
		field.Time("end_at"),
		field.Bool("all_day").Default(false),
		field.String("time_zone").Default("Europe/Berlin").MaxRuneLen(64),
		// recurrence is the RRULE value without the "RRULE:" prefix; nil for single appointments.
		field.String("recurrence").Optional().Nillable().MaxRuneLen(1000),
		// series_end is the end of the last occurrence (nil: the series never ends); the list
		// reads only series that overlap its window.
		field.Time("series_end").Optional().Nillable(),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// split_from is the series a "following" change split this one off.
		field.UUID("split_from", uuid.UUID{}).Optional().Nillable().Immutable(),
	}
}

// Policy of Appointment: one with a contact is visible when the contact is; one without to
// its owner, its creator (and their delegates) and users who see everything.
func (Appointment) Policy() ent.Policy {
	r := rule.FilterVisibleContactElseOwners("contact_id", "owner_id", "creator_id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// Indexes of Appointment.
func (Appointment) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "start_at", "series_end"),
		index.Fields("company_id", "owner_id"),
		index.Fields("company_id", "contact_id"),
	}
}

// AppointmentException changes or cancels one occurrence of a series: the occurrence that
// starts at occurrence_start (its original start). Cancelled ones are the EXDATEs.
type AppointmentException struct{ ent.Schema }

// Mixin of AppointmentException.
func (AppointmentException) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of AppointmentException. Nil override fields keep the series' value.
func (AppointmentException) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("appointment_id", uuid.UUID{}).Immutable(),
		field.Time("occurrence_start").Immutable(),
		field.Bool("cancelled").Default(false),
		field.String("title").Optional().Nillable().MaxRuneLen(500),
		field.Text("description").Optional().Nillable(),
		field.String("location").Optional().Nillable().MaxRuneLen(500),
		field.String("type").Optional().Nillable().MaxRuneLen(20),
		field.Time("start_at").Optional().Nillable(),
		field.Time("end_at").Optional().Nillable(),
	}
}

// Indexes of AppointmentException.
func (AppointmentException) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "appointment_id", "occurrence_start").Unique()}
}

// CalendarToken is the secret of a user's calendar feed (GET /calendar/{token}.ics). Only its
// SHA-256 is stored; revoking deletes the row. It remembers the credential that issued it (the
// user's own or an admin's: an API key, or an OAuth grant) and answers only while that
// credential is alive and before expires_at (calendar_feed_user in migrations/).
type CalendarToken struct{ ent.Schema }

// Mixin of CalendarToken.
func (CalendarToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of CalendarToken.
func (CalendarToken) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("user_id", uuid.UUID{}).Immutable(),
		field.Bytes("token_hash").Immutable().Sensitive(),
		field.String("prefix").MaxRuneLen(20).Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
		// expires_at: the token answers before it only; NULL never expires (it still dies with
		// its issuing credential).
		field.Time("expires_at").Optional().Nillable().Immutable(),
		// The issuing credential: issuer_user_id is the user behind it (the feed's user, or an
		// admin); issuer_key_id its API key, or issuer_grant_id its OAuth grant (the request id
		// every token of the grant shares) with issuer_client_id the grant's client. Exactly
		// one of key and grant (CHECK in migrations/).
		field.UUID("issuer_user_id", uuid.UUID{}).Immutable(),
		field.UUID("issuer_key_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.String("issuer_grant_id").Optional().Nillable().MaxLen(100).Immutable(),
		field.UUID("issuer_client_id", uuid.UUID{}).Optional().Nillable().Immutable(),
	}
}

// Indexes of CalendarToken.
func (CalendarToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("token_hash").Unique(), index.Fields("company_id", "user_id").Unique()}
}
