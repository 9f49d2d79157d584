package appointments

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/linked"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/appointment"
	"github.com/brokerdesk/brokerdesk/ent/appointmentexception"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs the appointment use cases for the company pinned in ctx, in the request's
// transaction.
type Service struct {
	events *events.Service
	now    func() time.Time
}

// NewService returns the service. now is the clock (time.Now outside tests).
func NewService(ev *events.Service, now func() time.Time) *Service {
	return &Service{events: ev, now: now}
}

// ruleOf is the parsed recurrence of a stored series (nil for a single appointment).
func ruleOf(a *ent.Appointment) *Rule {
	if a.Recurrence == nil {
		return nil
	}
	r, _, err := ParseRule(*a.Recurrence, a.StartAt.In(location(a)))
	if err != nil {
		return nil // stored rules were validated
	}
	return r
}

// seriesEnd is the end of the last occurrence, nil when the series never ends.
func seriesEnd(p parsed) *time.Time {
	if p.rule == nil {
		return &p.end
	}
	last, ok := p.rule.Last()
	if !ok {
		return nil
	}
	e := last.Add(p.end.Sub(p.start))
	return &e
}

func withExceptions(ctx context.Context, a *ent.Appointment) (Series, error) {
	xs, err := tenancy.Client(ctx).AppointmentException.Query().Where(appointmentexception.AppointmentID(a.ID)).
		Order(ent.Asc(appointmentexception.FieldOccurrenceStart)).All(ctx)
	if err != nil {
		return Series{}, fmt.Errorf("load exceptions of appointment %s: %w", a.ID, err)
	}
	return Series{Appointment: a, Exceptions: xs}, nil
}

// Get reads one appointment (the series master for a recurring one) with its exceptions.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Series, error) {
	a, err := tenancy.Client(ctx).Appointment.Get(ctx, id)
	if err != nil {
		return Series{}, errs.FromEnt(err, "appointment %s", id)
	}
	return withExceptions(ctx, a)
}

// Lock reads one appointment and locks its row to the end of the transaction.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Appointment, error) {
	a, err := tenancy.Client(ctx).Appointment.Query().Where(appointment.ID(id)).ForUpdate().Only(ctx)
	return a, errs.FromEnt(err, "appointment %s", id)
}

// checkLinks answers 422 for an owner or contact that is not the company's.
func checkLinks(ctx context.Context, in Input) error {
	var v errs.Invalid
	err := linked.Check(ctx, &v, linked.User("ownerId", parseID(in.OwnerID)), linked.Contact("contactId", parseID(in.ContactID)))
	if err != nil {
		return err
	}
	return v.Err()
}

// apply writes in (parsed as p) to m.
func apply(m *ent.AppointmentMutation, in Input, p parsed) {
	m.SetTitle(strings.TrimSpace(*in.Title))
	m.SetDescription(ptr.Deref(in.Description))
	m.SetLocation(strings.TrimSpace(ptr.Deref(in.Location)))
	m.SetType(appointment.Type(ptr.Or(in.Type, "meeting")))
	m.SetStartAt(p.start)
	m.SetEndAt(p.end)
	m.SetAllDay(in.AllDay != nil && *in.AllDay)
	m.SetTimeZone(p.loc.String())
	if p.rule != nil {
		m.SetRecurrence(p.rule.String())
	} else {
		m.ClearRecurrence()
	}
	if e := seriesEnd(p); e != nil {
		m.SetSeriesEnd(*e)
	} else {
		m.ClearSeriesEnd()
	}
	if id := parseID(in.OwnerID); id != nil {
		m.SetOwnerID(*id)
	} else {
		m.ClearOwnerID()
	}
	if id := parseID(in.ContactID); id != nil {
		m.SetContactID(*id)
	} else {
		m.ClearContactID()
	}
}

// Create stores an appointment or series and records appointment.created. The owner defaults
// to the user of a user-bound key.
func (s *Service) Create(ctx context.Context, in Input) (Series, error) {
	if in.OwnerID == nil {
		in.OwnerID = idStr(tenancy.ActingUser(ctx))
	}
	return s.create(ctx, in, nil)
}

