package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// DocumentTypes are the allowed values of a document's type (the spec names
// advice_documentation; the rest are ours, docs/decisions/contracts-documents-portfolio.md).
var DocumentTypes = []string{"advice_documentation", "policy", "application", "offer", "invoice",
	"broker_agreement", "power_of_attorney", "privacy_consent",
	"correspondence", "identification", "other"}

// Document is a file of a contact, optionally of one of its contracts: the metadata here, the
// content in blob storage (app/platform/blobstore) under blob_key. A contract's document carries the
// contract's contact_id (kept in step by a foreign key in migrations/), so it is exactly as
// visible as that contact.
type Document struct{ ent.Schema }

// Mixin of Document.
func (Document) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of Document. A document is immutable: upload a new one instead.
func (Document) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		// contract_id becomes NULL when the contract is deleted: the file stays with the contact.
		field.UUID("contract_id", uuid.UUID{}).Optional().Nillable(),
		field.Enum("type").Values(DocumentTypes...).Default("other").Immutable(),
		field.String("filename").NotEmpty().MaxRuneLen(255).Immutable(),
		// content_type is sniffed from the content, never the uploader's claim.
		field.String("content_type").NotEmpty().MaxLen(255).Immutable(),
		field.Int64("size").NonNegative().Immutable(),
		// sha256 is the hex digest of the content, checked on every download.
		field.String("sha256").MinLen(64).MaxLen(64).Immutable(),
		// blob_key is chosen by the server (blobstore.NewKey), never by a caller.
		field.String("blob_key").NotEmpty().MaxLen(300).Immutable(),
		// signature_fields are where a generated PDF's template put signature fields
		// (POST /documents/generate); signature requests place signatures there.
		field.JSON("signature_fields", []schematype.SignatureField{}).Optional().Immutable(),
		// released_at is when the document was released to the customer: the customer portal
		// lists released documents only (docs/decisions/portal.md). Set by the upload's
		// releasedToCustomer, PATCH /documents/{id}, or a signature request the contact signed.
		field.Time("released_at").Optional().Nillable(),
		// text is the document's text for GET /search: a PDF's text layer, extracted at upload
		// (poppler's pdftotext); "" for other types and PDFs without one. Never in a view.
		field.Text("text").Default("").Sensitive(),
	}
}

// Indexes of Document.
func (Document) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "contact_id", "created_at"),
		index.Fields("company_id", "contract_id"),
		index.Fields("blob_key").Unique(),
	}
}
