package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// The e-mail area (issue 21): company mailboxes over IMAP and SMTP, threads and their
// messages, links of messages to contacts and leads, templates, opt-outs and the points
// ledger that pays for sending. Every table is company data under row-level security
// (migrations/…_email_tenancy.sql); the composite tenant keys are hand-written there, so the
// id columns below are plain fields, not ent edges.

// Enumerations of the e-mail area.
var (
	// MailboxSyncStates: active (synced periodically), paused (the server refused the login:
	// no retries until the operator sets a new password), failing (the last run failed for
	// another reason; retried).
	MailboxSyncStates = []string{"active", "paused", "failing"}
	// EmailDirections of a message.
	EmailDirections = []string{"inbound", "outbound"}
	// EmailStatuses of a message. Outbound: queued → sent → delivered → opened → clicked, or
	// failed. Inbound messages are received.
	EmailStatuses = []string{"queued", "sent", "delivered", "opened", "clicked", "failed", "received"}
	// EmailOptOutSources: how an address came onto the opt-out list.
	EmailOptOutSources = []string{"api", "unsubscribe"}
	// CorrespondenceStatuses of an insurer correspondence case (the spec's named values).
	CorrespondenceStatuses = []string{"draft", "sent", "completed", "follow_up"}
)

// Mailbox is a company mailbox: an address with an IMAP server (inbound, and the Sent folder)
// and an SMTP server (outbound). Personal (owner_id set) or shared. Configured by the operator
// (brokerdesk mailbox …); the app role may only update its sync columns. password_sealed is
// the password sealed with the data keys (app/platform/datakeys), bound to the mailbox id.
type Mailbox struct{ ent.Schema }

// Mixin of Mailbox.
func (Mailbox) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of Mailbox.
func (Mailbox) Fields() []ent.Field {
	return []ent.Field{
		field.String("email").NotEmpty().MaxLen(320),
		field.String("label").Default("").MaxRuneLen(200),
		field.Bool("shared").Default(false),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable(),
		field.String("imap_url").NotEmpty(),
		field.String("smtp_url").NotEmpty(),
		field.String("username").NotEmpty(),
		field.Bytes("password_sealed").Sensitive(),
		// sent_folder is the IMAP folder sent mail is appended to; empty until found
		// (SPECIAL-USE \Sent, else "Sent").
		field.String("sent_folder").Default(""),
		field.Enum("sync_state").Values(MailboxSyncStates...).Default("active"),
		field.Text("sync_error").Default(""),
		field.Time("synced_at").Optional().Nillable(),
	}
}

// Indexes of Mailbox.
func (Mailbox) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "email").Unique()}
}

// Policy of Mailbox: shared mailboxes are visible to everyone of the company, personal ones to
// their owner (and the owner's delegates) and users who see everything. RLS: mailbox_visibility.
func (Mailbox) Policy() ent.Policy {
	r := rule.FilterVisibleMailbox()
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// MailboxFolder is the sync state of one IMAP folder of a mailbox: the UIDVALIDITY seen and
// the highest UID stored, so a sync resumes where the last one (or a killed one) stopped.
type MailboxFolder struct{ ent.Schema }

// Mixin of MailboxFolder.
func (MailboxFolder) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of MailboxFolder.
func (MailboxFolder) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("mailbox_id", uuid.UUID{}).Immutable(),
		field.String("name").NotEmpty(),
		field.Int64("uid_validity").Default(0),
		field.Int64("last_uid").Default(0),
		field.Int64("highest_modseq").Default(0),
	}
}

// Indexes of MailboxFolder.
func (MailboxFolder) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "mailbox_id", "name").Unique()}
}

// Policy of MailboxFolder: as visible as its mailbox.
func (MailboxFolder) Policy() ent.Policy {
	r := rule.FilterVisibleInMailbox("mailbox_id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// EmailThread is a conversation in one mailbox: messages joined by Message-ID, In-Reply-To
// and References (the subject only as a fallback). last_message_at orders the list.
type EmailThread struct{ ent.Schema }

// Mixin of EmailThread.
func (EmailThread) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of EmailThread.
func (EmailThread) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("mailbox_id", uuid.UUID{}).Immutable(),
		field.Text("subject").Default(""),
		// subject_key is the subject without reply and forward prefixes, lower case: the
		// fallback threading key.
		field.Text("subject_key").Default(""),
		field.Time("last_message_at"),
		field.Int("message_count").Default(0),
	}
}

