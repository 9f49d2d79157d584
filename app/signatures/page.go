package signatures

import "github.com/gofiber/fiber/v2"

// MountPublic registers the signing page's routes (no credential; the link's token is it).
// STUB: the signing page's owner fills it in.
func (m *Module) MountPublic(app *fiber.App) {}
