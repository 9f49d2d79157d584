package commissions

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the commission endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler; idem is the Idempotency-Key middleware of the upload.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. upload is the group whose authentication pins after the body
// was read (the multipart upload, as portfolio transfers do).
func (h *Handler) Mount(r, upload fiber.Router) {
	read, write := policy.Require("commissions:read"), policy.Require("commissions:write")
	r.Get("/commission-statements", read, h.listStatements)
	upload.Post("/commission-statements", write, h.idem, h.createStatement)
	r.Get("/commission-statements/:statementId", read, h.getStatement)
	r.Patch("/commission-statements/:statementId", write, h.patchStatement)
	r.Get("/commission-entries", read, h.listEntries)
	r.Patch("/commission-entries/:entryId", write, h.patchEntry)
	r.Get("/reports/commissions", read, h.reportCommissions)
	r.Get("/reports/cancellation-liability", read, h.reportLiability)
}
