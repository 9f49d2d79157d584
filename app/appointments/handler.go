package appointments

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Handler serves the appointment endpoints.
type Handler struct {
	svc   *Service
	idem  fiber.Handler
	pager *httpx.Pager // GET /calendar-tokens (MountFeed)
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /appointments uses.
func NewHandler(svc *Service, idem fiber.Handler) *Handler {
	return &Handler{svc: svc, idem: idem}
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/appointments", policy.Require("appointments:read"), h.list)
	r.Post("/appointments", policy.Require("appointments:write"), h.idem, h.create)
	r.Get("/appointments/:appointmentId", policy.Require("appointments:read"), h.get)
	r.Patch("/appointments/:appointmentId", policy.Require("appointments:write"), h.update)
	r.Delete("/appointments/:appointmentId", policy.Require("appointments:write"), h.delete)
}

func seriesURL(a *ent.Appointment) string { return "/api/public/v1/appointments/" + a.ID.String() }

// list handles GET /appointments: occurrences in [from, to), ordered by start.
func (h *Handler) list(c *fiber.Ctx) error {
	f, err := parseListFilter(c)
	if err != nil {
		return err
	}
	occ, err := h.svc.List(c.UserContext(), f)
	if err != nil {
		return err
	}
	return c.JSON(OccurrencePage{Data: occ})
}

// create handles POST /appointments.
func (h *Handler) create(c *fiber.Ctx) error {
	var in Input
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	s, err := h.svc.Create(c.UserContext(), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, seriesURL(s.Appointment), s.View(), s.Version)
}

// get handles GET /appointments/{appointmentId}: the series master of a recurring one.
func (h *Handler) get(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "appointmentId")
	if err != nil {
		return err
	}
	s, err := h.svc.Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpx.OK(c, s.View(), s.Version)
}

// itemQuery reads scope and occurrenceStart of an item operation and checks the occurrence
// against a (every bad parameter in one 422).
func itemQuery(c *fiber.Ctx, a *ent.Appointment) (Scope, time.Time, int, error) {
	var v errs.Invalid
	scope := Scope(c.Query("scope", string(ScopeAll)))
	v.Check("scope", scope == ScopeThis || scope == ScopeFollowing || scope == ScopeAll, "invalid_enum",
		"must be one of this, following, all")
	var occ time.Time
	s := c.Query("occurrenceStart")
	switch {
	case s != "":
		t, ok := ParseTimeIn(s, location(a))
		v.Check("occurrenceStart", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: the appointment's timeZone)")
		occ = t
	case scope == ScopeThis || scope == ScopeFollowing:
		v.Add("occurrenceStart", "required", "is required with scope this or following")
	}
	if err := v.Err(); err != nil {
		return "", time.Time{}, 0, err
	}
	if scope == ScopeAll {
		return scope, occ, 0, nil
	}
	idx, err := CheckOccurrence(a, occ)
	return scope, occ, idx, err
}

// update handles PATCH /appointments/{appointmentId}: a merge patch of AppointmentInput for
// scope all and following, of the occurrence's fields for scope this. If-Match (the series'
// ETag) optional.
func (h *Handler) update(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "appointmentId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	a, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, a.Version, false); err != nil {
		return err
	}
	scope, occ, idx, err := itemQuery(c, a)
	if err != nil {
		return err
	}
	switch scope {
	case ScopeThis:
		in, err := h.svc.OccurrenceInputOf(ctx, a, occ)
		if err != nil {
			return err
		}
		if err := httpx.MergePatch(c, &in); err != nil {
			return err
		}
		o, err := h.svc.UpdateThis(ctx, a, occ, in)
		if err != nil {
			return err
		}
		return c.JSON(o)
	case ScopeFollowing:
		in := SplitInput(a, occ)
		if err := httpx.MergePatch(c, &in); err != nil {
			return err
		}
		s, err := h.svc.UpdateFollowing(ctx, a, occ, idx, in)
		if err != nil {
			return err
		}
		return httpx.OK(c, s.View(), s.Version)
	}
	in := inputOf(a)
	if err := httpx.MergePatch(c, &in); err != nil {
		return err
	}
	s, err := h.svc.UpdateAll(ctx, a, in)
	if err != nil {
		return err
	}
	return httpx.OK(c, s.View(), s.Version)
}

// delete handles DELETE /appointments/{appointmentId} with scope and occurrenceStart.
func (h *Handler) delete(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "appointmentId")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	a, err := h.svc.Lock(ctx, id)
	if err != nil {
		return err
	}
	if err := httpx.IfMatch(c, a.Version, false); err != nil {
		return err
	}
	scope, occ, idx, err := itemQuery(c, a)
	if err != nil {
		return err
	}
	if err := h.svc.Delete(ctx, a, scope, occ, idx); err != nil {
		return err
	}
	return httpx.NoContent(c)
}
