package portal

import (
	"bytes"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
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

// getAccess handles GET /contacts/{contactId}/portal-access: 200 with the ETag of its version.
func (h *Handler) getAccess(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	a, err := h.svc.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.OK(c, a.View(), a.Version)
}

// invite handles POST /contacts/{contactId}/portal-access (optional body InviteInput): 201 with
// the access as the invitation left it.
func (h *Handler) invite(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	var in InviteInput
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
	}
	a, err := h.svc.Invite(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return httpx.Created(c, httpx.URL("contacts", id.String(), "portal-access"), a.View(), a.Version)
}

// revoke handles DELETE /contacts/{contactId}/portal-access: 204.
func (h *Handler) revoke(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contactId")
	if err != nil {
		return err
	}
	if err := h.svc.Revoke(c.UserContext(), id); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// listChanges handles GET /portal-change-requests: Paged, oldest first; a bank request's IBAN
// in full only for contacts.sensitive:read.
func (h *Handler) listChanges(c *fiber.Ctx) error {
	sensitive := contacts.MaySeeSensitive(c)
	return httpx.ServeListFor(c, h.pager, "portal-change-requests", parseChangeFilter, h.svc.ListChanges,
		func(ChangeFilter) (_ paging.Keyset[*ent.PortalChangeRequest], _ func(*ent.PortalChangeRequest) (ChangeView, error)) {
			return changesOldestFirst, func(r *ent.PortalChangeRequest) (ChangeView, error) {
				return h.svc.m.ChangeView(r, sensitive)
			}
		})
}

// parseChangeFilter reads the query of GET /portal-change-requests; every bad parameter is
// listed.
func parseChangeFilter(c *fiber.Ctx, v *errs.Invalid) (f ChangeFilter, _ error) {
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.Status = "pending"
	if s := httpx.QueryEnum(c, v, "status", schema.PortalChangeStatuses); s != nil {
		f.Status = *s
	}
	return f, nil
}

// decide handles POST /portal-change-requests/{changeRequestId}/{decision} (optional body
// DecideInput): 200 with the decided request and its ETag; 404 for a decision other than
// approve or reject.
func (h *Handler) decide(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "changeRequestId")
	if err != nil {
		return err
	}
	decision := c.Params("decision")
	if decision != DecisionApprove && decision != DecisionReject {
		return errs.NotFound("no decision %q: approve or reject", decision)
	}
	decision = string([]byte(decision)) // Fiber reuses the path's memory
	var in DecideInput
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
	}
	r, err := h.svc.Decide(c.UserContext(), id, decision, in)
	if err != nil {
		return err
	}
	v, err := h.svc.m.ChangeView(r, contacts.MaySeeSensitive(c))
	if err != nil {
		return err
	}
	return httpx.OK(c, v, r.Version)
}
