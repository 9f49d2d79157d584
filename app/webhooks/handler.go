package webhooks

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/webhookdelivery"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves /webhook-endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	const one = "/webhook-endpoints/:webhookEndpointId"
	r.Get("/webhook-endpoints", policy.Require("webhooks:read"), h.list)
	r.Post("/webhook-endpoints", policy.Require("webhooks:write"), h.idem, h.create)
	r.Get(one, policy.Require("webhooks:read"), h.get)
	r.Patch(one, policy.Require("webhooks:write"), h.update)
	r.Delete(one, policy.Require("webhooks:write"), h.delete)
	r.Post(one+"/rotate-secret", policy.Require("webhooks:write"), h.rotate)
	r.Post(one+"/test", policy.Require("webhooks:write"), h.test)
	r.Get(one+"/deliveries", policy.Require("webhooks:read"), h.deliveries)
	r.Post(one+"/deliveries/:deliveryId/retry", policy.Require("webhooks:write"), h.retry)
}

func location(e *ent.WebhookEndpoint) string {
	return "/api/public/v1/webhook-endpoints/" + e.ID.String()
}

// list handles GET /webhook-endpoints: Paged, oldest first.
func (h *Handler) list(c *fiber.Ctx) error {
	page, err := h.pager.Parse(c, "webhook-endpoints")
	if err != nil {
		return err
	}
	rows, err := h.svc.List(c.UserContext(), page.After, page.Limit)
	if err != nil {
		return err
	}
	now := h.svc.now()
	return httpx.WritePage(c, page, rows, func(e *ent.WebhookEndpoint) []string {
		return httpx.CreatedKey(e.CreatedAt, e.ID)
	}, httpx.Plain(func(e *ent.WebhookEndpoint) View { return NewView(e, now) }))
}

// create handles POST /webhook-endpoints: 201 with the secret, shown this once.
func (h *Handler) create(c *fiber.Ctx) error {
	var in Input
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	ep, secret, err := h.svc.Create(c.UserContext(), in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store") // the answer carries a secret
	return httpx.Created(c, location(ep), CreatedView{View: NewView(ep, h.svc.now()), Secret: secret}, ep.Version)
}

// endpoint reads the path's endpoint, locked when lock is set.
func (h *Handler) endpoint(c *fiber.Ctx, lock bool) (*ent.WebhookEndpoint, error) {
	id, err := httpx.UUIDParam(c, "webhookEndpointId")
	if err != nil {
		return nil, err
	}
	if lock {
		return h.svc.Lock(c.UserContext(), id)
	}
	return h.svc.Get(c.UserContext(), id)
}

// get handles GET /webhook-endpoints/{webhookEndpointId}.
func (h *Handler) get(c *fiber.Ctx) error {
	ep, err := h.endpoint(c, false)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewView(ep, h.svc.now()), ep.Version)
}

// update handles PATCH /webhook-endpoints/{webhookEndpointId}: a merge patch of
// WebhookEndpointInput; If-Match optional.
func (h *Handler) update(c *fiber.Ctx) error {
	cur, err := h.endpoint(c, true)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, cur.Version, false); err != nil {
		return err
	}
	in := Input{URL: &cur.URL, Events: cur.EventTypes, Description: cur.Description, Enabled: &cur.Enabled}
	if err := httpx.MergePatch(c, &in); err != nil {
		return err
	}
	ep, err := h.svc.Update(c.UserContext(), cur, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewView(ep, h.svc.now()), ep.Version)
}

// delete handles DELETE /webhook-endpoints/{webhookEndpointId}; If-Match optional.
func (h *Handler) delete(c *fiber.Ctx) error {
	ep, err := h.endpoint(c, true)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, ep.Version, false); err != nil {
		return err
	}
	if err := h.svc.Delete(c.UserContext(), ep); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// rotate handles POST /webhook-endpoints/{webhookEndpointId}/rotate-secret.
func (h *Handler) rotate(c *fiber.Ctx) error {
	ep, err := h.endpoint(c, true)
	if err != nil {
		return err
	}
	secret, expires, err := h.svc.Rotate(c.UserContext(), ep)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(RotatedView{Secret: secret, PreviousSecretExpiresAt: expires})
}

// test handles POST /webhook-endpoints/{webhookEndpointId}/test: a ping now, answered with its
// WebhookDelivery (whatever the receiver answered: the delivery's status says it).
func (h *Handler) test(c *fiber.Ctx) error {
	ep, err := h.endpoint(c, false)
	if err != nil {
		return err
	}
	d, err := h.svc.Test(c.UserContext(), ep)
	if err == errBusyTests {
		c.Set(fiber.HeaderRetryAfter, "1")
	}
	if err != nil {
		return err
	}
	return c.JSON(NewDeliveryView(d))
}

// deliveries handles GET /webhook-endpoints/{webhookEndpointId}/deliveries: Paged, newest
// first, the last 30 days, status filters.
func (h *Handler) deliveries(c *fiber.Ctx) error {
	var v errs.Invalid
	status := c.Query("status")
	v.Check("status", status == "" || webhookdelivery.StatusValidator(webhookdelivery.Status(status)) == nil,
		"invalid_enum", "must be one of succeeded, failed, pending")
	ep, err := h.endpoint(c, false)
	if err != nil {
		return err
	}
	page, err := h.pager.Parse(c, "webhook-deliveries?endpoint="+ep.ID.String()+"&status="+status)
	if perr, ok := err.(*errs.Invalid); ok {
		v.Errors = append(v.Errors, perr.Errors...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.svc.Deliveries(c.UserContext(), ep, status, page.After, page.Limit)
	if err != nil {
		return err
	}
	return httpx.WritePage(c, page, rows, func(d *ent.WebhookDelivery) []string {
		return httpx.CreatedKey(d.CreatedAt, d.ID)
	}, httpx.Plain(NewDeliveryView))
}

// retry handles POST /webhook-endpoints/{webhookEndpointId}/deliveries/{deliveryId}/retry:
// 202 with the queued (pending) delivery.
func (h *Handler) retry(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "deliveryId")
	if err != nil {
		return err
	}
	ep, err := h.endpoint(c, false)
	if err != nil {
		return err
	}
	d, err := h.svc.Retry(c.UserContext(), ep, id)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(d)
}
