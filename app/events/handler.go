package events

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/event"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Handler serves /events and /event-types.
type Handler struct {
	pager *httpx.Pager
	authz *policy.Enforcer
}

// NewHandler builds the handler.
func NewHandler(pager *httpx.Pager, authz *policy.Enforcer) *Handler {
	return &Handler{pager: pager, authz: authz}
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
	var v errs.Invalid
	var want []string
	for _, t := range strings.Split(c.Query("types"), ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if !Known(t) {
			v.Add("types", "invalid_event_type", t+" is not an event type (see GET /event-types)")
			continue
		}
		want = append(want, t)
	}
	sort.Strings(want)
	var since time.Time
	if s := c.Query("since"); s != "" {
		t, ok := httpx.ParseTime(s)
		v.Check("since", ok, "invalid_datetime", "must be an RFC 3339 timestamp")
		since = t
	}
	page, err := h.pager.Parse(c, "events?types="+strings.Join(want, ","))
	if perr, ok := err.(*errs.Invalid); ok {
		v.Errors = append(v.Errors, perr.Errors...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	q, err := Visible(ctx, h.authz, want)
	if err != nil {
		return err
	}
	db := tenancy.Client(ctx)
	switch {
	case page.HasCursor() && len(page.After) == 1:
		seq, err := strconv.ParseInt(page.After[0], 10, 64)
		if err != nil {
			return errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
		}
		q.Where(event.SeqGT(seq))
	case page.HasCursor():
		// a cursor from an empty feed: start at the beginning
	case !since.IsZero():
		q.Where(event.OccurredAtGTE(since))
	}
	rows, err := q.Order(ent.Asc(event.FieldSeq)).Limit(page.Limit + 1).All(ctx)
	if err != nil {
		return err
	}
	if len(rows) == 0 && !page.HasCursor() {
		// Nothing matched yet: continue after every event committed so far, not from the start
		// (which would replay what since or types skipped).
		var max []struct {
			Max *int64 `json:"max"`
		}
		if err := db.Event.Query().Aggregate(ent.Max(event.FieldSeq)).Scan(ctx, &max); err != nil {
			return err
		}
		if len(max) == 1 && max[0].Max != nil {
			page.After = []string{strconv.FormatInt(*max[0].Max, 10)}
		}
	}
	return httpx.WritePage(c, page, rows, func(e *ent.Event) []string {
		return []string{strconv.FormatInt(*e.Seq, 10)}
	}, httpx.Plain(NewView))
}
