package reports

// STUB: helper R2 replaces this file (pipeline, activity).

import "github.com/gofiber/fiber/v2"

func (h *Handler) pipeline(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (h *Handler) activity(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
