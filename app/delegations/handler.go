package delegations

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/google/uuid"
)

func userID(id uuid.UUID) predicate.User { return user.ID(id) }

// Handler serves the delegation endpoints.
type Handler struct{ svc *Service }

// NewHandler builds the handler.
func NewHandler(svc *Service) *Handler { return &Handler{svc: svc} }

// Mount registers the routes (scope admin:write, the company's administration). r
// authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/users/:userId/delegations", policy.Require("admin:write"), h.list)
	r.Post("/users/:userId/delegations", policy.Require("admin:write"), h.create)
	r.Delete("/users/:userId/delegations/:delegationId", policy.Require("admin:write"), h.delete)
}

// list handles GET /users/{userId}/delegations: every delegation the user gave, in one page.
func (h *Handler) list(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	rows, err := h.svc.List(c.UserContext(), id)
	if err != nil {
		return err
	}
	now := h.svc.Now()
	out := make([]View, 0, len(rows))
	for _, d := range rows {
		out = append(out, NewView(d, now))
	}
	return c.JSON(fiber.Map{"data": out})
}

// create handles POST /users/{userId}/delegations.
func (h *Handler) create(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	var in CreateInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	d, err := h.svc.Create(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return httpx.Created(c, httpx.URL("users", id.String(), "delegations", d.ID.String()),
		NewView(d, h.svc.Now()), 0)
}

// delete handles DELETE /users/{userId}/delegations/{delegationId}.
func (h *Handler) delete(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	did, err := httpx.UUIDParam(c, "delegationId")
	if err != nil {
		return err
	}
	if err := h.svc.Delete(c.UserContext(), id, did); err != nil {
		return err
	}
	return httpx.NoContent(c)
}
