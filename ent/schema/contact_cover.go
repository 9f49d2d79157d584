package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"github.com/google/uuid"
)

// ContactCover is what a contact's contracts cover, for the cross-selling report (issue 24):
// one row per contact (id is the contact's id), kept by triggers on contacts and contracts
// (migrations/20261212100300_contact_covers.sql), never written by the app. Counting in the
// write that changes a contract is what lets the report's first page be an index scan in score
// order instead of computing every customer's gaps (8 s at a million contracts). The row
// carries its contact's owner so that it is visible exactly as its contact is (the same
// app_visible_owner policy, the same ent rule) without a probe of the contact per row.
type ContactCover struct{ ent.Schema }

// Mixin of ContactCover.
func (ContactCover) Mixin() []ent.Mixin {
	return []ent.Mixin{TenantMixin{}, VisibleByOwner{Field: "owner_id"}}
}

// Fields of ContactCover.
func (ContactCover) Fields() []ent.Field {
	return []ent.Field{
		// id is the contact's id (a composite foreign key in migrations/ keeps it in the company
		// and deletes the row with the contact).
		field.UUID("id", uuid.UUID{}).Immutable(),
		// owner_id and contact_type are the contact's, copied on every change of the contact.
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable(),
		field.String("contact_type").MaxLen(20),
		// covers counts the contact's contracts per contract type that hold cover (active,
		// suspended, offer, application); active_contracts its active ones (a customer has one).
		field.JSON("covers", map[string]int{}),
		field.Int("active_contracts").Default(0),
		// score and gaps are cross_selling_gaps(contact_type, covers), set by a trigger on every
		// write: the sum of the weights of the covers the contact lacks, and those covers as
		// "041:30,130:20" (heaviest first).
		field.Int("score").Default(0),
		field.String("gaps").Default(""),
		// rank is -score, the report's order (rank, id) as one ascending key: a cursor continues
		// it with a row comparison the index answers, where "-score" in the statement could not
		// be an index condition behind the policies (integer negation is not leakproof).
		field.Int("rank").Default(0),
	}
}

// The report's indexes (score order for the company and per owner, customers with a gap only)
// are partial and hand-written: migrations/, tenant_contact_covers_*; ent has no WHERE.
