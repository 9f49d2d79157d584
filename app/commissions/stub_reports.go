package commissions

// STUB: helper C3 replaces this file (/reports/commissions, /reports/cancellation-liability).

import "github.com/gofiber/fiber/v2"

func (h *Handler) reportCommissions(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (h *Handler) reportLiability(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