func (s *Service) create(ctx context.Context, in Input, splitFrom *uuid.UUID) (Series, error) {
	p, err := in.parse()
	if err != nil {
		return Series{}, err
	}
	if err := checkLinks(ctx, in); err != nil {
		return Series{}, err
	}
	q := tenancy.Client(ctx).Appointment.Create().SetNillableCreatorID(tenancy.ActingUser(ctx)).SetNillableSplitFrom(splitFrom)
	apply(q.Mutation(), in, p)
	a, err := q.Save(ctx)
	if err != nil {
		return Series{}, fmt.Errorf("create appointment: %w", err)
	}
	out := Series{Appointment: a}
	if err := s.events.Record(ctx, "appointment.created", out.View()); err != nil {
		return Series{}, err
	}
	return out, nil
}

// Scope says which occurrences an item operation changes.
type Scope string

// The scopes of PATCH and DELETE /appointments/{id}.
const (
	ScopeThis      Scope = "this"
	ScopeFollowing Scope = "following"
	ScopeAll       Scope = "all"
)

// CheckOccurrence answers 422 unless occ is an occurrence of a (for a single appointment: its
// start). Cancelled occurrences are still occurrences of the rule.
func CheckOccurrence(a *ent.Appointment, occ time.Time) (index int, err error) {
	r := ruleOf(a)
	if r == nil {
		if occ.Equal(a.StartAt) {
			return 0, nil
		}
	} else if i := r.Index(occ); i >= 0 {
		return i, nil
	}
	return -1, errs.InvalidField("occurrenceStart", "not_an_occurrence",
		"is not the start of an occurrence of this appointment (use the occurrenceStart GET /appointments lists)")
}

// UpdateAll applies in (the merged AppointmentInput) to the whole series and records
// appointment.updated. Exceptions keep their changes where their occurrence still exists
// under the new start and rule; the others are removed (docs/decisions/work.md "Scopes").
func (s *Service) UpdateAll(ctx context.Context, a *ent.Appointment, in Input) (Series, error) {
	p, err := in.parse()
	if err != nil {
		return Series{}, err
	}
	if err := checkLinks(ctx, in); err != nil {
		return Series{}, err
	}
	db := tenancy.Client(ctx)
	q := db.Appointment.UpdateOne(a)
	apply(q.Mutation(), in, p)
	// A new owner or contact may hand the series to someone the caller does not see (it was
	// read through the visibility layer): the write and ent's re-read may lift it.
	var out *ent.Appointment
	err = tenancy.HandOver(ctx, func() (err error) {
		out, err = q.Save(ctx)
		return err
	})
	if err != nil {
		return Series{}, fmt.Errorf("update appointment %s: %w", a.ID, err)
	}
	if err := pruneExceptions(ctx, out, time.Time{}); err != nil {
		return Series{}, err
	}
	ser, err := withExceptions(ctx, out)
	if err != nil {
		return Series{}, err
	}
	if err := s.events.Record(ctx, "appointment.updated", ser.View()); err != nil {
		return Series{}, err
	}
	return ser, nil
}

// pruneExceptions deletes the exceptions of a at or after from whose occurrence the series no
// longer has.
func pruneExceptions(ctx context.Context, a *ent.Appointment, from time.Time) error {
	db := tenancy.Client(ctx)
	xs, err := db.AppointmentException.Query().Where(appointmentexception.AppointmentID(a.ID),
		appointmentexception.OccurrenceStartGTE(from)).All(ctx)
	if err != nil {
		return fmt.Errorf("read exceptions of %s: %w", a.ID, err)
	}
	var gone []uuid.UUID
	for _, x := range xs {
		if _, err := CheckOccurrence(a, x.OccurrenceStart); err != nil || a.Recurrence == nil {
			gone = append(gone, x.ID)
		}
	}
	if len(gone) > 0 {
		if _, err := db.AppointmentException.Delete().Where(appointmentexception.IDIn(gone...)).Exec(ctx); err != nil {
			return fmt.Errorf("delete exceptions of %s: %w", a.ID, err)
		}
	}
	return nil
}

