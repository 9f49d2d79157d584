package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// The customer portal (issue 23): a contact's own sign-in to see its contracts, released
// documents and signature requests and to ask for changes of its data. Portal accounts are not
// users: they never get API credentials and see one contact only. Every table is company data
// under row-level security, as visible as its contact (migrations/…_portal_tenancy.sql); a
// portal request additionally runs as the role brokerdesk_portal pinned to its contact
// (tenancy.WithPortal), so the database itself shows it no other contact's rows.

// Enumerations of the area.
var (
	// PortalAccessStatuses: pending (invited, no password yet) → active (the invitation was
	// accepted) → revoked (DELETE …/portal-access). A revoked access may be invited again.
	PortalAccessStatuses = []string{"pending", "active", "revoked"}
	// PortalTokenPurposes: the single-use links the portal mails.
	PortalTokenPurposes = []string{"invitation", "password_reset"}
	// PortalChangeKinds: what a customer may ask to change.
	PortalChangeKinds = []string{"address", "name", "email", "phone", "bank"}
	// PortalChangeStatuses are the spec's.
	PortalChangeStatuses = []string{"pending", "approved", "rejected", "withdrawn"}
)

// PortalAccess is a contact's portal account: at most one per contact. The e-mail is the
// address invited and the sign-in name (unique among the company's accesses that are not
// revoked); the password is an argon2id PHC string with the staff's parameters.
type PortalAccess struct{ ent.Schema }

// Mixin of PortalAccess.
func (PortalAccess) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of PortalAccess.
func (PortalAccess) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.Enum("status").Values(PortalAccessStatuses...).Default("pending"),
		// email is stored lower-cased: the sign-in compares it so.
		field.String("email").NotEmpty().MaxLen(320),
		field.String("password_hash").Optional().Nillable().Sensitive(),
		// totp_secret is the RFC 6238 shared secret, sealed with the company's data key
		// (app/platform/datakeys); totp_enabled_at is set once a code confirmed it.
		field.Bytes("totp_secret").Optional().Nillable().Sensitive(),
		field.Time("totp_enabled_at").Optional().Nillable(),
		// totp_last_step is the last time step accepted: a code is good once.
		field.Int64("totp_last_step").Default(0),
		field.Time("invited_at"),
		field.UUID("invited_by", uuid.UUID{}).Optional().Nillable(),
		field.Int("invitations_sent").Default(0),
		field.Time("activated_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
		field.Time("last_login_at").Optional().Nillable(),
	}
}

// Indexes of PortalAccess.
func (PortalAccess) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "contact_id").Unique(),
		index.Fields("company_id", "email"),
	}
}

// PortalToken is a single-use link the portal mailed: an invitation (valid 7 days) or a
// password reset (valid 1 hour). Only the SHA-256 of the secret is stored.
type PortalToken struct{ ent.Schema }

// Mixin of PortalToken.
func (PortalToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}}
}

// Fields of PortalToken.
func (PortalToken) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("access_id", uuid.UUID{}).Immutable(),
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.Enum("purpose").Values(PortalTokenPurposes...).Immutable(),
		field.Bytes("token_hash").Immutable().Sensitive(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
	}
}

// Indexes of PortalToken.
func (PortalToken) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("token_hash").Unique(),
		index.Fields("company_id", "access_id"),
	}
}

// PortalSession is a signed-in browser: the cookie holds the secret whose SHA-256 is stored.
// Revoking the access deletes its sessions; each expires after 12 hours idle, 7 days at most.
type PortalSession struct{ ent.Schema }

// Mixin of PortalSession.
func (PortalSession) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}}
}

// Fields of PortalSession.
func (PortalSession) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("access_id", uuid.UUID{}).Immutable(),
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.Bytes("token_hash").Immutable().Sensitive(),
		// second_factor_pending: the password was right, the TOTP code is still due; such a
		// session opens the code form only.
		field.Bool("second_factor_pending").Default(false),
		field.Time("created_at").Immutable(),
		field.Time("last_seen_at"),
		field.Time("expires_at"),
		field.String("ip").Default("").MaxLen(64),
		field.String("user_agent").Default("").MaxLen(300),
	}
}

// Indexes of PortalSession.
func (PortalSession) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("token_hash").Unique(),
		index.Fields("company_id", "access_id"),
		index.Fields("expires_at"),
	}
}

// PortalChangeRequest is a change of its data a customer asked for in the portal. changes
// holds the new values of kind's fields (keys as in the API's contact: street, houseNumber,
// zipCode, city, country; salutation, firstName, lastName; email; number, type; iban, bic,
// accountHolder), baseline the contact's values of those fields when it was asked: approval
// refuses (409) when the contact moved away from baseline meanwhile, unless re-confirmed.
type PortalChangeRequest struct{ ent.Schema }

// Mixin of PortalChangeRequest.
func (PortalChangeRequest) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByContact{Field: "contact_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of PortalChangeRequest.
func (PortalChangeRequest) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("contact_id", uuid.UUID{}).Immutable(),
		field.UUID("access_id", uuid.UUID{}).Optional().Nillable(),
		field.Enum("kind").Values(PortalChangeKinds...).Immutable(),
		// changes and baseline are sealed with the company's data key when kind is bank
		// (app/platform/datakeys): the API shows the IBAN masked unless the credential may read
		// sensitive data.
		field.JSON("changes", map[string]string{}).Immutable(),
		field.JSON("baseline", map[string]string{}).Immutable(),
		field.Bytes("sealed").Optional().Nillable().Immutable().Sensitive(),
		field.Enum("status").Values(PortalChangeStatuses...).Default("pending"),
		field.String("reason").Default("").MaxRuneLen(1000),
		field.UUID("decided_by", uuid.UUID{}).Optional().Nillable(),
		field.Time("decided_at").Optional().Nillable(),
		field.Time("withdrawn_at").Optional().Nillable(),
	}
}

// Indexes of PortalChangeRequest.
func (PortalChangeRequest) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "status", "created_at", "id"),
		index.Fields("company_id", "contact_id", "created_at"),
	}
}
