package contracts

import (
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the contract endpoints and the catalogs.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /contracts uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/contracts", policy.Require("contracts:read"), h.list)
	r.Post("/contracts", policy.Require("contracts:write"), h.idem, h.create)
	r.Get("/contracts/:contractId", policy.Require("contracts:read"), h.get)
	r.Patch("/contracts/:contractId", policy.Require("contracts:write"), h.update)
	r.Delete("/contracts/:contractId", policy.Require("contracts:write"), h.delete)
	r.Put("/external/:source/contracts/:externalId", policy.Require("contracts:write"), h.upsert)
	r.Get("/insurers", policy.Require("contracts:read"), h.insurers)
	r.Get("/contract-types", policy.Require("contracts:read"), h.types)
}

func location(c Contract) string { return "/api/public/v1/contracts/" + c.ID.String() }

// list handles GET /contracts: Paged, oldest first (createdAt, id).
func (h *Handler) list(c *fiber.Ctx) error {
	var v errs.Invalid
	f, binding := parseListFilter(c, &v)
	page, err := h.pager.Parse(c, binding)
	if perr, ok := err.(*errs.Invalid); ok {
		v.Errors = append(v.Errors, perr.Errors...)
	} else if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.svc.List(c.UserContext(), f, page.After, page.Limit)
	if err != nil {
		return err
	}
	return httpx.WritePage(c, page, rows, func(r Contract) []string {
		return httpx.CreatedKey(r.CreatedAt, r.ID)
	}, httpx.Plain(Contract.View))
}

// create handles POST /contracts.
func (h *Handler) create(c *fiber.Ctx) error {
	var in Input
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	ct, err := h.svc.Create(c.UserContext(), in, Extra{})
	if err != nil {
		return err
	}
	return httpx.Created(c, location(ct), ct.View(), ct.Version)
}

// get handles GET /contracts/{contractId}.
func (h *Handler) get(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contractId")
	if err != nil {
		return err
	}
	ct, err := h.svc.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.OK(c, ct.View(), ct.Version)
}

// update handles PATCH /contracts/{contractId}: a merge patch of ContractInput; If-Match
// optional (a stale one is 412).
func (h *Handler) update(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contractId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	cur, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, cur.Version, false); err != nil {
		return err
	}
	in := InputOf(cur)
	if err := httpx.MergePatch(c, &in); err != nil {
		return err
	}
	ct, _, err := h.svc.Update(ctx, cur, in, Extra{})
	if err != nil {
		return err
	}
	return httpx.OK(c, ct.View(), ct.Version)
}

// delete handles DELETE /contracts/{contractId}; If-Match optional.
func (h *Handler) delete(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "contractId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	cur, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, cur.Version, false); err != nil {
		return err
	}
	if err := h.svc.Delete(ctx, cur); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

// insurers handles GET /insurers: the whole catalog, by name; query vuNumber narrows it.
func (h *Handler) insurers(c *fiber.Ctx) error {
	vu := strings.Clone(c.Query("vuNumber"))
	if vu != "" && (utf8.RuneCountInString(vu) > 5 || strings.ContainsRune(vu, 0)) {
		return errs.InvalidField("vuNumber", "invalid_length", "has 1 to 5 characters")
	}
	rows, err := h.svc.Insurers(c.UserContext(), vu)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": rows})
}

// types handles GET /contract-types: the GDV Sparten.
func (h *Handler) types(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"data": Types()})
}
