package doctemplates

import "github.com/gofiber/fiber/v2"

// Handler serves the template endpoints.
type Handler struct {
	svc  *Service
	idem fiber.Handler
}

// NewHandler builds the handler.
func NewHandler(svc *Service, idem fiber.Handler) *Handler { return &Handler{svc: svc, idem: idem} }

// Mount registers the routes (GET /document-templates, GET /standard-documents,
// POST /documents/generate).
func (h *Handler) Mount(r fiber.Router) {}
