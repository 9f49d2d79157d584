package emails

import (
	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"
)

// mountSend registers POST /emails.
func (h *Handler) mountSend(r fiber.Router) {}

// mountTracking registers the public open pixel, click redirect and unsubscribe routes.
func (h *Handler) mountTracking(r fiber.Router) {}

func (m *Module) addSendWorkers(w *river.Workers) {}

func (m *Module) sendPeriodicJobs() []*river.PeriodicJob { return nil }
