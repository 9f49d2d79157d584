package emails

import "github.com/gofiber/fiber/v2"

// mountOptOuts registers GET, POST and DELETE /email-opt-outs.
func (h *Handler) mountOptOuts(r fiber.Router) {}
