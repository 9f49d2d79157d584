package delegations

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/google/uuid"
)

func userID(id uuid.UUID) predicate.User { return user.ID(id) }

// Handler serves the delegation endpoints.
type Handler struct {
	svc          *Service
	list, create fiber.Handler
}

// NewHandler builds the handler.
func NewHandler(svc *Service) *Handler {
	return &Handler{svc: svc,
		// GET /users/{userId}/delegations: every delegation the user gave, in one page, each
		// marked active or not at one instant.
		list: httpx.Read[uuid.UUID, []*ent.Delegation]{Key: httpx.PathID("userId"), Get: svc.List,
			View: func(c *fiber.Ctx, rows []*ent.Delegation) (any, error) {
				now := svc.Now()
				return httpx.DataView(func(d *ent.Delegation) View { return NewView(d, now) })(c, rows)
			}}.Handle,
		// POST /users/{userId}/delegations: no ETag (a delegation is never changed, only deleted).
		create: httpx.CreateUnder[uuid.UUID, CreateInput, *ent.Delegation]{Key: httpx.PathID("userId"),
			Create: svc.Create,
			Location: func(d *ent.Delegation) string {
				return httpx.URL("users", d.DelegatorID.String(), "delegations", d.ID.String())
			},
			View: func(_ *fiber.Ctx, d *ent.Delegation) (any, error) { return NewView(d, svc.Now()), nil }}.Handle,
	}
}

// Mount registers the routes (scope admin:write, the company's administration). r
// authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/users/:userId/delegations", policy.Require("admin:write"), h.list)
	r.Post("/users/:userId/delegations", policy.Require("admin:write"), h.create)
	r.Delete("/users/:userId/delegations/:delegationId", policy.Require("admin:write"), h.delete)
}

// delete handles DELETE /users/{userId}/delegations/{delegationId}.
func (h *Handler) delete(c *fiber.Ctx) error {
	k, err := httpx.PathChildID("userId", "delegationId")(c)
	if err != nil {
		return err
	}
	if err := h.svc.Delete(c.UserContext(), k.Parent, k.ID); err != nil {
		return err
	}
	return httpx.NoContent(c)
}
