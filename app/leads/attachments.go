package leads

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Attachment reads one attachment of a lead with its content. It stays readable through the
// lead after a conversion gave it to the contact, for as long as the lead exists.
func (s *Service) Attachment(ctx context.Context, leadID, id uuid.UUID) (*ent.LeadAttachment, error) {
	a, err := tenancy.Client(ctx).LeadAttachment.Query().
		Where(leadattachment.ID(id), leadattachment.LeadID(leadID)).Only(ctx)
	return a, errs.FromEnt(err, "attachment %s of lead %s", id, leadID)
}

// ContactAttachment reads one attachment a conversion gave to a contact, with its content: the
// file's home once the lead is deleted. The contact is read first, so a contact the credential
// may not see (another company's, or outside a user's visibility) is a 404 like a missing one.
func (s *Service) ContactAttachment(ctx context.Context, contactID, id uuid.UUID) (*ent.LeadAttachment, error) {
	db := tenancy.Client(ctx)
	ok, err := db.Contact.Query().Where(contact.ID(contactID)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("read contact %s: %w", contactID, err)
	}
	if !ok {
		return nil, errs.NotFound("contact %s not found", contactID)
	}
	a, err := db.LeadAttachment.Query().Where(leadattachment.ID(id), leadattachment.ContactID(contactID)).Only(ctx)
	return a, errs.FromEnt(err, "attachment %s of contact %s", id, contactID)
}

// content handles GET /leads/{leadId}/attachments/{attachmentId}/content: the file as stored,
// as a download (httpx.SendFile), never rendered by a browser.
func (h *Handler) content(c *fiber.Ctx) error {
	return sendAttachment(c, httpx.PathChildID("leadId", "attachmentId"), h.svc.Attachment)
}

// contactContent handles GET /contacts/{contactId}/attachments/{attachmentId}/content: a lead's
// attachment that a conversion gave to the contact, also after the lead was deleted.
func (h *Handler) contactContent(c *fiber.Ctx) error {
	return sendAttachment(c, httpx.PathChildID("contactId", "attachmentId"), h.svc.ContactAttachment)
}

// sendAttachment reads the attachment the path names below its holder and sends it.
func sendAttachment(c *fiber.Ctx, key func(*fiber.Ctx) (httpx.ChildID, error),
	read func(ctx context.Context, holder, id uuid.UUID) (*ent.LeadAttachment, error)) error {
	k, err := key(c)
	if err != nil {
		return err
	}
	a, err := read(c.UserContext(), k.Parent, k.ID)
	if err != nil {
		return err
	}
	return httpx.SendFile(c, a.Filename, a.Content)
}
