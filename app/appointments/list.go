package appointments

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/appointment"
	"github.com/brokerdesk/brokerdesk/ent/appointmentexception"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxWindow is the longest window GET /appointments expands (spec: at most 366 days).
const MaxWindow = 366 * 24 * time.Hour

// ListFilter is the query of GET /appointments.
type ListFilter struct {
	From, To  time.Time
	ContactID *uuid.UUID
	OwnerID   *uuid.UUID
	Type      *string
}

// parseListFilter reads the query of GET /appointments (not paged: a window of at most
// MaxWindow); every bad parameter is listed.
func parseListFilter(c *fiber.Ctx) (ListFilter, error) {
	var v errs.Invalid
	var f ListFilter
	from, fok := httpx.RequiredQueryTime(c, &v, "from")
	to, tok := httpx.RequiredQueryTime(c, &v, "to")
	if fok && tok {
		v.Check("to", to.After(from), "invalid_range", "must be after from")
		v.Check("to", to.Sub(from) <= MaxWindow, "range_too_long", "from and to are at most 366 days apart")
	}
	f.From, f.To = from, to
	f.ContactID = httpx.QueryUUID(c, &v, "contactId")
	f.OwnerID = httpx.QueryUUID(c, &v, "ownerId")
	f.Type = httpx.QueryEnum(c, &v, "type", schema.AppointmentTypes)
	return f, v.Err()
}

// List returns the occurrences overlapping [from, to) of the appointments matching f, series
// expanded in their zones, cancelled occurrences left out, exceptions applied, ordered by start
// (then id and occurrence).
func (s *Service) List(ctx context.Context, f ListFilter) ([]Occurrence, error) {
	db := tenancy.Client(ctx)
	q := db.Appointment.Query().Where(appointment.StartAtLT(f.To), appointment.Or(
		appointment.SeriesEndIsNil(), appointment.SeriesEndGT(f.From),
		// a moved occurrence may lie outside its series' span
		func(sel *entsql.Selector) {
			t := entsql.Table(appointmentexception.Table)
			sel.Where(entsql.In(sel.C(appointment.FieldID), entsql.Select(t.C(appointmentexception.FieldAppointmentID)).From(t).
				Where(entsql.And(entsql.LT(t.C(appointmentexception.FieldStartAt), f.To), entsql.GT(t.C(appointmentexception.FieldEndAt), f.From)))))
		}))
	q.Where(paging.If(f.ContactID, appointment.ContactID)...)
	q.Where(paging.If(f.OwnerID, appointment.OwnerID)...)
	q.Where(paging.Enum(f.Type, appointment.TypeEQ)...)
	rows, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list appointments: %w", err)
	}
	return expand(ctx, rows, f.From, f.To)
}

// expand turns series into their occurrences inside [from, to).
func expand(ctx context.Context, rows []*ent.Appointment, from, to time.Time) ([]Occurrence, error) {
	var recurring []uuid.UUID
	for _, a := range rows {
		if a.Recurrence != nil {
			recurring = append(recurring, a.ID)
		}
	}
	exc := map[uuid.UUID]map[int64]*ent.AppointmentException{}
	if len(recurring) > 0 {
		xs, err := tenancy.Client(ctx).AppointmentException.Query().
			Where(appointmentexception.AppointmentIDIn(recurring...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("list appointment exceptions: %w", err)
		}
		for _, x := range xs {
			if exc[x.AppointmentID] == nil {
				exc[x.AppointmentID] = map[int64]*ent.AppointmentException{}
			}
			exc[x.AppointmentID][x.OccurrenceStart.UnixNano()] = x
		}
	}
	out := []Occurrence{}
	overlaps := func(o Occurrence) bool { return o.StartAt.Before(to) && o.EndAt.After(from) }
	zones := map[string]*time.Location{} // one LoadLocation per zone and request
	for _, a := range rows {
		loc := zones[a.TimeZone]
		if loc == nil {
			loc = location(a)
			zones[a.TimeZone] = loc
		}
		r := ruleOf(a)
		if r == nil {
			if o := occurrenceIn(a, loc, a.StartAt, nil); overlaps(o) {
				out = append(out, o)
			}
			continue
		}
		xs := exc[a.ID]
		dur := a.EndAt.Sub(a.StartAt)
		seen := map[int64]bool{}
		for _, t := range r.Between(from, to, dur) {
			seen[t.UnixNano()] = true
			x := xs[t.UnixNano()]
			if x != nil && x.Cancelled {
				continue
			}
			if o := occurrenceIn(a, loc, t, x); overlaps(o) {
				out = append(out, o)
			}
		}
		// Exceptions moved into the window from an occurrence outside it.
		for k, x := range xs {
			if seen[k] || x.Cancelled || x.StartAt == nil {
				continue
			}
			if o := occurrenceIn(a, loc, x.OccurrenceStart, x); overlaps(o) {
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b Occurrence) int {
		if c := a.StartAt.Compare(b.StartAt); c != 0 {
			return c
		}
		if c := strings.Compare(a.ID.String(), b.ID.String()); c != 0 {
			return c
		}
		if a.OccurrenceStart != nil && b.OccurrenceStart != nil {
			return a.OccurrenceStart.Compare(*b.OccurrenceStart)
		}
		return 0
	})
	return out, nil
}
