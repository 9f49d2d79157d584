package emails

import (
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// Handler serves the e-mail endpoints.
type Handler struct {
	svc   *Service
	pager *httpx.Pager
	idem  fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware of POST /emails.
func NewHandler(svc *Service, pager *httpx.Pager, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, pager: pager, idem: idem}
}

// Mount registers the authenticated routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	h.mountRead(r)      // read.go: threads, messages, attachments
	h.mountTemplates(r) // templates.go
	h.mountOptOuts(r)   // optouts.go
	h.mountSend(r)      // send.go: POST /emails
	h.mountMailboxes(r) // mailboxes.go: GET /mailboxes
}

// MountPublic registers the routes without a credential, each authorised by a signed token:
// the open pixel, the click redirect and the unsubscribe page (send.go).
func (h *Handler) MountPublic(r fiber.Router) { h.mountTracking(r) }
