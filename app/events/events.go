// Package events is the outbox: every write records its event here, in the same transaction
// as the change, and /events serves them in commit order. Every area writes to it; it imports
// no area.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Type is one kind of event: its name, what it means and the scope needed to receive it.
type Type struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Scope       string `json:"scope"`
}

// Types lists every event type the service emits. Record refuses a type missing here, so the
// list GET /event-types serves cannot fall behind.
var Types = []Type{
	{"advice_record.created", "An advice record (IDD consultation documentation) was created; data is the AdviceRecord.", "advice:read"},
	{"advice_record.locked", "An advice record was locked because a signature request holding its protocol completed; data is the AdviceRecord.", "advice:read"},
	{"advice_record.updated", "An advice record changed (PATCH, or a protocol PDF was rendered for it); data is the AdviceRecord.", "advice:read"},
	{"appointment.created", "An appointment or series was created (also the new series a \"following\" change splits off); data is the Appointment.", "appointments:read"},
	{"appointment.deleted", "An appointment or series was deleted; data is the Appointment as it was.", "appointments:read"},
	{"appointment.occurrence_cancelled", "One occurrence of a series was cancelled (DELETE with scope this); data is the Occurrence as it was.", "appointments:read"},
	{"appointment.occurrence_updated", "One occurrence of a series was changed (PATCH with scope this); data is the Occurrence.", "appointments:read"},
	{"appointment.updated", "An appointment or series changed (also a series a \"following\" change or delete ended early); data is the Appointment.", "appointments:read"},
	{"commission_entry.updated", "A commission entry was linked to a contract, unlinked or given a note (PATCH /commission-entries/{entryId}); data is the CommissionEntry.", "commissions:read"},
	{"commission_statement.created", "A commission statement was uploaded and queued for parsing; data is the CommissionStatement.", "commissions:read"},
	{"commission_statement.processed", "A commission statement's file was parsed: its entries are stored and matched (importStatus processed or failed); data is the CommissionStatement.", "commissions:read"},
	{"commission_statement.updated", "A commission statement's status or note changed (PATCH); data is the CommissionStatement.", "commissions:read"},
	{"company.updated", "The company's data or licensed features changed; data is the Company.", "company:read"},
	{"contact.created", "A contact was created (also by converting a lead); data is the Contact (without sensitive groups).", "contacts:read"},
	{"contact.deleted", "A contact was deleted with everything of it; data is the Contact as it was (without sensitive groups).", "contacts:read"},
	{"contact.updated", "A contact changed (also by converting a lead into it); data is the Contact (without sensitive groups).", "contacts:read"},
	{"contract.created", "A contract was created (API, external upsert or portfolio transfer); data is the Contract.", "contracts:read"},
	{"contract.deleted", "A contract was deleted (also with its contact); data is the Contract as it was.", "contracts:read"},
	{"contract.updated", "A contract changed (PATCH, external upsert or portfolio transfer); data is the Contract.", "contracts:read"},
	{"correspondence_case.created", "A correspondence case to an insurer was created (one per insurer of POST /correspondence-cases); data is the CorrespondenceCase.", "correspondence:read"},
	{"correspondence_case.deleted", "A draft correspondence case was deleted; data is the CorrespondenceCase as it was.", "correspondence:read"},
	{"correspondence_case.sent", "A correspondence case was sent to its insurer as an e-mail; data is the CorrespondenceCase.", "correspondence:read"},
	{"correspondence_case.updated", "A correspondence case changed (its draft, or its status after sending); data is the CorrespondenceCase.", "correspondence:read"},
	{"document.created", "A document was uploaded to a contact or contract; data is the Document.", "documents:read"},
	{"document.deleted", "A document was deleted (DELETE /documents/{documentId}; with its contact, contact.deleted says it); data is the Document as it was.", "documents:read"},
	{"document.updated", "A document was released to the customer portal or its release withdrawn (PATCH /documents/{documentId}, or the contact signed it); data is the Document.", "documents:read"},
	{"email.clicked", "A recipient followed a tracked link of an e-mail (first click only); data is the Email without bodies.", "emails:read"},
	{"email.delivered", "The receiving server reported delivery of an e-mail (a delivery status notification); data is the Email without bodies.", "emails:read"},
	{"email.failed", "An e-mail could not be sent (the SMTP server refused it for good); data is the Email without bodies, with the server's answer in error.", "emails:read"},
	{"email.opened", "A recipient opened a tracked e-mail (first open only); data is the Email without bodies.", "emails:read"},
	{"email.received", "An e-mail arrived in a company mailbox (sync over IMAP); data is the Email without bodies.", "emails:read"},
	{"email.sent", "The SMTP server took an e-mail sent through the API (POST /emails, a correspondence case); data is the Email without bodies.", "emails:read"},
	{"email_opt_out.created", "An address was put on the opt-out list (API or unsubscribe link); data is the EmailOptOut.", "marketing:read"},
	{"email_opt_out.deleted", "An address was taken off the opt-out list after renewed consent; data is the EmailOptOut as it was.", "marketing:read"},
	{"lead.converted", "A lead was converted into a contact; data is the Lead.", "leads:read"},
	{"lead.created", "A lead was created (intake, API or external upsert); data is the Lead.", "leads:read"},
	{"lead.deleted", "A lead was deleted; data is the Lead as it was.", "leads:read"},
	{"lead.updated", "A lead changed (a duplicate submission merged into it, a PATCH, a stage move); data is the Lead.", "leads:read"},
	{"mailbox.sync_paused", "A mailbox's server refused its login: its sync is paused until the operator sets a new password; data is the Mailbox.", "emails:read"},
	{"note.created", "A note was added to a contact's timeline; data is the Activity.", "activities:read"},
	{"note.deleted", "A note was deleted; data is the Activity as it was.", "activities:read"},
	{"note.updated", "A note's content changed; data is the Activity.", "activities:read"},
	{"oauth_grant.revoked", "A partner app's grant (its access and refresh tokens) was revoked: by the app (RFC 7009), or because a used authorization code or rotated refresh token came back; data is the OAuthGrant. Recorded in the live company, also for test clients.", "company:read"},
	{"ping", "Sent by POST /webhook-endpoints/{id}/test to that endpoint only, never to the feed; data is {webhookEndpointId}.", "webhooks:read"},
	{"portal_access.activated", "The customer accepted the portal invitation and set a password; data is the PortalAccess.", "contacts:read"},
	{"portal_access.invited", "A portal invitation was mailed to the contact (also each re-send while pending); data is the PortalAccess.", "contacts:read"},
	{"portal_access.revoked", "The contact's portal access was revoked (DELETE …/portal-access) and its sessions ended; data is the PortalAccess.", "contacts:read"},
	{"portal_change_request.approved", "A change request was approved and applied to the contact (which also records contact.updated); data is the PortalChangeRequest.", "contacts:read"},
	{"portal_change_request.created", "The customer asked for a change of its data in the portal; data is the PortalChangeRequest.", "contacts:read"},
	{"portal_change_request.rejected", "A change request was rejected; its reason is shown to the customer; data is the PortalChangeRequest.", "contacts:read"},
	{"portal_change_request.withdrawn", "The customer withdrew a pending change request in the portal; data is the PortalChangeRequest.", "contacts:read"},
	{"relationship.created", "Two contacts were related (POST /contacts/{contactId}/relationships); data is the ContactRelationship seen from the contact it was created on.", "contacts:read"},
	{"relationship.deleted", "A relationship between two contacts was removed (both directions); data is the ContactRelationship as it was, seen from the contact it was deleted on.", "contacts:read"},
	{"signature_request.cancelled", "A signature request was cancelled (POST …/cancel); its signing links stopped working; data is the SignatureRequest.", "signatures:read"},
	{"signature_request.completed", "Every signer signed: the sealed PDF is stored with the contact (signedDocumentId); data is the SignatureRequest.", "signatures:read"},
	{"signature_request.created", "A signature request was created and its signers were mailed their links; data is the SignatureRequest.", "signatures:read"},
	{"signature_request.expired", "A signature request passed its expiresAt before every signer signed; its links stopped working; data is the SignatureRequest.", "signatures:read"},
	{"signature_request.signed", "One signer signed (signer progress; the last signer's signature also completes the request); data is the SignatureRequest.", "signatures:read"},
	{"task.completed", "A task's status became done (once per completion); data is the Task.", "tasks:read"},
	{"task.created", "A task was created; data is the Task.", "tasks:read"},
	{"task.deleted", "A task was deleted with its comments; data is the Task as it was.", "tasks:read"},
	{"task.updated", "A task changed (also when it is completed); data is the Task.", "tasks:read"},
	{"task_comment.created", "A comment was added to a task; data is the TaskComment.", "tasks:read"},
	{"user.created", "A user was added to the company; data is the User.", "users:read"},
	{"user.updated", "A user's data, role or status changed; data is the User.", "users:read"},
	{"webhook_endpoint.disabled", "The server disabled a webhook endpoint: its URL answered 410 Gone, its deliveries failed for five days in a row, or its credential was no longer active at a delivery (disabledReason credential_inactive); data is the WebhookEndpoint.", "webhooks:read"},
}

