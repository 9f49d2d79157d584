package emails

import (
	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// mountSend registers POST /emails: Idempotency-Key as every "Idem" POST; 201 with the message
// (status queued) and its Location. The send worker delivers it.
func (h *Handler) mountSend(r fiber.Router) {
	create := httpx.Create[SendInput, Loaded]{Create: h.svc.sendInput,
		Location: func(l Loaded) string { return httpx.URL("emails", l.Email.ID.String()) },
		Version:  func(l Loaded) int64 { return l.Email.Version },
		View:     httpx.View(func(l Loaded) View { return NewView(l, BodyText) })}
	r.Post("/emails", policy.Require("emails:write"), h.idem, create.Handle)
}

// mountTracking registers the public open pixel, click redirect and unsubscribe routes
// (tracking.go): no credential, each authorised by its signed token.
func (h *Handler) mountTracking(r fiber.Router) {
	r.Get("/t/o/:token.gif", h.openPixel)
	r.Get("/t/c/:token", h.click)
	r.Get("/u/:token", h.unsubscribePage)
	r.Post("/u/:token", h.unsubscribe)
}

func (m *Module) addSendWorkers(w *river.Workers) { river.AddWorker(w, &sendWorker{m: m}) }

// sendPeriodicJobs: none. A send's job is inserted (scheduled) before its request commits and
// released after (worker.go enqueue), so a committed e-mail always has its job; a sweep over
// queued e-mails of every company would need a function the app role lacks (row-level
// security shows one company at a time).
func (m *Module) sendPeriodicJobs() []*river.PeriodicJob { return nil }
