// Package appointments serves /appointments: single and recurring appointments (RFC 5545
// RRULE, expanded in the appointment's time zone), changes to one, the following or all
// occurrences, and each user's iCalendar feed.
package appointments

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
)

// View is the Appointment resource: a single appointment or a series master.
type View struct {
	ID uuid.UUID `json:"id"`
	Shown
	CreatorID  *uuid.UUID      `json:"creatorId"`
	Exceptions []ExceptionView `json:"exceptions"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// Shown are the fields an appointment and each of its occurrences show alike (embedded, so
// the JSON keeps them flat and in this order).
type Shown struct {
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Location    string     `json:"location"`
	Type        string     `json:"type"`
	StartAt     time.Time  `json:"startAt"`
	EndAt       time.Time  `json:"endAt"`
	AllDay      bool       `json:"allDay"`
	TimeZone    string     `json:"timeZone"`
	Recurrence  *string    `json:"recurrence"`
	OwnerID     *uuid.UUID `json:"ownerId"`
	ContactID   *uuid.UUID `json:"contactId"`
}

// shownOf is what a shows, its times from start to end in loc.
func shownOf(a *ent.Appointment, loc *time.Location, start, end time.Time) Shown {
	return Shown{Title: a.Title, Description: a.Description, Location: a.Location, Type: string(a.Type),
		StartAt: start.In(loc), EndAt: end.In(loc), AllDay: a.AllDay, TimeZone: a.TimeZone, Recurrence: a.Recurrence,
		OwnerID: a.OwnerID, ContactID: a.ContactID}
}

// ExceptionView is a changed or cancelled occurrence of a series; nil fields keep the series'.
type ExceptionView struct {
	OccurrenceStart time.Time  `json:"occurrenceStart"`
	Cancelled       bool       `json:"cancelled"`
	Title           *string    `json:"title"`
	Description     *string    `json:"description"`
	Location        *string    `json:"location"`
	Type            *string    `json:"type"`
	StartAt         *time.Time `json:"startAt"`
	EndAt           *time.Time `json:"endAt"`
}

// Series is a stored appointment with its exceptions, ordered by occurrence.
type Series struct {
	*ent.Appointment
	Exceptions []*ent.AppointmentException
}

// View is the Appointment resource of s; times are shown in the series' zone.
func (s Series) View() View {
	loc := location(s.Appointment)
	a := s.Appointment
	v := View{ID: a.ID, Shown: shownOf(a, loc, a.StartAt, a.EndAt), CreatorID: a.CreatorID,
		Exceptions: []ExceptionView{}, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	for _, x := range s.Exceptions {
		ev := ExceptionView{OccurrenceStart: x.OccurrenceStart.In(loc), Cancelled: x.Cancelled, Title: x.Title,
			Description: x.Description, Location: x.Location, Type: x.Type}
		if x.StartAt != nil {
			t := x.StartAt.In(loc)
			ev.StartAt = &t
		}
		if x.EndAt != nil {
			t := x.EndAt.In(loc)
			ev.EndAt = &t
		}
		v.Exceptions = append(v.Exceptions, ev)
	}
	return v
}

// Occurrence is one item of GET /appointments: a single appointment, or one occurrence of a
// series with the series' id (id and seriesId) and its original start (occurrenceStart).
type Occurrence struct {
	ID              uuid.UUID  `json:"id"`
	SeriesID        *uuid.UUID `json:"seriesId"`
	OccurrenceStart *time.Time `json:"occurrenceStart"`
	IsException     bool       `json:"isException"`
	Shown
	creator *uuid.UUID // the series' creator: its events' visibility (EventAbout)
}

// OccurrencePage is the body of GET /appointments.
type OccurrencePage struct {
	Data []Occurrence `json:"data"`
}

// EventAbout makes appointment events exactly as visible as the appointment (the rule of
// appointment_visibility): through the contact, else to the owner and the creator.
func (v View) EventAbout() events.About {
	return events.AboutContactElseOwners(v.ContactID, v.OwnerID, v.CreatorID)
}

// EventAbout: as the series'.
func (o Occurrence) EventAbout() events.About {
	return events.AboutContactElseOwners(o.ContactID, o.OwnerID, o.creator)
}
