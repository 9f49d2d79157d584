package appointments

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/appointment"
	"github.com/brokerdesk/brokerdesk/ent/appointmentexception"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Feed reads the calendar of the feed token's user (pinned in ctx): the series and
// appointments it owns, with their exceptions.
func (s *Service) Feed(ctx context.Context) ([]Series, error) {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok || p.Kind != tenancy.KindCalendar {
		return nil, errs.NotFound("calendar feed not found")
	}
	db := tenancy.Client(ctx)
	rows, err := db.Appointment.Query().Where(appointment.OwnerID(p.UserID)).
		Order(ent.Asc(appointment.FieldStartAt), ent.Asc(appointment.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read feed appointments: %w", err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, a := range rows {
		ids[i] = a.ID
	}
	xs, err := db.AppointmentException.Query().Where(appointmentexception.AppointmentIDIn(ids...)).
		Order(ent.Asc(appointmentexception.FieldOccurrenceStart)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read feed exceptions: %w", err)
	}
	byID := map[uuid.UUID][]*ent.AppointmentException{}
	for _, x := range xs {
		byID[x.AppointmentID] = append(byID[x.AppointmentID], x)
	}
	series := make([]Series, len(rows))
	for i, a := range rows {
		series[i] = Series{Appointment: a, Exceptions: byID[a.ID]}
	}
	return series, nil
}

// MountFeed registers the token routes on r (authenticated) and the feed on v1 behind feedAuth
// (tenancy.Authenticator.CalendarFeed). pager pages GET /calendar-tokens.
func (h *Handler) MountFeed(r, v1 fiber.Router, feedAuth fiber.Handler, pager *httpx.Pager) {
	h.pager = pager
	r.Post("/users/:userId/calendar-token", policy.Require("appointments:write"), h.issueToken)
	r.Delete("/users/:userId/calendar-token", policy.Require("appointments:write"), h.revokeToken)
	r.Get("/calendar-tokens", policy.Require(policy.AdminScope), h.listTokens)
	v1.Get("/calendar/:token.ics", feedAuth, h.feed)
}

// FeedToken extracts the token of GET /calendar/{token}.ics.
func FeedToken(c *fiber.Ctx) string { return c.Params("token") }

// feed handles GET /calendar/{token}.ics: the user's calendar as iCalendar.
func (h *Handler) feed(c *fiber.Ctx) error {
	series, err := h.svc.Feed(c.UserContext())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "private, max-age=300")
	return c.SendString(Calendar("BrokerDesk", series, h.svc.now()))
}
