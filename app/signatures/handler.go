package signatures

import (
	"context"
	"errors"
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the signature request endpoints.
type Handler struct {
	svc    *Service
	pager  *httpx.Pager
	idem   fiber.Handler
	get    fiber.Handler
	create fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST
// /signature-requests.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(v View) int64 { return v.Version() }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// GET /signature-requests/{signatureRequestId}: 200 with signer progress and the ETag.
		get: httpx.Read[uuid.UUID, View]{Key: httpx.PathID("signatureRequestId"), Get: svc.Get, Version: version,
			View: httpx.View(func(v View) View { return v })}.Handle,
		// POST /signature-requests: 201 with Location and ETag.
		create: httpx.Create[CreateInput, View]{Create: svc.Create,
			Location: func(v View) string { return httpx.URL("signature-requests", v.ID.String()) },
			Version:  version, View: httpx.View(func(v View) View { return v })}.Handle,
	}
}

// Mount registers the API routes. The feature digital_signature gates signatures:* in the
// policy, so every route answers 403 without it.
func (h *Handler) Mount(r fiber.Router) {
	read, write := policy.Require("signatures:read"), policy.Require("signatures:write")
	r.Get("/signature-requests", read, h.list)
	r.Post("/signature-requests", write, h.idem, h.create)
	r.Get("/signature-requests/:signatureRequestId", read, h.get)
	r.Post("/signature-requests/:signatureRequestId/cancel", write, h.cancel)
	r.Post("/signature-requests/:signatureRequestId/remind", write, h.remind)
}

// list handles GET /signature-requests: Paged, oldest first.
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "signature-requests", parseListFilter, h.svc.List, oldestFirst,
		func(v View) View { return v })
}

// parseListFilter reads the query of GET /signature-requests; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.Statuses = httpx.QueryEnums(c, v, "status", schema.SignatureRequestStatuses)
	return f, nil
}

// cancel handles POST /signature-requests/{signatureRequestId}/cancel: 200 with the cancelled
// request and its ETag; 409 for a request that is not pending.
func (h *Handler) cancel(c *fiber.Ctx) error {
	return h.act(c, func(ctx context.Context, id uuid.UUID) error {
		v, err := h.svc.Cancel(ctx, id)
		if err != nil {
			return err
		}
		return httpx.OK(c, v, v.Version())
	})
}

// remind handles POST /signature-requests/{signatureRequestId}/remind: 202 {reminded:
// [signerId]} (the mails are queued, not yet delivered); 409 when the request is not pending,
// or remind_too_soon with Retry-After when every pending signer was mailed within the hour.
func (h *Handler) remind(c *fiber.Ctx) error {
	return h.act(c, func(ctx context.Context, id uuid.UUID) error {
		out, err := h.svc.Remind(ctx, id)
		var soon *TooSoonError
		if errors.As(err, &soon) {
			c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(int64(math.Ceil(soon.Wait.Seconds())), 10))
		}
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusAccepted).JSON(out)
	})
}

// act is the head of the item actions: the path's id (400 when malformed), then fn. They take
// no body.
func (h *Handler) act(c *fiber.Ctx, fn func(ctx context.Context, id uuid.UUID) error) error {
	id, err := httpx.UUIDParam(c, "signatureRequestId")
	if err != nil {
		return err
	}
	return fn(c.UserContext(), id)
}
