package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// ContractStatuses are the allowed values of a contract's status (issue 12).
var ContractStatuses = []string{"active", "offer", "application", "suspended", "cancelled", "ended"}

// PaymentFrequencies are the allowed values of a contract's paymentFrequency.
var PaymentFrequencies = []string{"monthly", "quarterly", "half-yearly", "yearly", "single"}

// Insurer is an entry of the platform's insurer catalog, keyed by the GDV VU number. It is not
// company data: every company reads the same catalog, only the operator (or an import, through
// a SECURITY DEFINER function that never takes a name from the file) adds to it.
type Insurer struct{ ent.Schema }

// Mixin of Insurer.
func (Insurer) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Fields of Insurer.
func (Insurer) Fields() []ent.Field {
	return []ent.Field{
		// vu_number is the GDV VU-Nummer (up to 5 characters, as the Vorsatz has it).
		field.String("vu_number").NotEmpty().MaxLen(5).Immutable(),
		field.String("name").NotEmpty().MaxRuneLen(200),
		// correspondence_email is where correspondence cases to this insurer are routed
		// (operator: brokerdesk insurer set-email); empty until set.
		field.String("correspondence_email").Default("").MaxLen(320),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of Insurer.
func (Insurer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("vu_number").Unique()}
}

// Contract is an insurance contract of a contact.
type Contract struct{ ent.Schema }

// Mixin of Contract.
func (Contract) Mixin() []ent.Mixin {
	// A contract is as visible as its contact (policy contact_visibility in migrations/).
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{},
		ExternalRefMixin{Resource: "contract"}}
}

func dateField(name string) ent.Field {
	return field.Time(name).Optional().Nillable().SchemaType(map[string]string{dialect.Postgres: "date"})
}

func moneyField(name string) ent.Field {
	return field.Other(name, schematype.Money{}).Optional().Nillable().
		SchemaType(map[string]string{dialect.Postgres: "numeric(14,2)"})
}

// Fields of Contract.
func (Contract) Fields() []ent.Field {
	return []ent.Field{
		// contact_id and owner_id are kept inside the company by composite foreign keys in
		// migrations/, not ent edges; insurer_id is the edge insurer (Edges).
		field.UUID("contact_id", uuid.UUID{}),
		field.UUID("insurer_id", uuid.UUID{}),
		field.String("policy_number").NotEmpty().MaxRuneLen(50),
		// type is the GDV Sparte code ("030"), a key of GET /contract-types.
		field.String("type").NotEmpty().MaxLen(3),
		field.Enum("status").Values(ContractStatuses...),
		// status_code is GDV's Vertragsstatus as delivered ("" when the contract came otherwise).
		field.String("status_code").Default("").MaxLen(2),
		dateField("start_date"),
		dateField("end_date"),
		dateField("main_renewal_date"),
		moneyField("premium"),
		field.Enum("payment_frequency").Values(PaymentFrequencies...).Optional().Nillable(),
		// annual_premium is premium × payments a year, computed on every write.
		moneyField("annual_premium"),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable(),
		// source describes the last import that wrote the contract (nil: never imported).
		field.JSON("source", &schematype.ImportSource{}).Optional(),
		// details keeps the line-specific records of an import (GDV 0210, 0220, …) as read.
		field.JSON("details", []map[string]any{}).Optional(),
	}
}

// Edges of Contract: its insurer in the catalog. The edge names the hand-written foreign key
// tenant_contracts_insurer (migrations/20261124060100) as its own, so ent's schema and the
// migrations describe the same constraint and the edge adds none: services load the insurer
// with WithInsurer instead of a second query by hand.
func (Contract) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("insurer", Insurer.Type).Field("insurer_id").Unique().Required().
			StorageKey(edge.Symbol("tenant_contracts_insurer")),
	}
}

// Indexes of Contract.
func (Contract) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "updated_at", "id"),
		index.Fields("company_id", "contact_id"),
		// One contract per insurer, policy number and Sparte: the GDV key of a contract (a
		// bundled contract repeats its policy number under several Sparten).
		index.Fields("company_id", "insurer_id", "policy_number", "type").Unique(),
	}
}
