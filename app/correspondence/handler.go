// Package correspondence serves insurer correspondence (issue 21): the catalog of transaction
// types and the correspondence cases, one per insurer, sent as e-mails through the e-mail
// area's Service.Send.
package correspondence

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// Service runs the correspondence use cases in the request's transaction.
type Service struct {
	events *events.Service
	mail   *emails.Service
}

// NewService returns the service; mail sends a case.
func NewService(ev *events.Service, mail *emails.Service) *Service {
	return &Service{events: ev, mail: mail}
}

// Handler serves the correspondence endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST /correspondence-cases.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {}
