package leads

import (
	"context"
	"fmt"
	"mime"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Attachment reads one attachment of a lead with its content. It stays readable through the
// lead after a conversion moved it to the contact.
func (s *Service) Attachment(ctx context.Context, leadID, id uuid.UUID) (*ent.LeadAttachment, error) {
	a, err := tenancy.Client(ctx).LeadAttachment.Query().
		Where(leadattachment.ID(id), leadattachment.LeadID(leadID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errs.NotFound("attachment %s of lead %s not found", id, leadID)
	}
	if err != nil {
		return nil, fmt.Errorf("read attachment %s: %w", id, err)
	}
	return a, nil
}

// content handles GET /leads/{leadId}/attachments/{attachmentId}/content: the file as stored,
// with its content type (application/octet-stream when that is no media type) and always as a
// download, never rendered by a browser.
func (h *Handler) content(c *fiber.Ctx) error {
	leadID, err := httpx.UUIDParam(c, "leadId")
	if err != nil {
		return err
	}
	id, err := httpx.UUIDParam(c, "attachmentId")
	if err != nil {
		return err
	}
	a, err := h.svc.Attachment(c.UserContext(), leadID, id)
	if err != nil {
		return err
	}
	ct := fiber.MIMEOctetStream
	if mt, params, err := mime.ParseMediaType(a.ContentType); err == nil {
		ct = mime.FormatMediaType(mt, params)
	}
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename})
	if disp == "" { // a name FormatMediaType cannot encode
		disp = "attachment"
	}
	c.Set(fiber.HeaderContentType, ct)
	c.Set(fiber.HeaderContentDisposition, disp)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Send(a.Content)
}
