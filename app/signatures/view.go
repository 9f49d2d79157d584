package signatures

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// View is the SignatureRequest resource: the request with its signers' progress. The blob key
// of the merged PDF, the signers' token and code hashes and their signatures are never shown.
type View struct {
	ID               uuid.UUID                    `json:"id"`
	ContactID        uuid.UUID                    `json:"contactId"`
	Provider         string                       `json:"provider"`
	Status           string                       `json:"status"`
	Title            string                       `json:"title"`
	Message          string                       `json:"message"`
	Documents        []schematype.SignatureSource `json:"documents"`
	Fields           []schematype.SignatureField  `json:"fields"`
	PageCount        int                          `json:"pageCount"`
	Signers          []SignerView                 `json:"signers"`
	MailboxID        *uuid.UUID                   `json:"mailboxId"`
	ExpiresAt        time.Time                    `json:"expiresAt"`
	CompletedAt      *time.Time                   `json:"completedAt"`
	CancelledAt      *time.Time                   `json:"cancelledAt"`
	SignedDocumentID *uuid.UUID                   `json:"signedDocumentId"`
	CreatorID        *uuid.UUID                   `json:"creatorId"`
	CreatedAt        time.Time                    `json:"createdAt"`
	UpdatedAt        time.Time                    `json:"updatedAt"`
	version          int64
	owner            *uuid.UUID
}

// SignerView is one signer of a SignatureRequest and how far they got.
type SignerView struct {
	ID         uuid.UUID  `json:"id"`
	Role       string     `json:"role"`
	Name       string     `json:"name"`
	Email      string     `json:"email"`
	UserID     *uuid.UUID `json:"userId"`
	Status     string     `json:"status"`
	NotifiedAt *time.Time `json:"notifiedAt"`
	ViewedAt   *time.Time `json:"viewedAt"`
	SignedAt   *time.Time `json:"signedAt"`
	RemindedAt *time.Time `json:"remindedAt"`
}

// Version is the ETag source of GET /signature-requests/{id}.
func (v View) Version() int64 { return v.version }

// EventAbout makes the events of a request user-scoped by its contact and the contact's owner
// at the time, as the contact's documents are (a request is as visible as its contact).
func (v View) EventAbout() events.About {
	id := v.ContactID
	return events.About{ContactID: &id, OwnerID: v.owner, UserScoped: true}
}

// newView is the resource of r with its signers (ordered by position; the caller loads them).
func newView(r *ent.SignatureRequest, signers []*ent.SignatureSigner) View {
	docs := r.Documents
	if docs == nil {
		docs = []schematype.SignatureSource{}
	}
	fields := r.Fields
	if fields == nil {
		fields = []schematype.SignatureField{}
	}
	v := View{ID: r.ID, ContactID: r.ContactID, Provider: r.Provider, Status: string(r.Status), Title: r.Title,
		Message: r.Message, Documents: docs, Fields: fields, PageCount: r.PageCount,
		Signers: make([]SignerView, 0, len(signers)), MailboxID: r.MailboxID, ExpiresAt: r.ExpiresAt,
		CompletedAt: r.CompletedAt, CancelledAt: r.CancelledAt, SignedDocumentID: r.SignedDocumentID,
		CreatorID: r.CreatorID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, version: r.Version}
	for _, s := range signers {
		v.Signers = append(v.Signers, SignerView{ID: s.ID, Role: string(s.Role), Name: s.Name, Email: s.Email,
			UserID: s.UserID, Status: string(s.Status), NotifiedAt: s.NotifiedAt, ViewedAt: s.ViewedAt,
			SignedAt: s.SignedAt, RemindedAt: s.RemindedAt})
	}
	return v
}

// loadSigners reads the signers of r in position order, in ctx's transaction.
func loadSigners(ctx context.Context, r *ent.SignatureRequest) ([]*ent.SignatureSigner, error) {
	ss, err := tenancy.Client(ctx).SignatureSigner.Query().
		Where(signaturesigner.RequestID(r.ID)).
		Order(ent.Asc(signaturesigner.FieldPosition)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load signers of signature request %s: %w", r.ID, err)
	}
	return ss, nil
}

// load is the View of r (signers loaded), for reads and answers.
func load(ctx context.Context, r *ent.SignatureRequest) (View, error) {
	ss, err := loadSigners(ctx, r)
	if err != nil {
		return View{}, err
	}
	return newView(r, ss), nil
}

// recordEvent records event typ about r in ctx's transaction (a request's, or a company
// transaction of companyTx): data is the SignatureRequest with its signers as they are now,
// and the event is scoped by the contact and its owner at the time.
func (m *Module) recordEvent(ctx context.Context, typ string, r *ent.SignatureRequest) error {
	v, err := load(ctx, r)
	if err != nil {
		return err
	}
	c, err := tenancy.Client(ctx).Contact.Query().Where(contact.ID(r.ContactID)).Select(contact.FieldOwnerID).Only(ctx)
	if err != nil {
		return fmt.Errorf("record %s: owner of contact %s: %w", typ, r.ContactID, err)
	}
	v.owner = c.OwnerID
	return m.d.Events.Record(ctx, typ, v)
}
