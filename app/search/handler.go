// Package search serves GET /search (issue 24): one ranked list over contacts, leads, contracts
// and documents for a query of two or more characters, as the credential may see them.
//
// STUB: the route; the owner fills it in.
package search

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/policy"
)

// Service runs the search.
type Service struct{}

// NewService builds the service.
func NewService() *Service { return &Service{} }

// Handler serves GET /search.
type Handler struct{ svc *Service }

// NewHandler builds the handler.
func NewHandler(svc *Service) *Handler { return &Handler{svc: svc} }

// Mount registers the route (scope contacts:read, the spec's).
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/search", policy.Require("contacts:read"), h.search)
}

func (h *Handler) search(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
