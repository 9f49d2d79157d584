package commissions

// STUB: helper C2 replaces this file (statements, entries, the parse worker, matching).

import (
	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"
)

func (m *Module) addWorkers(w *river.Workers)         {}
func (h *Handler) listStatements(c *fiber.Ctx) error  { return fiber.ErrNotImplemented }
func (h *Handler) createStatement(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (h *Handler) getStatement(c *fiber.Ctx) error    { return fiber.ErrNotImplemented }
func (h *Handler) patchStatement(c *fiber.Ctx) error  { return fiber.ErrNotImplemented }
func (h *Handler) listEntries(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (h *Handler) patchEntry(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
