package portal

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The signatures page: the requests the customer is asked to sign (as the signer with role
// contact of a request of its own contact) and those it completed. Signing itself is the
// signing page of app/signatures (its one-time code included): the portal only sends the
// signed-in customer there, so a customer who lost the mail still finds its link.

// signatureRow is one request on the signatures page.
type signatureRow struct {
	SignerID string // pending: the form's path
	Title    string
	Date     string // pending: until when; completed: when
	// DocumentID is the released signed PDF of a completed request ("" when not released).
	DocumentID string
}

type signaturesData struct {
	Pending, Completed []signatureRow
}

// customerSigners narrows a signer query to the session's customer: signers with role
// contact of its own contact's requests.
func customerSigners(q *ent.SignatureSignerQuery, s *Session) *ent.SignatureSignerQuery {
	return q.Where(signaturesigner.ContactID(s.ContactID), signaturesigner.RoleEQ(signaturesigner.RoleContact))
}

// signatures handles GET /portal/{companyId}/signatures.
func (m *Module) signatures(c *fiber.Ctx) error {
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		db := tenancy.Client(ctx)
		signers, err := customerSigners(db.SignatureSigner.Query(), s).All(ctx)
		if err != nil {
			return fmt.Errorf("portal: signers of %s: %w", s.ContactID, err)
		}
		byRequest := map[uuid.UUID]*ent.SignatureSigner{}
		ids := make([]uuid.UUID, 0, len(signers))
		for _, sg := range signers {
			byRequest[sg.RequestID] = sg
			ids = append(ids, sg.RequestID)
		}
		reqs, err := db.SignatureRequest.Query().Where(signaturerequest.ContactID(s.ContactID), signaturerequest.IDIn(ids...),
			signaturerequest.StatusIn(signaturerequest.StatusPending, signaturerequest.StatusCompleted)).
			Order(ent.Desc(signaturerequest.FieldCreatedAt), ent.Desc(signaturerequest.FieldID)).All(ctx)
		if err != nil {
			return fmt.Errorf("portal: signature requests of %s: %w", s.ContactID, err)
		}
		var signed []uuid.UUID
		for _, r := range reqs {
			if r.SignedDocumentID != nil {
				signed = append(signed, *r.SignedDocumentID)
			}
		}
		releasedIDs := map[uuid.UUID]bool{}
		if len(signed) > 0 {
			ds, err := released(db.Document.Query(), s).Where(document.IDIn(signed...)).IDs(ctx)
			if err != nil {
				return fmt.Errorf("portal: signed documents of %s: %w", s.ContactID, err)
			}
			for _, id := range ds {
				releasedIDs[id] = true
			}
		}
		now := m.d.Now()
		d := signaturesData{Pending: []signatureRow{}, Completed: []signatureRow{}}
		for _, r := range reqs {
			sg := byRequest[r.ID]
			switch {
			case r.Status == signaturerequest.StatusPending && sg.Status == signaturesigner.StatusPending &&
				r.ExpiresAt.After(now):
				d.Pending = append(d.Pending, signatureRow{SignerID: sg.ID.String(), Title: r.Title,
					Date: germanDate(&r.ExpiresAt)})
			case r.Status == signaturerequest.StatusCompleted:
				row := signatureRow{Title: r.Title, Date: germanDate(r.CompletedAt)}
				if r.SignedDocumentID != nil && releasedIDs[*r.SignedDocumentID] {
					row.DocumentID = r.SignedDocumentID.String()
				}
				d.Completed = append(d.Completed, row)
			}
		}
		return m.render(c, fiber.StatusOK, "signatures", PageData{Title: "Unterschriften", SignedIn: true,
			Nav: "signatures", Data: d})
	})
}

// openSigning handles POST /portal/{companyId}/signatures/{signerId}/open: 303 to the signing
// page of the customer's pending signer. The form (CSRF) and not a plain link: the signing
// link is a credential of its own, computed only for a signed-in customer who asks for it,
// and never put on a page. Another contact's signer, a signer not the customer's (broker,
// another person), or one no longer pending: the 404 page.
func (m *Module) openSigning(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	id, err := uuid.Parse(c.Params("signerId"))
	if err != nil {
		return m.notFound(c)
	}
	var target string
	err = m.signedIn(c, func(ctx context.Context, s *Session) error {
		db := tenancy.Client(ctx)
		sg, err := customerSigners(db.SignatureSigner.Query(), s).
			Where(signaturesigner.ID(id), signaturesigner.StatusEQ(signaturesigner.StatusPending)).Only(ctx)
		if ent.IsNotFound(err) {
			return m.notFound(c)
		}
		if err != nil {
			return fmt.Errorf("portal: signer %s: %w", id, err)
		}
		ok, err := db.SignatureRequest.Query().Where(signaturerequest.ID(sg.RequestID),
			signaturerequest.ContactID(s.ContactID), signaturerequest.StatusEQ(signaturerequest.StatusPending),
			signaturerequest.ExpiresAtGT(m.d.Now())).Exist(ctx)
		if err != nil {
			return fmt.Errorf("portal: signature request %s: %w", sg.RequestID, err)
		}
		if !ok {
			return m.notFound(c)
		}
		target = m.d.Signing.SignerURL(s.CompanyID, sg.ID)
		return nil
	})
	if err != nil || target == "" {
		return err
	}
	Headers(c)
	return c.Redirect(target, fiber.StatusSeeOther)
}
