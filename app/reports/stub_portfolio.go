package reports

// STUB: helper R1 replaces this file (portfolio, renewals, cross-selling).

import "github.com/gofiber/fiber/v2"

func (h *Handler) portfolio(c *fiber.Ctx) error    { return fiber.ErrNotImplemented }
func (h *Handler) renewals(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (h *Handler) crossSelling(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
