package reports

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// reportPeriod is the window of the pipeline and activity reports as instants: the calendar
// days from..to, both included, as days in Europe/Berlin (a brokerage's day, the zone the spec
// reads local timestamps in). A record is in it when its timestamp is at or after the first
// instant and before the first instant after the window: half-open in SQL, so a record at
// 23:59:59.999 on `to` counts and one at 00:00 the next day does not. nil ends are open.
type reportPeriod struct {
	start, end *time.Time
}

// readReportPeriod reads from and to with the reports' window parser (reports_query.go: the
// same 422 codes for every report) and turns the dates into Berlin instants.
func readReportPeriod(c *fiber.Ctx, v *errs.Invalid, required bool) reportPeriod {
	from, to, _ := httpx.QueryWindow(c, v, required)
	return reportPeriod{start: berlinMidnight(from, 0), end: berlinMidnight(to, 1)}
}

// berlinMidnight is the start of day d plus days in Berlin; nil for nil. time.Date normalises
// the day and keeps the DST changes (a day of 23 or 25 hours).
func berlinMidnight(d *time.Time, days int) *time.Time {
	if d == nil {
		return nil
	}
	t := time.Date(d.Year(), d.Month(), d.Day()+days, 0, 0, 0, 0, httpx.Berlin)
	return &t
}