// Known reports whether t is an event type.
func Known(t string) bool {
	return slices.ContainsFunc(Types, func(x Type) bool { return x.Type == t })
}

// ScopeOf returns the scope needed to receive events of type t.
func ScopeOf(t string) string {
	for _, x := range Types {
		if x.Type == t {
			return x.Scope
		}
	}
	return ""
}

// Service records events.
type Service struct{}

// NewService returns the service.
func NewService() *Service { return &Service{} }

// About is what an event concerns, for the visibility of user-bound credentials (issues 8 and
// 20 item 3). A UserScoped event reaches a user-bound credential exactly when the resource it
// is about did at the time (the resource's own rule, applied to what About records):
//
//   - ContactID (while the contact exists) is visible to it, or OwnerID or CoOwnerID is: the
//     users who saw the resource then. For a resource of a contact OwnerID is the contact's
//     owner; left nil, Record reads it in its INSERT. For a task or an appointment without a
//     contact they are its assignee (owner) and its creator (AboutContactElseOwners).
//   - and, when RelatedContactID is set (a relationship is visible only while both contacts
//     are), that contact or RelatedOwnerID (nil: read like OwnerID) is visible too.
//
// The owners keep an event visible to who saw it after the contact went to someone else or was
// deleted (docs/decisions/visibility.md "Events").
type About struct {
	ContactID        *uuid.UUID
	OwnerID          *uuid.UUID
	CoOwnerID        *uuid.UUID
	RelatedContactID *uuid.UUID
	RelatedOwnerID   *uuid.UUID
	UserScoped       bool
}

