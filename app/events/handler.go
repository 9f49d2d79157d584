package events

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves /events and /event-types.
type Handler struct {
	pager *httpx.Pager
	feed  *Feed
}

// NewHandler builds the handler. authz decides which event types a credential receives.
func NewHandler(pager *httpx.Pager, authz *policy.Enforcer) *Handler {
	return &Handler{pager: pager, feed: &Feed{authz: authz}}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/events", policy.Require("events:read"), h.list)
	r.Get("/event-types", h.types)
}

// View is the Event resource, the envelope webhooks will carry too.
type View struct {
	ID         uuid.UUID        `json:"id"`
	Type       string           `json:"type"`
	OccurredAt time.Time        `json:"occurredAt"`
	Data       json.RawMessage  `json:"data"`
	Actor      schematype.Actor `json:"actor"`
}

// NewView is the Event resource of e.
func NewView(e *ent.Event) View {
	return View{ID: e.ID, Type: e.Type, OccurredAt: e.OccurredAt, Data: e.Data, Actor: e.Actor}
}

// types handles GET /event-types: any valid credential may read the catalog.
func (h *Handler) types(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"data": Types})
}

// list handles GET /events: Paged by cursor in commit order; types filters, since starts a walk
// without a cursor. Events of types whose scope the credential lacks are left out.
func (h *Handler) list(c *fiber.Ctx) error {
	f, page, err := httpx.ParseList(c, h.pager, "events", parseFilter)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	rows, err := h.feed.List(ctx, f, page.Page)
	if err != nil {
		return err
	}
	if len(rows) == 0 && !page.HasCursor() {
		// Nothing matched yet: continue after every event committed so far, not from the start
		// (which would replay what since or types skipped).
		if page.After, err = h.feed.Head(ctx); err != nil {
			return err
		}
	}
	return httpx.WritePage(c, page, rows, bySeq.Key, httpx.Plain(NewView))
}

// parseFilter reads the query of GET /events; every unknown type is listed.
func parseFilter(c *fiber.Ctx, v *errs.Invalid) (f Filter, _ error) {
	for _, t := range strings.Split(c.Query("types"), ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if !Known(t) {
			v.Add("types", "invalid_event_type", t+" is not an event type (see GET /event-types)")
			continue
		}
		f.Types = append(f.Types, strings.Clone(t))
	}
	if s := c.Query("since"); s != "" {
		t, ok := httpx.ParseTime(s)
		v.Check("since", ok, "invalid_datetime", "must be an RFC 3339 timestamp")
		if ok {
			f.Since = &t
		}
	}
	return f, nil
}
