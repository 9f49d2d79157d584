package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// ContractExtraction (issue 25) reads contract data from an insurer document (its text layer,
// or OCR of a scan) on a river job: each field with its value, confidence and evidence. It is
// as visible as the document's contact. Company data under row-level security
// (migrations/…_extractions_tenancy.sql).
type ContractExtraction struct{ ent.Schema }

// ExtractionStatuses: queued → processing → completed (fields read) or failed.
var ExtractionStatuses = []string{"queued", "processing", "completed", "failed"}

// Mixin of ContractExtraction.
func (ContractExtraction) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of ContractExtraction.
func (ContractExtraction) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("status").Values(ExtractionStatuses...).Default("queued"),
		field.UUID("document_id", uuid.UUID{}).Immutable(),
		// contact_id: the document's contact (follows it as documents' rows do).
		field.UUID("contact_id", uuid.UUID{}),
		// contract_id: the contract the fields are for (given, or created by apply/auto-apply).
		field.UUID("contract_id", uuid.UUID{}).Optional().Nillable(),
		// contract_version: the contract's version when the extraction started (apply answers
		// 409 when it changed since).
		field.Int("contract_version").Optional().Nillable(),
		field.String("contract_type").Optional().Nillable().MaxLen(3).Immutable(),
		field.Bool("auto_apply").Default(false).Immutable(),
		// method: text (the PDF's text layer) or ocr (Tesseract over the rendered pages).
		field.String("method").Default("").MaxLen(10),
		field.Int("pages").Default(0),
		field.JSON("fields", []schematype.ExtractedField{}).Optional().Sensitive(),
		field.Int64("points").Default(0).Immutable(),
		field.String("error").Default("").MaxRuneLen(2000),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Time("completed_at").Optional().Nillable(),
		field.Time("applied_at").Optional().Nillable(),
	}
}

// Indexes of ContractExtraction.
func (ContractExtraction) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "document_id"), index.Fields("company_id", "created_at", "id")}
}
