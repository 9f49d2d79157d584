package privacy

import (
	"github.com/gofiber/fiber/v2"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/privacyrequest"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the privacy endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler; idem is the Idempotency-Key middleware of the POSTs.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. The list needs privacy:read, which only the scope privacy:write
// grants (the spec's scope), so an agent's key with it lists the requests of its contacts; a
// request is made with privacy:write, which the agent role lacks (policy.csv: managers and
// admins act on data-subject requests).
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/privacy-requests", policy.Require("privacy:read"), h.list)
	// No Idempotency-Key on the export: the stored answer would keep the download link's token
	// in the database for a day, which only its hash may be; a repeated POST makes a second
	// export with a link of its own, which costs a ZIP and nothing else.
	r.Post("/contacts/:contactId/privacy/data-export", policy.Require("privacy:write"), h.export)
	r.Post("/contacts/:contactId/privacy/erasure", policy.Require("privacy:write"), h.idem, h.erasure)
}

// list handles GET /privacy-requests: paged, newest first; query type, status, contactId.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "privacy-requests", parseFilter, h.svc.List, newestFirst, NewView)
}

func parseFilter(c *fiber.Ctx, v *errs.Invalid) (f Filter, _ error) {
	f.Type = httpx.QueryEnum(c, v, "type", schema.PrivacyRequestTypes)
	f.Status = httpx.QueryEnum(c, v, "status", schema.PrivacyRequestStatuses)
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	return f, nil
}

// export handles POST /contacts/{contactId}/privacy/data-export: 202 with the queued request
// and its download link. No body is read.
func (h *Handler) export(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	r, err := h.svc.Create(c.UserContext(), NewRequest{Type: privacyrequest.TypeDataExport, ContactID: id})
	if err != nil {
		return err
	}
	return accepted(c, r)
}

// erasure handles POST /contacts/{contactId}/privacy/erasure: {reason, requestedAt}; 202 with
// the queued request.
func (h *Handler) erasure(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	in := ErasureInput{now: h.svc.m.d.Now}
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	reason := strings.TrimSpace(*in.Reason)
	r, err := h.svc.Create(c.UserContext(), NewRequest{Type: privacyrequest.TypeErasure, ContactID: id, Reason: &reason,
		RequestedAt: in.requestedAt})
	if err != nil {
		return err
	}
	return accepted(c, r)
}

func accepted(c *fiber.Ctx, r Created) error {
	c.Set(fiber.HeaderETag, httpx.ETag(r.Version))
	return c.Status(fiber.StatusAccepted).JSON(r.View())
}
