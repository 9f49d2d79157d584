package app

import (
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,64}$`)

// requestLog gives each request an id (X-Request-Id, kept from the client when well-formed),
// a logger carrying it, and one log line at the end with company, key prefix, status and
// latency. It logs the path without the query string: queries can hold e-mail addresses.
func requestLog(base zerolog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if rerun(c) { // the request runs again (retryTransient): logged once, by the first run
			return c.Next()
		}
		start := time.Now()
		id := c.Get(httpx.RequestIDHeader)
		if !validRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		httpx.SetRequestID(c, id)
		c.Set(httpx.RequestIDHeader, id)
		l := base.With().Str("request_id", id).Logger()
		c.SetUserContext(l.WithContext(c.UserContext()))
		if err := c.Next(); err != nil {
			// Write the problem now, so the status logged is the status sent.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		status := c.Response().StatusCode()
		ev := l.Info()
		switch {
		case status == fiber.StatusServiceUnavailable: // a passing outage, not a bug (app/platform/httpx)
			ev = l.Warn()
		case status >= 500:
			ev = l.Error()
		}
		if p, ok := c.Locals(tenancy.PrincipalLocal).(*tenancy.Principal); ok {
			ev = ev.Str("company_id", p.CompanyID.String()).Str("key_prefix", p.KeyPrefix)
		}
		ev.Str("method", c.Method()).Str("path", logPath(c)).Int("status", status).
			Dur("latency", time.Since(start)).Msg("request")
		return nil
	}
}

// logPath is the path the request line logs: the path itself, or the route's pattern when a
// path parameter is a credential (the calendar feed's token: whoever reads the log could
// subscribe to the user's calendar).
func logPath(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && strings.Contains(r.Path, ":token") {
		return r.Path
	}
	return c.Path()
}
