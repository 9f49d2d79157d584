package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// LeadSources are the allowed values of a lead's source (lead-intake.md).
var LeadSources = []string{"website", "referral", "phone", "event", "social_media", "advertisement",
	"partner", "landing_page", "registration", "other"}

// Lead is a prospective customer on a company's lead board.
type Lead struct{ ent.Schema }

// Mixin of Lead.
func (Lead) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByOwner{Field: "owner_id"}, TimeMixin{}, VersionMixin{},
		ExternalRefMixin{Resource: "lead"}}
}

// Fields of Lead.
func (Lead) Fields() []ent.Field {
	return []ent.Field{
		field.String("first_name").Default("").MaxRuneLen(100),
		field.String("last_name").Default("").MaxRuneLen(100),
		field.String("email").Optional().Nillable().MaxRuneLen(255),
		// email_key is the e-mail trimmed and lower-cased: the duplicate key.
		field.String("email_key").Optional().Nillable().MaxRuneLen(255),
		field.String("phone").Optional().Nillable().MaxRuneLen(50),
		// phone_key is the phone in E.164 (German numbers without country code are +49).
		field.String("phone_key").Optional().Nillable().MaxRuneLen(50),
		field.Enum("source").Values(LeadSources...).Optional().Nillable(),
		field.Text("notes").Default(""),
		field.JSON("additional_fields", map[string]string{}).Default(map[string]string{}),
		field.String("meta_url").Optional().Nillable().MaxRuneLen(2048),
		// stage_id and owner_id are kept inside the company by composite foreign keys
		// (migrations/), not ent edges.
		field.UUID("stage_id", uuid.UUID{}),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable(),
		field.Bool("converted").Default(false),
		field.Time("converted_at").Optional().Nillable(),
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable(),
		field.Bool("test").Default(false),
		field.Int("submissions").Default(0),
		// origin is how the lead came to be: api (POST /leads), intake (a website submission) or
		// external (PUT /external/...). The intake merges duplicates only into intake leads:
		// holding the public key must not let anyone append to a lead a broker created.
		field.Enum("origin").Values("api", "intake", "external").Default("api").Immutable(),
	}
}

// Edges of Lead: its attachments (LeadAttachment.Edges), eager-loaded with WithAttachments
// instead of a second query by hand.
func (Lead) Edges() []ent.Edge {
	return []ent.Edge{edge.To("attachments", LeadAttachment.Type)}
}

// Indexes of Lead.
func (Lead) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "updated_at", "id"),
		index.Fields("company_id", "email_key"),
		index.Fields("company_id", "phone_key"),
		index.Fields("company_id", "stage_id"),
	}
}

// LeadSubmission keeps every intake submission of a lead, also those merged into it.
type LeadSubmission struct{ ent.Schema }

// Mixin of LeadSubmission.
func (LeadSubmission) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of LeadSubmission.
func (LeadSubmission) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("lead_id", uuid.UUID{}).Immutable(),
		field.Time("received_at").Default(time.Now).Immutable(),
		field.Enum("channel").Values("legacy", "intake", "api").Immutable(),
		field.Enum("outcome").Values("created", "updated").Immutable(),
		field.UUID("credential_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// payload is what was submitted, as the service understood it.
		field.JSON("payload", map[string]any{}).Immutable(),
	}
}

// Indexes of LeadSubmission.
func (LeadSubmission) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "lead_id", "received_at")}
}

// LeadStage is a column of the lead board. Every company has new and converted.
type LeadStage struct{ ent.Schema }

// Mixin of LeadStage.
func (LeadStage) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of LeadStage.
func (LeadStage) Fields() []ent.Field {
	return []ent.Field{
		// key is "new", "converted" or a slug of the name for company stages.
		field.String("key").NotEmpty().MaxRuneLen(100).Immutable(),
		field.String("name").NotEmpty().MaxRuneLen(100),
		field.String("color").Default("").MaxRuneLen(20),
		field.Int("position").Default(0).Min(0),
		field.Bool("is_final").Default(false),
	}
}

// Indexes of LeadStage.
func (LeadStage) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "key").Unique()}
}

// LeadAttachment is a file sent with a multipart intake. It moves to the contact on conversion
// and outlives the lead then: lead_id is cleared when the lead is deleted (migrations/), and an
// attachment always belongs to a lead or a contact (a check constraint).
type LeadAttachment struct{ ent.Schema }

// Mixin of LeadAttachment.
func (LeadAttachment) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}}
}

// Fields of LeadAttachment.
func (LeadAttachment) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("lead_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable(),
		field.String("filename").NotEmpty().MaxRuneLen(255),
		field.String("content_type").NotEmpty().MaxRuneLen(255),
		field.Int64("size").Min(0),
		field.Bytes("content").Sensitive(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Edges of LeadAttachment: the lead it came with (nil once the lead is deleted and a contact
// holds the file). lead_id's constraint is the hand-written tenant_lead_attachments_lead
// ((company_id, lead_id) -> leads, ON DELETE SET NULL (lead_id) or CASCADE, migrations/): the
// edge adds no constraint of its own.
func (LeadAttachment) Edges() []ent.Edge {
	return []ent.Edge{edge.From("lead", Lead.Type).Ref("attachments").Field("lead_id").Unique()}
}

// Indexes of LeadAttachment.
func (LeadAttachment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "lead_id"), index.Fields("company_id", "contact_id")}
}