// exceptionAt reads the exception of occurrence occ (nil if there is none).
func exceptionAt(ctx context.Context, a *ent.Appointment, occ time.Time) (*ent.AppointmentException, error) {
	x, err := tenancy.Client(ctx).AppointmentException.Query().Where(appointmentexception.AppointmentID(a.ID),
		appointmentexception.OccurrenceStart(occ)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read exception: %w", err)
	}
	return x, nil
}

// occurrenceOf is occurrence occ of a with exception x applied.
func occurrenceOf(a *ent.Appointment, occ time.Time, x *ent.AppointmentException) Occurrence {
	return occurrenceIn(a, location(a), occ, x)
}

// occurrenceIn is occurrenceOf with a's time zone loaded already: time.LoadLocation reads the
// zone database on every call, which was half the CPU of listing thousands of occurrences.
func occurrenceIn(a *ent.Appointment, loc *time.Location, occ time.Time, x *ent.AppointmentException) Occurrence {
	o := Occurrence{ID: a.ID, Shown: shownOf(a, loc, occ, occ.Add(a.EndAt.Sub(a.StartAt))), creator: a.CreatorID}
	if a.Recurrence != nil {
		id, t := a.ID, occ.In(loc)
		o.SeriesID, o.OccurrenceStart = &id, &t
	}
	if x != nil {
		o.IsException = true
		if x.Title != nil {
			o.Title = *x.Title
		}
		if x.Description != nil {
			o.Description = *x.Description
		}
		if x.Location != nil {
			o.Location = *x.Location
		}
		if x.Type != nil {
			o.Type = *x.Type
		}
		if x.StartAt != nil {
			o.StartAt = x.StartAt.In(loc)
		}
		if x.EndAt != nil {
			o.EndAt = x.EndAt.In(loc)
		}
	}
	return o
}

// OccurrenceInputOf is the current state of occurrence occ as the input PATCH with scope this
// merges into.
func (s *Service) OccurrenceInputOf(ctx context.Context, a *ent.Appointment, occ time.Time) (OccurrenceInput, error) {
	x, err := exceptionAt(ctx, a, occ)
	if err != nil {
		return OccurrenceInput{}, err
	}
	if x != nil && x.Cancelled {
		return OccurrenceInput{}, errs.InvalidField("occurrenceStart", "occurrence_cancelled", "this occurrence was cancelled")
	}
	o := occurrenceOf(a, occ, x)
	return OccurrenceInput{Title: ptr.To(o.Title), Description: ptr.To(o.Description), Location: ptr.To(o.Location), Type: ptr.To(o.Type),
		StartAt: ptr.To(o.StartAt.Format(time.RFC3339)), EndAt: ptr.To(o.EndAt.Format(time.RFC3339))}, nil
}

