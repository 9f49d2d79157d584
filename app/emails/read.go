package emails

import "github.com/gofiber/fiber/v2"

// mountRead registers GET /email-threads, /email-threads/{id}, /emails/{id} and the
// attachment content. (Built by the read part of issue 21.)
func (h *Handler) mountRead(r fiber.Router) {}
