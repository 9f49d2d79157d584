package contracts

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the contract endpoints and the catalogs.
type Handler struct {
	svc                         *Service
	pager                       *httpx.Pager
	idem                        fiber.Handler
	create, get, update, delete fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /contracts uses.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	version := func(c *ent.Contract) int64 { return c.Version }
	return &Handler{svc: svc, pager: pager, idem: idem,
		// POST /contracts.
		create: httpx.Create[Input, Contract]{Create: func(ctx context.Context, in Input) (Contract, error) {
			return svc.Create(ctx, in, Extra{})
		}, Location: location, Version: func(c Contract) int64 { return c.Version }, View: httpx.View(Contract.View)}.Handle,
		// GET /contracts/{contractId}.
		get: httpx.Read[uuid.UUID, Contract]{Key: httpx.PathID("contractId"), Get: svc.Get,
			Version: func(c Contract) int64 { return c.Version }, View: httpx.View(Contract.View)}.Handle,
		// PATCH /contracts/{contractId}: a merge patch of ContractInput; If-Match optional.
		update: httpx.Patch[uuid.UUID, *ent.Contract, Input]{Key: httpx.PathID("contractId"), Lock: svc.Lock,
			Version: version, Input: InputOf, Update: func(ctx context.Context, c *ent.Contract, in Input) (*ent.Contract, error) {
				out, err := svc.Update(ctx, c, in, Extra{})
				return out.Contract, err
			}, View: httpx.View(NewView)}.Handle,
		// DELETE /contracts/{contractId}; If-Match optional.
		delete: httpx.Delete[uuid.UUID, *ent.Contract]{Key: httpx.PathID("contractId"), Lock: svc.Lock,
			Version: version, Delete: svc.Delete}.Handle,
	}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	httpx.Collection{Path: "/contracts", Param: "contractId", Scope: "contracts", Idem: h.idem, List: h.list,
		Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
	r.Put("/external/:source/contracts/:externalId", policy.Require("contracts:write"), h.upsert)
	r.Get("/insurers", policy.Require("contracts:read"), h.insurers)
	r.Get("/contract-types", policy.Require("contracts:read"), h.types)
}

func location(c Contract) string { return httpx.URL("contracts", c.ID.String()) }

// list handles GET /contracts: Paged, oldest first (createdAt, id).
func (h *Handler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "contracts", parseListFilter, h.svc.List, oldestFirst, Contract.View)
}

// parseListFilter reads the query of GET /contracts; every bad parameter is listed.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, _ error) {
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.InsurerID = httpx.QueryUUID(c, v, "insurerId")
	if s := c.Query("type"); s != "" {
		_, known := gdv.Sparte(s)
		v.Check("type", known, "unknown_type", "is not a contract type (see GET /contract-types)")
		t := strings.Clone(s)
		f.Type = &t
	}
	f.Status = httpx.QueryEnum(c, v, "status", schema.ContractStatuses)
	f.UpdatedSince = httpx.QueryTime(c, v, "updatedSince")
	return f, nil
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
	return httpx.Data(c, rows, newInsurerView)
}

// types handles GET /contract-types: the GDV Sparten.
func (h *Handler) types(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"data": Types()})
}
