package extractions

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the extraction endpoints.
type Handler struct {
	svc  *Service
	idem fiber.Handler
}

// NewHandler builds the handler; idem is the Idempotency-Key middleware of the start.
func NewHandler(svc *Service, idem fiber.Handler) *Handler { return &Handler{svc: svc, idem: idem} }

// Mount registers the routes. The start writes a document's derived data and pays with the
// company's points: documents:write; reading uses documents:read, applying contracts:write
// (the spec's table).
func (h *Handler) Mount(r fiber.Router) {
	r.Post("/documents/:documentId/extractions", policy.Require("documents:write"), h.idem, h.start)
	r.Get("/extractions/:extractionId", policy.Require("documents:read"), httpx.Read[uuid.UUID, *ent.ContractExtraction]{
		Key: httpx.PathID("extractionId"), Get: h.svc.Get, Version: version, View: httpx.View(NewView)}.Handle)
	r.Post("/extractions/:extractionId/apply", policy.Require("contracts:write"), h.apply)
}

// start handles POST /documents/{documentId}/extractions: 202 with the queued extraction.
func (h *Handler) start(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "documentId")
	if err != nil {
		return err
	}
	e, err := httpx.Call(c, func(ctx context.Context, in StartInput) (*ent.ContractExtraction, error) {
		return h.svc.Start(ctx, id, in)
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLocation, httpx.URL("extractions", e.ID.String()))
	c.Set(fiber.HeaderETag, httpx.ETag(e.Version))
	return c.Status(fiber.StatusAccepted).JSON(NewView(e))
}

// apply handles POST /extractions/{extractionId}/apply: 200 with the contract written.
func (h *Handler) apply(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "extractionId")
	if err != nil {
		return err
	}
	ct, err := httpx.Call(c, func(ctx context.Context, in ApplyInput) (contracts.Contract, error) {
		return h.svc.Apply(ctx, id, in)
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, httpx.ETag(ct.Version))
	return c.JSON(ct.View())
}
