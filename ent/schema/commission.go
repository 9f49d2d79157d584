package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Commissions (issue 24): insurer courtage statements uploaded as CSV, GDV 0400 or BiPRO
// Abrechnung, parsed on a river job into entries matched to contracts by insurer and policy
// number, and the liability rules of the cancellation-liability report. Every table is company
// data under row-level security (migrations/…_commissions_tenancy.sql); the composite tenant
// keys are hand-written there.

// Enumerations of the area.
var (
	// CommissionFormats are the spec's import formats.
	CommissionFormats = []string{"csv", "gdv_0400", "bipro_430_5"}
	// CommissionStatementStatuses are the spec's (moved by PATCH).
	CommissionStatementStatuses = []string{"received", "reconciled", "disputed"}
	// CommissionImportStatuses: where the parse of the uploaded file stands (queued → processing
	// → processed, or failed when the file could not be read at all).
	CommissionImportStatuses = []string{"queued", "processing", "processed", "failed"}
	// CommissionEntryTypes: commission (GDV Sollstellungsart 40), cancellation (41, Storno
	// Provision: negative), correction (90), premium (the premium postings), other.
	CommissionEntryTypes = []string{"commission", "cancellation", "correction", "premium", "other"}
	// CommissionMatches: how an entry got its contract.
	CommissionMatches = []string{"auto", "manual"}
)

// CommissionStatement is one uploaded insurer statement: the file in blob storage, its parse
// state and what the broker decided (status, note).
type CommissionStatement struct{ ent.Schema }

// Mixin of CommissionStatement.
func (CommissionStatement) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}}
}

func commissionDate(name string) ent.Field {
	return field.Time(name).Optional().Nillable().SchemaType(map[string]string{dialect.Postgres: "date"})
}

// Fields of CommissionStatement.
func (CommissionStatement) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("format").Values(CommissionFormats...).Immutable(),
		field.Enum("status").Values(CommissionStatementStatuses...).Default("received"),
		field.Enum("import_status").Values(CommissionImportStatuses...).Default("queued"),
		// insurer_id: given with the upload, or read from the file (the GDV Vorsatz's VU number,
		// the BiPRO sender); nil while unknown.
		field.UUID("insurer_id", uuid.UUID{}).Optional().Nillable(),
		field.String("filename").NotEmpty().MaxRuneLen(255).Immutable(),
		field.Int64("size").NonNegative().Immutable(),
		field.String("sha256").MinLen(64).MaxLen(64).Immutable(),
		field.String("blob_key").NotEmpty().MaxLen(300).Immutable(),
		// mapping: the CSV's column mapping (csv only).
		field.JSON("mapping", map[string]string{}).Optional().Immutable(),
		commissionDate("period_from"),
		commissionDate("period_to"),
		field.String("note").Optional().Nillable().MaxRuneLen(2000),
		field.Int("entry_count").Default(0),
		field.Int("matched_count").Default(0),
		field.Other("total", schematype.Money{}).Optional().Nillable().
			SchemaType(map[string]string{dialect.Postgres: "numeric(16,2)"}),
		// issues: what the parse found (line, severity, code, message), as portfolio transfers.
		field.JSON("issues", []schematype.CommissionIssue{}).Default([]schematype.CommissionIssue{}),
		field.String("error").Default("").MaxLen(1000),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Time("processed_at").Optional().Nillable(),
	}
}

// Indexes of CommissionStatement.
func (CommissionStatement) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "insurer_id"),
	}
}

// CommissionEntry is one line of a statement: an amount booked for a policy number. contract_id
// is set when it matched (or was linked by PATCH); contact_id repeats the contract's (kept in
// step by a composite foreign key), so a matched entry is exactly as visible as its contact;
// an unmatched one is visible to every commissions reader of the company (docs/decisions/
// commissions.md).
type CommissionEntry struct{ ent.Schema }

// Mixin of CommissionEntry.
func (CommissionEntry) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of CommissionEntry.
func (CommissionEntry) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("statement_id", uuid.UUID{}).Immutable(),
		field.UUID("insurer_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("contract_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable(),
		// policy_number as the file wrote it; policy_key normalised for matching (upper case,
		// without spaces, dashes, dots and slashes, leading zeros dropped).
		field.String("policy_number").Default("").MaxRuneLen(50).Immutable(),
		field.String("policy_key").Default("").MaxLen(50).Immutable(),
		field.Enum("type").Values(CommissionEntryTypes...).Immutable(),
		// code is the source's own kind (the GDV Sollstellungsart, the BiPRO Buchungsart).
		field.String("code").Default("").MaxLen(20).Immutable(),
		field.Other("amount", schematype.Money{}).
			SchemaType(map[string]string{dialect.Postgres: "numeric(14,2)"}).Immutable(),
		field.Time("booked_on").SchemaType(map[string]string{dialect.Postgres: "date"}).Immutable(),
		field.String("description").Default("").MaxRuneLen(500).Immutable(),
		field.String("note").Optional().Nillable().MaxRuneLen(2000),
		field.Enum("matched_by").Values(CommissionMatches...).Optional().Nillable(),
		// line is the entry's record or row number in the file.
		field.Int("line").Default(0).Immutable(),
	}
}

// Indexes of CommissionEntry.
func (CommissionEntry) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "statement_id", "line"),
		index.Fields("company_id", "booked_on", "id"),
		index.Fields("company_id", "contract_id"),
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "insurer_id", "policy_key"),
	}
}

// CommissionLiabilityRule sets how many months commission stays liable to be clawed back when
// a contract is cancelled (Stornohaftung), per company, optionally per insurer and per contract
// type (a GDV Sparte code or its group): the most specific rule wins over the product's
// defaults (docs/decisions/commissions.md).
type CommissionLiabilityRule struct{ ent.Schema }

// Mixin of CommissionLiabilityRule.
func (CommissionLiabilityRule) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of CommissionLiabilityRule.
func (CommissionLiabilityRule) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("insurer_id", uuid.UUID{}).Optional().Nillable(),
		field.String("contract_type").Default("").MaxLen(3),
		field.Int("months").Min(0).Max(120),
	}
}

// Indexes of CommissionLiabilityRule. One rule per (company, insurer or none, contract type
// or none) is the unique index tenant_commission_liability_rules_key (NULLS NOT DISTINCT, which
// ent cannot say) in migrations/.
func (CommissionLiabilityRule) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "insurer_id", "contract_type")}
}
