package appointments

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
)

// Bounds of appointment fields (characters).
const (
	MaxTitle       = 500
	MaxLocation    = 500
	MaxDescription = 50000
	DefaultZone    = "Europe/Berlin"
)

// Input is AppointmentInput: the body of POST /appointments; PATCH merges its patch into the
// Input of the stored series. Times are strings: RFC 3339, or without an offset local time in
// timeZone.
type Input struct {
	OccurrenceInput         // the fields one occurrence may change too (embedded: the JSON stays flat)
	AllDay          *bool   `json:"allDay,omitempty"`
	TimeZone        *string `json:"timeZone,omitempty"`
	Recurrence      *string `json:"recurrence,omitempty"`
	OwnerID         *string `json:"ownerId,omitempty"`
	ContactID       *string `json:"contactId,omitempty"`
}

// parsed is a valid Input's times and rule.
type parsed struct {
	loc        *time.Location
	start, end time.Time // in loc
	rule       *Rule     // nil: a single appointment
}

// Validate checks an AppointmentInput: every invalid field is listed.
func (in *Input) Validate() error {
	_, err := in.parse()
	return err
}

// checkTexts checks the fields a series and an occurrence share: title (required), description,
// location and type.
func checkTexts(v *errs.Invalid, title, description, location, typ *string) {
	if title == nil || strings.TrimSpace(*title) == "" {
		v.Add("title", "required", "must not be empty")
	}
	check.Len(v, "title", title, MaxTitle)
	check.Len(v, "description", description, MaxDescription)
	check.Len(v, "location", location, MaxLocation)
	if typ != nil {
		v.Check("type", slices.Contains(schema.AppointmentTypes, *typ), "invalid_enum",
			"must be one of "+strings.Join(schema.AppointmentTypes, ", "))
	}
}

// parse validates in and returns its times and rule.
func (in *Input) parse() (parsed, error) {
	var v errs.Invalid
	var p parsed
	checkTexts(&v, in.Title, in.Description, in.Location, in.Type)
	p.loc = zoneOf(&v, in.TimeZone)
	var startOK, endOK bool
	p.start, startOK = timeField(&v, "startAt", in.StartAt, p.loc)
	p.end, endOK = timeField(&v, "endAt", in.EndAt, p.loc)
	if startOK && endOK {
		v.Check("endAt", p.end.After(p.start), "end_before_start", "must be after startAt")
	}
	v.CheckUUID("ownerId", in.OwnerID)
	v.CheckUUID("contactId", in.ContactID)
	if in.Recurrence != nil && startOK {
		r, code, err := ParseRule(*in.Recurrence, p.start)
		if err != nil {
			v.Add("recurrence", code, err.Error())
		} else if _, ok := r.Last(); r.Bounded() && !ok {
			v.Add("recurrence", "no_occurrences", "the rule yields no occurrence from startAt on")
		} else {
			p.rule = r
		}
	}
	return p, v.Err()
}

func zoneOf(v *errs.Invalid, tz *string) *time.Location {
	name := DefaultZone
	if tz != nil {
		name = *tz
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		v.Add("timeZone", "invalid_time_zone", "must be an IANA time zone, e.g. Europe/Berlin")
		loc, _ = time.LoadLocation(DefaultZone)
	}
	return loc
}

// timeField reads a required timestamp: RFC 3339, or without an offset local time in loc.
func timeField(v *errs.Invalid, field string, s *string, loc *time.Location) (time.Time, bool) {
	if s == nil {
		v.Add(field, "required", "is required")
		return time.Time{}, false
	}
	t, ok := ParseTimeIn(*s, loc)
	v.Check(field, ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: local time in timeZone)")
	return t, ok
}

var localLayouts = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04"}

// ParseTimeIn reads an RFC 3339 timestamp, or one without an offset as local time in loc,
// and returns it in loc.
func ParseTimeIn(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.In(loc), true
	}
	for _, l := range localLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseID(s *string) *uuid.UUID {
	if s == nil {
		return nil
	}
	id := uuid.MustParse(*s) // validated
	return &id
}

func idStr(u *uuid.UUID) *string {
	if u == nil {
		return nil
	}
	return ptr.To(u.String())
}

// inputOf is the Input of a stored series: what a PATCH with scope all merges into.
func inputOf(a *ent.Appointment) Input {
	loc := location(a)
	allDay := a.AllDay
	in := Input{OccurrenceInput: OccurrenceInput{Title: ptr.To(a.Title), Description: ptr.To(a.Description),
		Location: ptr.To(a.Location), Type: ptr.To(string(a.Type)),
		StartAt: ptr.To(a.StartAt.In(loc).Format(time.RFC3339)), EndAt: ptr.To(a.EndAt.In(loc).Format(time.RFC3339))},
		AllDay: &allDay, TimeZone: ptr.To(a.TimeZone), Recurrence: a.Recurrence, OwnerID: idStr(a.OwnerID), ContactID: idStr(a.ContactID)}
	return in
}

// location is the time zone of a stored series.
func location(a *ent.Appointment) *time.Location {
	loc, err := time.LoadLocation(a.TimeZone)
	if err != nil {
		loc, _ = time.LoadLocation(DefaultZone)
	}
	return loc
}

// OccurrenceInput is what PATCH with scope this changes of one occurrence; other fields are
// the series' (422 unknown_field). It has no Validate: times without an offset are local time
// in the series' zone, which the patch does not carry, so UpdateThis checks it with parse.
type OccurrenceInput struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	Location    *string `json:"location,omitempty"`
	Type        *string `json:"type,omitempty"`
	StartAt     *string `json:"startAt,omitempty"`
	EndAt       *string `json:"endAt,omitempty"`
}

// parse validates the merged occurrence, reading times without an offset in loc (the series'
// time zone), and returns its start and end.
func (in *OccurrenceInput) parse(loc *time.Location) (time.Time, time.Time, error) {
	var v errs.Invalid
	checkTexts(&v, in.Title, in.Description, in.Location, in.Type)
	start, sok := timeField(&v, "startAt", in.StartAt, loc)
	end, eok := timeField(&v, "endAt", in.EndAt, loc)
	if sok && eok {
		v.Check("endAt", end.After(start), "end_before_start", "must be after startAt")
	}
	return start, end, v.Err()
}
