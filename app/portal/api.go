package portal

// STUB: the owner of the five API operations replaces this file (and adds its own files:
// access.go, changes.go, view.go, mail.go ...).

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the portal's API operations.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST
// …/portal-access (a retried invitation mails once).
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the API routes (the spec's scopes; portal:write needs the feature
// customer_portal in the policy, the reads check it in the service).
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/contacts/:contactId/portal-access", policy.Require("contacts:read"), h.getAccess)
	r.Post("/contacts/:contactId/portal-access", policy.Require("portal:write"), h.idem, h.invite)
	r.Delete("/contacts/:contactId/portal-access", policy.Require("portal:write"), h.revoke)
	r.Get("/portal-change-requests", policy.Require("contacts:read"), h.listChanges)
	r.Post("/portal-change-requests/:changeRequestId/:decision", policy.Require("contacts:write"), h.decide)
}

func (h *Handler) getAccess(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
func (h *Handler) invite(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
func (h *Handler) revoke(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
func (h *Handler) listChanges(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (h *Handler) decide(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
