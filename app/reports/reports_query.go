package reports

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
)

// The query parsers the reports share: calendar dates (asOf, from, to) and the cursor key of
// the two paged reports whose keyset SQL computes (renewals, cross-selling). Like httpx's
// parsers, each adds what is wrong to v, so one 422 lists every bad parameter.

// dateLayout is the spec's `format: date`.
const dateLayout = "2006-01-02"

// queryDate reads an optional calendar date (YYYY-MM-DD): nil when absent. Year 0 parses in Go
// but PostgreSQL has no year 0, so it is refused here rather than failing in the database.
func queryDate(c *fiber.Ctx, v *errs.Invalid, name string) *time.Time {
	s := strings.TrimSpace(c.Query(name))
	if s == "" {
		return nil
	}
	t, err := time.Parse(dateLayout, s)
	ok := err == nil && t.Year() >= 1
	v.Check(name, ok, "invalid_date", "must be a date (YYYY-MM-DD)")
	if !ok {
		return nil
	}
	return &t
}

// window reads the date window from..to of a report. With required, a missing bound is
// `required`; a window whose to lies before from is `invalid_range` on to. ok is false when
// either bound is bad or missing (the zero times then).
func window(c *fiber.Ctx, v *errs.Invalid, required bool) (from, to *time.Time, ok bool) {
	before := len(v.Errors)
	from, to = queryDate(c, v, "from"), queryDate(c, v, "to")
	if required {
		v.Check("from", c.Query("from") != "", "required", "is required")
		v.Check("to", c.Query("to") != "", "required", "is required")
	}
	if from != nil && to != nil && to.Before(*from) {
		v.Add("to", "invalid_range", "must not be before from")
	}
	return from, to, len(v.Errors) == before
}

// today is the calendar date of now in Europe/Berlin (the company's day, not UTC's).
func today(now time.Time) time.Time {
	y, m, d := now.In(httpx.Berlin).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// afterKey is the cursor key of a raw-SQL keyset (sort value, id) the pipeline opened: ok is
// false on the first page. The cursor was sealed and bound to this list by the pager, so a key
// of another shape means the list's order changed between releases: 422 invalid_cursor.
func afterKey(p paging.Page) (value string, id uuid.UUID, ok bool, err error) {
	if len(p.After) == 0 {
		return "", uuid.Nil, false, nil
	}
	bad := errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
	if len(p.After) != 2 {
		return "", uuid.Nil, false, bad
	}
	id, perr := uuid.Parse(p.After[1])
	if perr != nil {
		return "", uuid.Nil, false, bad
	}
	return p.After[0], id, true, nil
}
