package portal

// STUB: the owner of the sign-in (login with throttle, TOTP code step, logout, invitation
// acceptance, password reset, the security page) replaces this file.

import "github.com/gofiber/fiber/v2"

func (m *Module) loginPage(c *fiber.Ctx) error        { return fiber.ErrNotImplemented }
func (m *Module) login(c *fiber.Ctx) error            { return fiber.ErrNotImplemented }
func (m *Module) codePage(c *fiber.Ctx) error         { return fiber.ErrNotImplemented }
func (m *Module) code(c *fiber.Ctx) error             { return fiber.ErrNotImplemented }
func (m *Module) logout(c *fiber.Ctx) error           { return fiber.ErrNotImplemented }
func (m *Module) invitationPage(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
func (m *Module) acceptInvitation(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (m *Module) resetRequestPage(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (m *Module) requestReset(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (m *Module) resetPage(c *fiber.Ctx) error        { return fiber.ErrNotImplemented }
func (m *Module) reset(c *fiber.Ctx) error            { return fiber.ErrNotImplemented }
func (m *Module) securityPage(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (m *Module) enableTOTP(c *fiber.Ctx) error       { return fiber.ErrNotImplemented }
func (m *Module) disableTOTP(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
