package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// Privacy requests (issue 25): a data subject's access (GDPR Art. 15: a ZIP of every personal
// datum of a contact) and erasure (Art. 17, with Art. 18 restriction where statutory retention
// applies). Company data under row-level security (migrations/…_privacy_tenancy.sql).

// Enumerations of the area.
var (
	// PrivacyRequestTypes: data_export (access) and erasure.
	PrivacyRequestTypes = []string{"data_export", "erasure"}
	// PrivacyRequestStatuses: queued (job inserted) → processing → completed; failed when the
	// job gave up (the request can be made again).
	PrivacyRequestStatuses = []string{"queued", "processing", "completed", "failed"}
)

// PrivacyRequest is one data-subject request about a contact. It outlives the contact it names
// (an erasure's record is the proof that it was done): contact_id is a plain column, and
// owner_id, the contact's owner when the request was made, decides who sees it.
type PrivacyRequest struct{ ent.Schema }

// Mixin of PrivacyRequest.
func (PrivacyRequest) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByOwner{Field: "owner_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of PrivacyRequest.
func (PrivacyRequest) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("type").Values(PrivacyRequestTypes...).Immutable(),
		field.Enum("status").Values(PrivacyRequestStatuses...).Default("queued"),
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.String("reason").Optional().Nillable().MaxRuneLen(1000).Immutable(),
		field.Time("requested_at").Immutable(),
		// The export: its ZIP in blob storage, and the download link's token (its SHA-256) and
		// end; the link serves the file once it is ready, until it expires.
		field.String("blob_key").Optional().Nillable().MaxLen(300).Sensitive(),
		field.Int64("size").Optional().Nillable(),
		field.String("download_token_hash").Optional().Nillable().MaxLen(64).Sensitive(),
		field.Time("expires_at").Optional().Nillable(),
		// summary: what the job did (records exported, deleted, blocked per type).
		field.JSON("summary", map[string]int{}).Optional(),
		field.String("error").Default("").MaxRuneLen(2000),
		field.Time("completed_at").Optional().Nillable(),
	}
}

// Indexes of PrivacyRequest.
func (PrivacyRequest) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "contact_id"),
		index.Fields("download_token_hash").Unique(),
	}
}

// RetainedRecord is a record an erasure could not delete because a statutory retention period
// still runs (HGB §257, AO §147, broker documentation duties): a copy of its personal data,
// blocked (GDPR Art. 18). No operation reads it: the app role has no privilege on the table;
// the privacy job writes it and the retention sweep deletes it when retain_until has passed.
type RetainedRecord struct{ ent.Schema }

// Mixin of RetainedRecord.
func (RetainedRecord) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of RetainedRecord.
func (RetainedRecord) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("request_id", uuid.UUID{}).Immutable(),
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		// record_type and record_id: what was kept (contract, commission_entry, document, …).
		field.String("record_type").NotEmpty().MaxLen(50).Immutable(),
		field.UUID("record_id", uuid.UUID{}).Immutable(),
		// basis: the rule that keeps it (docs/decisions/privacy.md), e.g. "AO §147 (1) Nr. 4".
		field.String("basis").NotEmpty().MaxLen(200).Immutable(),
		field.JSON("data", map[string]any{}).Sensitive().Immutable(),
		// blob_keys: files kept with the record (moved under the retained prefix).
		field.JSON("blob_keys", []string{}).Optional().Sensitive().Immutable(),
		field.Time("retain_until").SchemaType(map[string]string{dialect.Postgres: "date"}).Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of RetainedRecord.
func (RetainedRecord) Indexes() []ent.Index {
	return []ent.Index{index.Fields("retain_until"), index.Fields("company_id", "contact_id")}
}