// Indexes of EmailThread: the list walks newest first by (last_message_at, id).
func (EmailThread) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "last_message_at", "id"),
		index.Fields("company_id", "mailbox_id", "subject_key"),
		index.Fields("company_id", "updated_at"),
	}
}

// Policy of EmailThread: visible when its mailbox is, or when one of its messages is linked
// to a contact or lead the credential sees. RLS: email_thread_visibility.
func (EmailThread) Policy() ent.Policy {
	r := rule.FilterVisibleEmailThread("id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// Email is one message of a thread, inbound (synced over IMAP) or outbound (sent through
// POST /emails or a correspondence case). html_body is sanitised before it is stored; raw_key
// names the RFC 5322 message in blob storage.
type Email struct{ ent.Schema }

// Mixin of Email.
func (Email) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}}
}

// Fields of Email.
func (Email) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("thread_id", uuid.UUID{}),
		field.UUID("mailbox_id", uuid.UUID{}).Immutable(),
		field.Enum("direction").Values(EmailDirections...).Immutable(),
		field.Enum("status").Values(EmailStatuses...),
		// message_id is the Message-ID without angle brackets; ours for outbound mail.
		field.String("message_id").NotEmpty(),
		field.String("in_reply_to").Default(""),
		field.Strings("references").Default([]string{}),
		field.String("from_address").Default(""),
		field.String("from_name").Default(""),
		field.JSON("to", []schematype.MailAddress{}).Default([]schematype.MailAddress{}),
		field.JSON("cc", []schematype.MailAddress{}).Default([]schematype.MailAddress{}),
		field.JSON("bcc", []schematype.MailAddress{}).Default([]schematype.MailAddress{}),
		field.String("reply_to").Default(""),
		field.Text("subject").Default(""),
		field.Text("text_body").Default(""),
		field.Text("html_body").Optional().Nillable(),
		// search_text is subject, addresses and text in lower case: what GET /email-threads?q=
		// searches (trigram index in migrations/).
		field.Text("search_text").Default(""),
		// sent_at is the Date header (inbound) or when the SMTP server took it (outbound).
		field.Time("sent_at").Optional().Nillable(),
		field.Time("delivered_at").Optional().Nillable(),
		field.Time("opened_at").Optional().Nillable(),
		field.Time("clicked_at").Optional().Nillable(),
		field.String("raw_key").Default(""),
		field.Int64("size_bytes").Default(0),
		// error is the server's answer of a failed send, or the problems of a malformed message.
		field.Text("error").Default(""),
		field.Bool("marketing").Default(false),
		field.Bool("tracking").Default(false),
		field.UUID("template_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// points is what the send cost (refunded when it fails for good).
		field.Int("points").Default(0),
		// folder and imap_uid: where a synced message was found.
		field.String("folder").Default(""),
		field.Int64("imap_uid").Default(0),
	}
}

// Indexes of Email.
func (Email) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "mailbox_id", "message_id").Unique(),
		index.Fields("company_id", "thread_id", "sent_at", "id"),
		index.Fields("company_id", "status", "created_at"),
	}
}

// Policy of Email: as visible as its thread.
func (Email) Policy() ent.Policy {
	r := rule.FilterVisibleEmailThread("thread_id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// EmailAttachment is a file of a message, kept in blob storage; content_type is what we
// sniffed, not what the sender declared.
type EmailAttachment struct{ ent.Schema }

// Mixin of EmailAttachment.
func (EmailAttachment) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of EmailAttachment.
func (EmailAttachment) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("email_id", uuid.UUID{}).Immutable(),
		field.UUID("thread_id", uuid.UUID{}),
		field.String("filename").Default(""),
		field.String("content_type").Default("application/octet-stream"),
		field.String("content_id").Default(""),
		field.Bool("inline").Default(false),
		field.Int64("size_bytes").Default(0),
		field.String("sha256").Default(""),
		field.String("blob_key").NotEmpty(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of EmailAttachment.
func (EmailAttachment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "email_id")}
}

// Policy of EmailAttachment: as visible as its thread.
func (EmailAttachment) Policy() ent.Policy {
	r := rule.FilterVisibleEmailThread("thread_id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// EmailLink links a message (and so its thread) to a contact or a lead: named at send, or
// found by the addresses a message carries. Exactly one of contact_id and lead_id is set.
type EmailLink struct{ ent.Schema }

// Mixin of EmailLink.
func (EmailLink) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of EmailLink.
func (EmailLink) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("email_id", uuid.UUID{}).Immutable(),
		field.UUID("thread_id", uuid.UUID{}),
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("lead_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of EmailLink.
func (EmailLink) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "email_id", "contact_id").Unique(),
		index.Fields("company_id", "email_id", "lead_id").Unique(),
		index.Fields("company_id", "contact_id", "thread_id"),
		index.Fields("company_id", "lead_id", "thread_id"),
		index.Fields("company_id", "thread_id"),
	}
}

// Policy of EmailLink: visible when its contact (or lead) is. RLS: email_link_visibility.
func (EmailLink) Policy() ent.Policy {
	r := rule.FilterVisibleLink("contact_id", "lead_id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// EmailTemplate is a company template: subject and body with {{placeholders}}. Created by the
// operator (brokerdesk template …); every new company gets the German defaults.
type EmailTemplate struct{ ent.Schema }

// Mixin of EmailTemplate.
func (EmailTemplate) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of EmailTemplate.
func (EmailTemplate) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxRuneLen(200),
		field.Text("subject").Default(""),
		field.Text("body_text").Default(""),
		field.Text("body_html").Optional().Nillable(),
		field.String("category").Optional().Nillable(),
		// marketing templates send marketing mail (opt-outs, List-Unsubscribe, tracking).
		field.Bool("marketing").Default(false),
		field.Strings("placeholders").Default([]string{}),
	}
}

// Indexes of EmailTemplate.
func (EmailTemplate) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "name").Unique()}
}

