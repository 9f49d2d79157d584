package emails

import "github.com/gofiber/fiber/v2"

// mountMailboxes registers GET /mailboxes.
func (h *Handler) mountMailboxes(r fiber.Router) {}