// UpdateThis stores in as the exception of occurrence occ and records
// appointment.occurrence_updated with the occurrence.
func (s *Service) UpdateThis(ctx context.Context, a *ent.Appointment, occ time.Time, in OccurrenceInput) (Occurrence, error) {
	start, end, err := in.parse(location(a))
	if err != nil {
		return Occurrence{}, err
	}
	if a.Recurrence == nil { // a single appointment's only occurrence is itself
		full := inputOf(a)
		full.OccurrenceInput = in
		ser, err := s.UpdateAll(ctx, a, full)
		if err != nil {
			return Occurrence{}, err
		}
		return occurrenceOf(ser.Appointment, ser.StartAt, nil), nil
	}
	dur := a.EndAt.Sub(a.StartAt)
	ov := func(v, series string) *string {
		if v == series {
			return nil
		}
		return &v
	}
	var startOv, endOv *time.Time
	if !start.Equal(occ) {
		startOv = &start
	}
	if !end.Equal(occ.Add(dur)) {
		endOv = &end
	}
	title := strings.TrimSpace(*in.Title)
	db := tenancy.Client(ctx)
	x, err := exceptionAt(ctx, a, occ)
	if err != nil {
		return Occurrence{}, err
	}
	if x == nil {
		x, err = db.AppointmentException.Create().SetAppointmentID(a.ID).SetOccurrenceStart(occ).
			SetNillableTitle(ov(title, a.Title)).SetNillableDescription(ov(ptr.Deref(in.Description), a.Description)).
			SetNillableLocation(ov(ptr.Deref(in.Location), a.Location)).SetNillableType(ov(ptr.Deref(in.Type), string(a.Type))).
			SetNillableStartAt(startOv).SetNillableEndAt(endOv).Save(ctx)
	} else {
		u := db.AppointmentException.UpdateOne(x).ClearTitle().ClearDescription().ClearLocation().ClearType().ClearStartAt().ClearEndAt()
		x, err = u.SetNillableTitle(ov(title, a.Title)).SetNillableDescription(ov(ptr.Deref(in.Description), a.Description)).
			SetNillableLocation(ov(ptr.Deref(in.Location), a.Location)).SetNillableType(ov(ptr.Deref(in.Type), string(a.Type))).
			SetNillableStartAt(startOv).SetNillableEndAt(endOv).Save(ctx)
	}
	if err != nil {
		return Occurrence{}, fmt.Errorf("store exception of %s: %w", a.ID, err)
	}
	if err := touch(ctx, a); err != nil {
		return Occurrence{}, err
	}
	o := occurrenceOf(a, occ, x)
	if err := s.events.Record(ctx, "appointment.occurrence_updated", o); err != nil {
		return Occurrence{}, err
	}
	return o, nil
}

// touch bumps the series' version and updatedAt: its exceptions are part of it.
func touch(ctx context.Context, a *ent.Appointment) error {
	if err := tenancy.Client(ctx).Appointment.UpdateOne(a).SetUpdatedAt(time.Now()).Exec(ctx); err != nil {
		return fmt.Errorf("touch appointment %s: %w", a.ID, err)
	}
	return nil
}

// SplitInput is the AppointmentInput of the series a "following" change starts: the series'
// fields with the occurrence's original start and end.
func SplitInput(a *ent.Appointment, occ time.Time) Input {
	in := inputOf(a)
	loc := location(a)
	in.StartAt = ptr.To(occ.In(loc).Format(time.RFC3339))
	in.EndAt = ptr.To(occ.Add(a.EndAt.Sub(a.StartAt)).In(loc).Format(time.RFC3339))
	return in
}

// UpdateFollowing splits the series at occurrence occ (index idx): the old series ends before
// it, a new series with in (SplitInput merged with the patch) starts there and takes over the
// later exceptions that are still its occurrences. A COUNT is shared: the new series gets what
// the old one had left, unless the patch sets its own recurrence. At the first occurrence this
// is UpdateAll. Records appointment.updated (old) and appointment.created (new); returns the
// new series.
func (s *Service) UpdateFollowing(ctx context.Context, a *ent.Appointment, occ time.Time, idx int, in Input) (Series, error) {
	if idx == 0 || a.Recurrence == nil {
		return s.UpdateAll(ctx, a, in) // from the first occurrence on: the whole series
	}
	old := ruleOf(a)
	if in.Recurrence != nil && *in.Recurrence == *a.Recurrence && old.Count() > 0 {
		in.Recurrence = ptr.To(old.WithCount(old.Count() - idx).String())
	}
	if _, err := in.parse(); err != nil {
		return Series{}, err
	}
	db := tenancy.Client(ctx)
	xs, err := db.AppointmentException.Query().Where(appointmentexception.AppointmentID(a.ID),
		appointmentexception.OccurrenceStartGTE(occ)).All(ctx)
	if err != nil {
		return Series{}, fmt.Errorf("read exceptions of %s: %w", a.ID, err)
	}
	if err := s.endBefore(ctx, a, occ); err != nil {
		return Series{}, err
	}
	id := a.ID
	ns, err := s.create(ctx, in, &id)
	if err != nil {
		return Series{}, err
	}
	// Later exceptions move to the new series where it still has their occurrence (endBefore
	// dropped them from the old one).
	for _, x := range xs {
		if _, err := CheckOccurrence(ns.Appointment, x.OccurrenceStart); err != nil {
			continue
		}
		if _, err := db.AppointmentException.Create().SetAppointmentID(ns.ID).SetOccurrenceStart(x.OccurrenceStart).
			SetCancelled(x.Cancelled).SetNillableTitle(x.Title).SetNillableDescription(x.Description).
			SetNillableLocation(x.Location).SetNillableType(x.Type).SetNillableStartAt(x.StartAt).SetNillableEndAt(x.EndAt).
			Save(ctx); err != nil {
			return Series{}, fmt.Errorf("move exception: %w", err)
		}
	}
	return withExceptions(ctx, ns.Appointment)
}

