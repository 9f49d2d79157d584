package portal

// STUB: the owner of the signed-in pages (my data, contracts, documents and their download,
// signature requests, change requests) replaces this file.

import "github.com/gofiber/fiber/v2"

func (m *Module) overview(c *fiber.Ctx) error       { return fiber.ErrNotImplemented }
func (m *Module) contracts(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
func (m *Module) documents(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
func (m *Module) download(c *fiber.Ctx) error       { return fiber.ErrNotImplemented }
func (m *Module) signatures(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (m *Module) openSigning(c *fiber.Ctx) error    { return fiber.ErrNotImplemented }
func (m *Module) changes(c *fiber.Ctx) error        { return fiber.ErrNotImplemented }
func (m *Module) changeForm(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (m *Module) submitChange(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
func (m *Module) withdrawChange(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
