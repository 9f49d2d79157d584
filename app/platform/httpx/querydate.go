package httpx

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// QueryDate reads an optional calendar date (YYYY-MM-DD) of the query: nil when absent; a bad
// one is `invalid_date` on name in v. Year 0 parses in Go but PostgreSQL has no year 0, so it is
// refused here rather than failing in the database.
func QueryDate(c *fiber.Ctx, v *errs.Invalid, name string) *time.Time {
	s := strings.TrimSpace(c.Query(name))
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.DateOnly, s) // the spec's `format: date`
	ok := err == nil && t.Year() >= 1
	v.Check(name, ok, "invalid_date", "must be a date (YYYY-MM-DD)")
	if !ok {
		return nil
	}
	return &t
}

// QueryWindow reads the date window from..to of a report or filter. With required, a missing
// bound is `required`; a window whose to lies before from is `invalid_range` on to. ok is false
// when either bound is bad (or missing while required).
func QueryWindow(c *fiber.Ctx, v *errs.Invalid, required bool) (from, to *time.Time, ok bool) {
	before := len(v.Errors)
	from, to = QueryDate(c, v, "from"), QueryDate(c, v, "to")
	if required {
		v.Check("from", strings.TrimSpace(c.Query("from")) != "", "required", "is required")
		v.Check("to", strings.TrimSpace(c.Query("to")) != "", "required", "is required")
	}
	if from != nil && to != nil && to.Before(*from) {
		v.Add("to", "invalid_range", "must not be before from")
	}
	return from, to, len(v.Errors) == before
}

// Today is the calendar date of now in Europe/Berlin (the company's day, not UTC's), as a UTC
// midnight: the default of an asOf.
func Today(now time.Time) time.Time {
	y, m, d := now.In(Berlin).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
