package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// The documents-that-brokers-sign area (issue 22): document templates and standard documents
// (read-only for the API; the operator and the product's defaults write them), signature
// requests with their signers, and IDD advice records. Every table is company data under
// row-level security (migrations/…_signatures_tenancy.sql); the composite tenant keys are
// hand-written there, so the id columns below are plain fields, not ent edges.

// Enumerations of the area.
var (
	// DocumentTemplateCategories are the spec's seven template categories.
	DocumentTemplateCategories = []string{"letter", "broker_agreement", "power_of_attorney", "privacy",
		"advice_protocol", "cover_note", "other"}
	// SignatureRequestStatuses: pending (out for signature) → completed (every signer signed,
	// the sealed PDF is filed), or cancelled (POST …/cancel) or expired (expires_at passed).
	SignatureRequestStatuses = []string{"pending", "completed", "cancelled", "expired"}
	// SignerStatuses: pending → signed.
	SignerStatuses = []string{"pending", "signed"}
	// SignerRoles: the request's contact, the broker (a user of the company), or another person.
	SignerRoles = []string{"contact", "broker", "other"}
	// AdviceChannels: how the consultation took place.
	AdviceChannels = []string{"in_person", "phone", "video", "email", "other"}
	// AdviceRecordStatuses: draft (editable) → locked (its protocol was signed).
	AdviceRecordStatuses = []string{"draft", "locked"}
)

// DocumentTemplate is a company's template for generated PDFs: a body in the template
// markup of app/platform/pdf with {{placeholders}} and signature fields. Seeded with the
// product's German defaults when the company is created; the operator adds and replaces them
// (brokerdesk doc-template …). The API only reads them.
type DocumentTemplate struct{ ent.Schema }

// Mixin of DocumentTemplate.
func (DocumentTemplate) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of DocumentTemplate.
func (DocumentTemplate) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxRuneLen(200),
		field.Enum("category").Values(DocumentTemplateCategories...),
		field.Text("body"),
		// placeholders and signature_roles are derived from body when it is stored.
		field.Strings("placeholders").Default([]string{}),
		field.Strings("signature_roles").Default([]string{}),
	}
}

// Indexes of DocumentTemplate.
func (DocumentTemplate) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "name").Unique()}
}

// StandardDocument is a company's fixed PDF (Erstinformation, Datenschutzhinweise, blank
// forms) that can be sent for signature as it is: the content is kept in the row (at most
// 10 MB; standard documents are few and small), with the signature fields found in it or
// given by the operator.
type StandardDocument struct{ ent.Schema }

// Mixin of StandardDocument.
func (StandardDocument) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of StandardDocument.
func (StandardDocument) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxRuneLen(200),
		field.String("filename").NotEmpty().MaxRuneLen(255),
		field.Bytes("content"),
		field.Int64("size").NonNegative(),
		field.String("sha256").MinLen(64).MaxLen(64),
		field.JSON("signature_fields", []schematype.SignatureField{}).Default([]schematype.SignatureField{}),
	}
}

// Indexes of StandardDocument.
func (StandardDocument) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "name").Unique()}
}

// SignatureRequest is a signing process over one PDF (the documents of the request merged in
// order) for signers of one contact. The built-in provider mails each signer a personal link;
// when the last one signed, the PDF with the signature appearances and an audit page is
// sealed with a PAdES signature and filed with the contact (signed_document_id).
type SignatureRequest struct{ ent.Schema }

