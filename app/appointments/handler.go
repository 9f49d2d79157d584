package appointments

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Handler serves the appointment endpoints.
type Handler struct {
	svc            *Service
	idem           fiber.Handler
	pager          *httpx.Pager // GET /calendar-tokens (MountFeed)
	create, get    fiber.Handler
	update, delete fiber.Handler
}

// NewHandler builds the handler. idem is the Idempotency-Key middleware POST /appointments uses.
func NewHandler(svc *Service, idem fiber.Handler) *Handler {
	h := &Handler{svc: svc, idem: idem}
	version := func(s Series) int64 { return s.Version }
	// POST /appointments.
	h.create = httpx.Create[Input, Series]{Create: svc.Create, Location: seriesURL, Version: version,
		View: httpx.View(Series.View)}.Handle
	// GET /appointments/{appointmentId}: the series master of a recurring one.
	h.get = httpx.Read[uuid.UUID, Series]{Key: httpx.PathID("appointmentId"), Get: svc.Get, Version: version,
		View: httpx.View(Series.View)}.Handle
	lock := func(ctx context.Context, it item) (target, error) {
		a, err := svc.Lock(ctx, it.id)
		return target{Appointment: a, item: it}, err
	}
	// PATCH /appointments/{appointmentId} with scope and occurrenceStart; If-Match (the series'
	// ETag) optional.
	h.update = httpx.Patch[item, target, patch]{Key: itemKey, Lock: lock, Version: target.version,
		Read: h.readPatch, Update: h.applyPatch, View: patchView}.Handle
	// DELETE /appointments/{appointmentId} with scope and occurrenceStart; If-Match optional.
	h.delete = httpx.Delete[item, target]{Key: itemKey, Lock: lock, Version: target.version, Delete: h.deleteItem}.Handle
	return h
}

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	httpx.Collection{Path: "/appointments", Param: "appointmentId", Scope: "appointments", Idem: h.idem,
		List: h.list, Create: h.create, Get: h.get, Update: h.update, Delete: h.delete}.Mount(r)
}

func seriesURL(s Series) string { return httpx.URL("appointments", s.ID.String()) }

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

// item is what PATCH and DELETE of /appointments/{appointmentId} name: the appointment, and
// in the query the scope and the occurrence, which are read once the appointment (its time
// zone) is known.
type item struct {
	id                     uuid.UUID
	scope, occurrenceStart string
}

func itemKey(c *fiber.Ctx) (item, error) {
	id, err := httpx.UUIDParam(c, "appointmentId")
	return item{id: id, scope: strings.Clone(c.Query("scope", string(ScopeAll))),
		occurrenceStart: strings.Clone(c.Query("occurrenceStart"))}, err
}

// target is the row of the write recipes: the locked appointment with its item and, after a
// PATCH, what the answer shows (the series, or for scope this the occurrence, which has no
// ETag of its own).
type target struct {
	*ent.Appointment
	item
	series     *Series
	occurrence *Occurrence
}

func (t target) version() int64 {
	if t.occurrence != nil {
		return 0
	}
	return t.Version
}

// parse checks scope and occurrenceStart against the appointment (every bad parameter in
// one 422).
func (t target) parse() (Scope, time.Time, int, error) {
	var v errs.Invalid
	scope := Scope(t.scope)
	v.Check("scope", scope == ScopeThis || scope == ScopeFollowing || scope == ScopeAll, "invalid_enum",
		"must be one of this, following, all")
	var occ time.Time
	switch {
	case t.occurrenceStart != "":
		o, ok := ParseTimeIn(t.occurrenceStart, location(t.Appointment))
		v.Check("occurrenceStart", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: the appointment's timeZone)")
		occ = o
	case scope == ScopeThis || scope == ScopeFollowing:
		v.Add("occurrenceStart", "required", "is required with scope this or following")
	}
	if err := v.Err(); err != nil {
		return "", time.Time{}, 0, err
	}
	if scope == ScopeAll {
		return scope, occ, 0, nil
	}
	idx, err := CheckOccurrence(t.Appointment, occ)
	return scope, occ, idx, err
}

// patch is the merged body of a PATCH: the occurrence's fields for scope this, the series'
// input otherwise.
type patch struct {
	scope Scope
	occ   time.Time
	idx   int
	this  OccurrenceInput
	rest  Input
}

// readPatch merges the body into the input of what the scope names: a merge patch of
// AppointmentInput for scope all and following, of the occurrence's fields for scope this.
func (h *Handler) readPatch(c *fiber.Ctx, t target) (p patch, err error) {
	if p.scope, p.occ, p.idx, err = t.parse(); err != nil {
		return p, err
	}
	switch p.scope {
	case ScopeThis:
		if p.this, err = h.svc.OccurrenceInputOf(c.UserContext(), t.Appointment, p.occ); err != nil {
			return p, err
		}
		return p, httpx.MergePatch(c, &p.this)
	case ScopeFollowing:
		p.rest = SplitInput(t.Appointment, p.occ)
	default:
		p.rest = inputOf(t.Appointment)
	}
	return p, httpx.MergePatch(c, &p.rest)
}

func (h *Handler) applyPatch(ctx context.Context, t target, p patch) (target, error) {
	switch p.scope {
	case ScopeThis:
		o, err := h.svc.UpdateThis(ctx, t.Appointment, p.occ, p.this)
		return target{occurrence: &o}, err
	case ScopeFollowing:
		s, err := h.svc.UpdateFollowing(ctx, t.Appointment, p.occ, p.idx, p.rest)
		return target{Appointment: s.Appointment, series: &s}, err
	}
	s, err := h.svc.UpdateAll(ctx, t.Appointment, p.rest)
	return target{Appointment: s.Appointment, series: &s}, err
}

func patchView(_ *fiber.Ctx, t target) (any, error) {
	if t.occurrence != nil {
		return *t.occurrence, nil
	}
	return t.series.View(), nil
}

func (h *Handler) deleteItem(ctx context.Context, t target) error {
	scope, occ, idx, err := t.parse()
	if err != nil {
		return err
	}
	return h.svc.Delete(ctx, t.Appointment, scope, occ, idx)
}
