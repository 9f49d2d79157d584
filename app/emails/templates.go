package emails

import "github.com/gofiber/fiber/v2"

// mountTemplates registers GET /email-templates.
func (h *Handler) mountTemplates(r fiber.Router) {}