// Mixin of SignatureRequest.
func (SignatureRequest) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of SignatureRequest.
func (SignatureRequest) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.String("provider").Default("builtin").Immutable(),
		field.Enum("status").Values(SignatureRequestStatuses...).Default("pending"),
		field.String("title").NotEmpty().MaxRuneLen(200),
		field.Text("message").Default(""),
		// documents are what was asked for, in order: contact documents and standard documents.
		field.JSON("documents", []schematype.SignatureSource{}).Immutable(),
		// fields are the signature fields of the merged PDF (pages counted across documents).
		field.JSON("fields", []schematype.SignatureField{}).Default([]schematype.SignatureField{}),
		// source_* is the merged PDF the signers see, in blob storage; its hash goes on the
		// audit page.
		field.String("source_blob_key").NotEmpty().Immutable(),
		field.String("source_sha256").MinLen(64).MaxLen(64).Immutable(),
		field.Int("page_count").Positive().Immutable(),
		field.UUID("mailbox_id", uuid.UUID{}).Optional().Nillable(),
		field.Time("expires_at"),
		field.Time("completed_at").Optional().Nillable(),
		field.Time("cancelled_at").Optional().Nillable(),
		field.UUID("signed_document_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
	}
}

// Indexes of SignatureRequest.
func (SignatureRequest) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "updated_at"),
		index.Fields("status", "expires_at"),
	}
}

// SignatureSigner is one signer of a request. contact_id repeats the request's (a composite
// foreign key keeps it so), so a signer is exactly as visible as its request. token_hash is
// the SHA-256 of the secret part of the signer's link; code_hash that of the one-time code
// last mailed (with its expiry and the attempts made against it).
type SignatureSigner struct{ ent.Schema }

// Mixin of SignatureSigner.
func (SignatureSigner) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}}
}

// Fields of SignatureSigner.
func (SignatureSigner) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("request_id", uuid.UUID{}).Immutable(),
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.Int("position").NonNegative().Immutable(),
		field.Enum("role").Values(SignerRoles...).Immutable(),
		field.UUID("user_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.String("name").NotEmpty().MaxRuneLen(200).Immutable(),
		field.String("email").NotEmpty().MaxLen(320).Immutable(),
		field.Enum("status").Values(SignerStatuses...).Default("pending"),
		field.Bytes("token_hash").Sensitive(),
		field.Bytes("code_hash").Optional().Nillable().Sensitive(),
		field.Time("code_expires_at").Optional().Nillable(),
		field.Int("code_attempts").Default(0),
		field.Time("code_sent_at").Optional().Nillable(),
		field.Time("notified_at").Optional().Nillable(),
		field.Time("reminded_at").Optional().Nillable(),
		field.Time("viewed_at").Optional().Nillable(),
		field.Time("verified_at").Optional().Nillable(),
		field.Time("signed_at").Optional().Nillable(),
		field.String("signed_ip").Default(""),
		field.String("signed_user_agent").Default(""),
		// signature is the appearance the signer drew (PNG) or typed (rendered to PNG).
		field.Bytes("signature").Optional().Nillable(),
		field.String("typed_name").Default(""),
	}
}

// Indexes of SignatureSigner.
func (SignatureSigner) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "request_id", "position").Unique()}
}

// AdviceRecord documents a consultation as the IDD (§ 61, § 62 VVG) requires: the customer's
// wishes and needs, the advice given and its reasons. Locked once its protocol was signed.
type AdviceRecord struct{ ent.Schema }

// Mixin of AdviceRecord.
func (AdviceRecord) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of AdviceRecord.
func (AdviceRecord) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.UUID("contract_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("advisor_id", uuid.UUID{}).Optional().Nillable(),
		field.Time("consulted_at"),
		field.Enum("channel").Values(AdviceChannels...).Default("in_person"),
		field.String("subject").NotEmpty().MaxRuneLen(500),
		field.Text("customer_wishes").Default(""),
		field.Text("customer_needs").Default(""),
		field.Text("advice").Default(""),
		field.Text("reasons").Default(""),
		field.JSON("products", []schematype.AdviceProduct{}).Default([]schematype.AdviceProduct{}),
		field.Bool("advice_waived").Default(false),
		field.Text("notes").Default(""),
		field.Enum("status").Values(AdviceRecordStatuses...).Default("draft"),
		field.Time("locked_at").Optional().Nillable(),
		// document_id is the protocol PDF rendered last (POST …/document).
		field.UUID("document_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
	}
}

// Indexes of AdviceRecord.
func (AdviceRecord) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "updated_at"),
		index.Fields("company_id", "document_id"),
	}
}