// EmailOptOut is an address that receives no marketing mail of the company.
type EmailOptOut struct{ ent.Schema }

// Mixin of EmailOptOut.
func (EmailOptOut) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of EmailOptOut.
func (EmailOptOut) Fields() []ent.Field {
	return []ent.Field{
		// email is stored in lower case.
		field.String("email").NotEmpty().MaxLen(320),
		field.String("reason").Default("").MaxRuneLen(500),
		field.Enum("source").Values(EmailOptOutSources...).Default("api"),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of EmailOptOut.
func (EmailOptOut) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "email").Unique(), index.Fields("company_id", "created_at", "id")}
}

// CompanyPoints is a company's balance of points (one row per company; a CHECK in
// migrations/ keeps it at zero or above, so concurrent sends cannot overdraw it).
type CompanyPoints struct{ ent.Schema }

// Mixin of CompanyPoints.
func (CompanyPoints) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of CompanyPoints.
func (CompanyPoints) Fields() []ent.Field {
	return []ent.Field{field.Int64("balance").Default(0)}
}

// Indexes of CompanyPoints.
func (CompanyPoints) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id").Unique().StorageKey("company_points_one_per_company")}
}

// PointEntry is one line of the points ledger: a grant (positive), a charge (negative) or a
// refund (positive, naming the e-mail).
type PointEntry struct{ ent.Schema }

// Mixin of PointEntry.
func (PointEntry) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}}
}

// Fields of PointEntry.
func (PointEntry) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("delta").Immutable(),
		field.String("reason").NotEmpty().Immutable(),
		field.UUID("email_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// extraction_id: the contract extraction a charge or refund paid for (issue 25).
		field.UUID("extraction_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Indexes of PointEntry.
func (PointEntry) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "created_at")}
}

// CorrespondenceCase is a letter to one insurer about contracts of a contact (address change,
// termination, …): a draft with subject, body and recipient prefilled from the transaction
// type, then sent as an e-mail from a company mailbox.
type CorrespondenceCase struct{ ent.Schema }

// Mixin of CorrespondenceCase.
func (CorrespondenceCase) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of CorrespondenceCase.
func (CorrespondenceCase) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.UUID("insurer_id", uuid.UUID{}).Immutable(),
		field.JSON("contract_ids", []uuid.UUID{}).Default([]uuid.UUID{}),
		field.String("transaction_type").NotEmpty().Immutable(),
		field.Text("subject").Default(""),
		field.Text("body").Default(""),
		field.String("recipient_email").Default("").MaxLen(320),
		field.JSON("form_data", map[string]any{}).Default(map[string]any{}),
		field.Enum("status").Values(CorrespondenceStatuses...).Default("draft"),
		field.UUID("mailbox_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("email_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("thread_id", uuid.UUID{}).Optional().Nillable(),
		field.JSON("attachment_document_ids", []uuid.UUID{}).Default([]uuid.UUID{}),
		field.Time("sent_at").Optional().Nillable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
	}
}

// Indexes of CorrespondenceCase.
func (CorrespondenceCase) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "updated_at", "id"),
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "status"),
	}
}