// AboutContactElseOwners is what an event of a task or appointment concerns, the rule of
// rule.FilterVisibleContactElseOwners and of the policies task_visibility and
// appointment_visibility: one with a contact is visible when the contact is (its owner at the
// time, read by Record, keeps the history); one without a contact to its owner (the assignee
// of a task) and its creator.
func AboutContactElseOwners(contact, owner, creator *uuid.UUID) About {
	if contact != nil {
		return About{ContactID: contact, UserScoped: true}
	}
	return About{OwnerID: owner, CoOwnerID: creator, UserScoped: true}
}

// Subject is implemented by resources whose events are user-scoped (contacts.View,
// leads.View, and whatever belongs to a contact): Record asks the event's data.
type Subject interface{ EventAbout() About }

// Record writes an event of type typ whose data is the resource as the API returns it, in the
// transaction of ctx (tenancy.Client), for the company ctx is pinned to. If the transaction
// rolls back, the event goes with it. When data is a Subject, the event records what it
// concerns (see About); otherwise every credential with the type's scope receives it.
func (s *Service) Record(ctx context.Context, typ string, data any) error {
	var about About
	if sub, ok := data.(Subject); ok {
		about = sub.EventAbout()
	}
	return s.RecordAbout(ctx, typ, data, about)
}

// RecordAbout is Record with what the event concerns given explicitly.
func (s *Service) RecordAbout(ctx context.Context, typ string, data any, about About) error {
	if !Known(typ) {
		return fmt.Errorf("record event: unknown type %q (add it to events.Types)", typ)
	}
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return fmt.Errorf("record event %s: %w", typ, tenancy.ErrNoCompany)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	act, err := json.Marshal(actor(ctx))
	if err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	_, err = tenancy.Client(ctx).ExecContext(ctx, insertEvent, uuid.Must(uuid.NewV7()), company, typ,
		time.Now(), raw, act, about.ContactID, about.OwnerID, about.CoOwnerID, about.RelatedContactID, about.RelatedOwnerID,
		about.UserScoped)
	if err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	return nil
}

func actor(ctx context.Context) schematype.Actor {
	if p, ok := tenancy.PrincipalFrom(ctx); ok {
		a := schematype.Actor{Type: "credential", CredentialID: p.KeyID.String(), KeyPrefix: p.KeyPrefix}
		if p.HasUser() {
			a.UserID = p.UserID.String()
		}
		return a
	}
	if tenancy.IsOperator(ctx) {
		return schematype.Actor{Type: "operator"}
	}
	return schematype.Actor{Type: "system"}
}
