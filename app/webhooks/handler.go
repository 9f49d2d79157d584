package webhooks

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves /webhook-endpoints.
type Handler struct {
	svc                         *Service
	pager                       *httpx.Pager
	idem                        fiber.Handler
	create, get, update, delete fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	h := &Handler{svc: svc, pager: pager, idem: idem}
	key, version := httpx.PathID("webhookEndpointId"), func(e *ent.WebhookEndpoint) int64 { return e.Version }
	// POST /webhook-endpoints: 201 with the secret, shown this once.
	h.create = httpx.Create[Input, Registered]{Create: svc.Create,
		Location: func(ep Registered) string { return location(ep.WebhookEndpoint) },
		Version:  func(ep Registered) int64 { return ep.Version },
		View: func(c *fiber.Ctx, ep Registered) (any, error) {
			c.Set(fiber.HeaderCacheControl, "no-store") // the answer carries a secret
			return CreatedView{View: h.view(ep.WebhookEndpoint), Secret: ep.Secret}, nil
		}}.Handle
	// GET /webhook-endpoints/{webhookEndpointId}.
	h.get = httpx.Read[uuid.UUID, *ent.WebhookEndpoint]{Key: key, Get: svc.Get, Version: version,
		View: httpx.View(h.view)}.Handle
	// PATCH /webhook-endpoints/{webhookEndpointId}: a merge patch of WebhookEndpointInput;
	// If-Match optional.
	h.update = httpx.Patch[uuid.UUID, *ent.WebhookEndpoint, Input]{Key: key, Lock: svc.Lock, Version: version,
		Input: inputOf, Update: svc.Update, View: httpx.View(h.view)}.Handle
	// DELETE /webhook-endpoints/{webhookEndpointId}; If-Match optional.
	h.delete = httpx.Delete[uuid.UUID, *ent.WebhookEndpoint]{Key: key, Lock: svc.Lock, Version: version,
		Delete: svc.Delete}.Handle
	return h
}

// view is the WebhookEndpoint resource of e now.
func (h *Handler) view(e *ent.WebhookEndpoint) View { return NewView(e, h.svc.now()) }

// inputOf is ep as the input of a merge patch.
func inputOf(ep *ent.WebhookEndpoint) Input {
	return Input{URL: &ep.URL, Events: ep.EventTypes, Description: ep.Description, Enabled: &ep.Enabled}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	const one = "/webhook-endpoints/:webhookEndpointId"
	httpx.Collection{Path: "/webhook-endpoints", Param: "webhookEndpointId", Scope: "webhooks", Idem: h.idem, List: h.list,
		Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
	r.Post(one+"/rotate-secret", policy.Require("webhooks:write"), h.rotate)
	r.Post(one+"/test", policy.Require("webhooks:write"), h.test)
	r.Get(one+"/deliveries", policy.Require("webhooks:read"), h.deliveries)
	r.Post(one+"/deliveries/:deliveryId/retry", policy.Require("webhooks:write"), h.retry)
}

func location(e *ent.WebhookEndpoint) string { return httpx.URL("webhook-endpoints", e.ID.String()) }

// list handles GET /webhook-endpoints: Paged, oldest first.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "webhook-endpoints", httpx.NoFilter, h.svc.List, endpointsOldestFirst, h.view)
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

// rotate handles POST /webhook-endpoints/{webhookEndpointId}/rotate-secret.
func (h *Handler) rotate(c *fiber.Ctx) error {
	ep, err := h.endpoint(c, true)
	if err != nil {
		return err
	}
	r, err := h.svc.Rotate(c.UserContext(), ep)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(RotatedView{Secret: r.Secret, PreviousSecretExpiresAt: r.PreviousSecretExpiresAt})
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
	return httpx.ServeList(c, h.pager, "webhook-deliveries", parseDeliveryFilter, h.svc.Deliveries, newestFirst, NewDeliveryView)
}

// deliveryStatuses are the values of the status filter, in the order the message names them.
var deliveryStatuses = []string{"succeeded", "failed", "pending"}

// parseDeliveryFilter reads the endpoint of the path (400 when malformed) and the status filter.
func parseDeliveryFilter(c *fiber.Ctx, v *errs.Invalid) (f DeliveryFilter, err error) {
	f.Status = httpx.QueryEnum(c, v, "status", deliveryStatuses)
	f.EndpointID, err = httpx.UUIDParam(c, "webhookEndpointId")
	return f, err
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
	return c.Status(fiber.StatusAccepted).JSON(NewDeliveryView(d))
}