// endBefore ends series a with the occurrence before occ, drops its exceptions from occ on
// and records appointment.updated.
func (s *Service) endBefore(ctx context.Context, a *ent.Appointment, occ time.Time) error {
	r := ruleOf(a).WithEnd(occ)
	loc := location(a)
	p := parsed{loc: loc, start: a.StartAt.In(loc), end: a.EndAt.In(loc), rule: r}
	u := tenancy.Client(ctx).Appointment.UpdateOne(a).SetRecurrence(r.String())
	if e := seriesEnd(p); e != nil {
		u.SetSeriesEnd(*e)
	}
	out, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("end appointment %s: %w", a.ID, err)
	}
	if _, err := tenancy.Client(ctx).AppointmentException.Delete().Where(appointmentexception.AppointmentID(a.ID),
		appointmentexception.OccurrenceStartGTE(occ)).Exec(ctx); err != nil {
		return fmt.Errorf("drop exceptions of %s: %w", a.ID, err)
	}
	ser, err := withExceptions(ctx, out)
	if err != nil {
		return err
	}
	return s.events.Record(ctx, "appointment.updated", ser.View())
}

// Delete removes occurrences of a: scope this cancels occurrence occ (an EXDATE; records
// appointment.occurrence_cancelled), following ends the series before occ (appointment.updated),
// all (or following at the first occurrence, or any scope of a single appointment) deletes it
// (appointment.deleted).
func (s *Service) Delete(ctx context.Context, a *ent.Appointment, scope Scope, occ time.Time, idx int) error {
	db := tenancy.Client(ctx)
	switch {
	case a.Recurrence != nil && scope == ScopeThis:
		x, err := exceptionAt(ctx, a, occ)
		if err != nil {
			return err
		}
		o := occurrenceOf(a, occ, x)
		if x == nil {
			err = db.AppointmentException.Create().SetAppointmentID(a.ID).SetOccurrenceStart(occ).SetCancelled(true).Exec(ctx)
		} else if !x.Cancelled {
			err = db.AppointmentException.UpdateOne(x).SetCancelled(true).Exec(ctx)
		} else {
			return nil // cancelled already
		}
		if err != nil {
			return fmt.Errorf("cancel occurrence of %s: %w", a.ID, err)
		}
		if err := touch(ctx, a); err != nil {
			return err
		}
		return s.events.Record(ctx, "appointment.occurrence_cancelled", o)
	case a.Recurrence != nil && scope == ScopeFollowing && idx > 0:
		return s.endBefore(ctx, a, occ)
	}
	ser, err := withExceptions(ctx, a)
	if err != nil {
		return err
	}
	if err := db.Appointment.DeleteOne(a).Exec(ctx); err != nil {
		return fmt.Errorf("delete appointment %s: %w", a.ID, err)
	}
	return s.events.Record(ctx, "appointment.deleted", ser.View())
}
