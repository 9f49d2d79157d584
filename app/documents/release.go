package documents

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The release of a document to the customer portal (issue 23, docs/decisions/portal.md): a
// document is the broker's until released; the portal lists and serves released documents only
// (app/portal, and the database's policy portal_released_documents for the portal role). A
// document is released by the upload's field releasedToCustomer, by PATCH /documents/{id}
// {releasedToCustomer}, or, for the signed PDF of a signature request whose contact signed,
// when the request completes (ReleaseSigned): the customer signed it, so it is the customer's
// to keep. Withdrawing a release (false) hides the document from the portal again; released_at
// is the time of the latest release.

// ReleaseInput is the body of PATCH /documents/{documentId} (application/merge-patch+json):
// the one thing of a document that changes.
type ReleaseInput struct {
	ReleasedToCustomer *bool `json:"releasedToCustomer"`
}

// Validate checks the merged patch: null is not a release state.
func (in ReleaseInput) Validate() error {
	var v errs.Invalid
	v.Check("releasedToCustomer", in.ReleasedToCustomer != nil, "required", "must be true or false")
	return v.Err()
}

// releaseInput is d as the input a merge patch applies to.
func releaseInput(d *ent.Document) ReleaseInput {
	r := d.ReleasedAt != nil
	return ReleaseInput{ReleasedToCustomer: &r}
}

// Lock reads one document and locks its row to the end of the transaction (PATCH). Another
// company's, or one of a contact the credential may not see, is not found.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Document, error) {
	d, err := tenancy.Client(ctx).Document.Query().Where(document.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "document %s", id)
	}
	return d, nil
}

// SetReleased releases d to the customer or withdraws its release and records
// document.updated. Asking for the state d is in changes nothing (no new version, no event): a
// release keeps the time it was first made.
func (s *Service) SetReleased(ctx context.Context, d *ent.Document, in ReleaseInput) (*ent.Document, error) {
	want := in.ReleasedToCustomer != nil && *in.ReleasedToCustomer
	if want == (d.ReleasedAt != nil) {
		return d, nil
	}
	owner, err := s.contactOwner(ctx, d.ContactID)
	if err != nil {
		return nil, err
	}
	u := tenancy.Client(ctx).Document.UpdateOne(d)
	if want {
		u.SetReleasedAt(time.Now())
	} else {
		u.ClearReleasedAt()
	}
	saved, err := u.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("release document %s: %w", d.ID, err)
	}
	if err := s.events.Record(ctx, "document.updated", newView(saved, owner)); err != nil {
		return nil, err
	}
	return saved, nil
}

// ReleaseSigned releases the signed PDF of r, a signature request completing in the transaction
// of ctx (signatures.Module.OnCompleted), when its contact signed it (a signer with role
// contact): what the customer signed is its to download in the portal. A request signed by the
// broker and other people only releases nothing.
func (s *Service) ReleaseSigned(ctx context.Context, r *ent.SignatureRequest) error {
	if r.SignedDocumentID == nil {
		return nil
	}
	signed, err := tenancy.Client(ctx).SignatureSigner.Query().Where(signaturesigner.RequestID(r.ID),
		signaturesigner.RoleEQ(signaturesigner.RoleContact), signaturesigner.StatusEQ(signaturesigner.StatusSigned)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("signers of signature request %s: %w", r.ID, err)
	}
	if !signed {
		return nil
	}
	d, err := s.Lock(ctx, *r.SignedDocumentID)
	if err != nil {
		return fmt.Errorf("release signed document of signature request %s: %w", r.ID, err)
	}
	release := true
	_, err = s.SetReleased(ctx, d, ReleaseInput{ReleasedToCustomer: &release})
	return err
}
