package portfolio

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/portfoliocsv"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// MappingHandler serves /portfolio-mappings and /portfolio-mapping-targets.
type MappingHandler struct {
	svc                         *Service
	pager                       *httpx.Pager
	idem                        fiber.Handler
	create, get, update, delete fiber.Handler
}

// NewMappingHandler builds the handler.
func NewMappingHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *MappingHandler {
	key, version := httpx.PathID("mappingId"), func(m *ent.PortfolioMapping) int64 { return m.Version }
	return &MappingHandler{svc: svc, pager: pager, idem: idem,
		// POST /portfolio-mappings.
		create: httpx.Create[MappingInput, *ent.PortfolioMapping]{Create: svc.CreateMapping, Location: mappingLocation,
			Version: version, View: httpx.View(NewMappingView)}.Handle,
		// GET /portfolio-mappings/{mappingId}.
		get: httpx.Read[uuid.UUID, *ent.PortfolioMapping]{Key: key, Get: svc.GetMapping, Version: version,
			View: httpx.View(NewMappingView)}.Handle,
		// PATCH /portfolio-mappings/{mappingId}: a merge patch of PortfolioMappingInput; If-Match
		// optional (stale: 412).
		update: httpx.Patch[uuid.UUID, *ent.PortfolioMapping, MappingInput]{Key: key, Lock: svc.LockMapping,
			Version: version, Input: mappingInputOf, Update: svc.UpdateMapping, View: httpx.View(NewMappingView)}.Handle,
		// DELETE /portfolio-mappings/{mappingId}; If-Match optional.
		delete: httpx.Delete[uuid.UUID, *ent.PortfolioMapping]{Key: key, Lock: svc.LockMapping, Version: version,
			Delete: svc.DeleteMapping}.Handle,
	}
}

// Mount registers the routes.
func (h *MappingHandler) Mount(r fiber.Router) {
	httpx.Collection{Path: "/portfolio-mappings", Param: "mappingId", Scope: "portfolio", Idem: h.idem, List: h.list,
		Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
	r.Get("/portfolio-mapping-targets", policy.Require("portfolio:read"), h.targets)
}

func mappingLocation(m *ent.PortfolioMapping) string {
	return httpx.URL("portfolio-mappings", m.ID.String())
}

// list handles GET /portfolio-mappings: Paged, oldest first.
func (h *MappingHandler) list(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "portfolio-mappings", httpx.NoFilter, h.svc.ListMappings, mappingsOldestFirst, NewMappingView)
}

// targets handles GET /portfolio-mapping-targets: the fields a column can fill.
func (h *MappingHandler) targets(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"data": portfoliocsv.Targets()})
}
