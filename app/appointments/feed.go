package appointments

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/appointment"
	"github.com/brokerdesk/brokerdesk/ent/appointmentexception"
	"github.com/brokerdesk/brokerdesk/ent/calendartoken"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// TokenPrefix starts every calendar feed token.
const TokenPrefix = "cal_"

// FeedPath is where a token's feed is served, below the API prefix.
func FeedPath(token string) string { return "/api/public/v1/calendar/" + token + ".ics" }

// TokenView is the answer of POST /users/{userId}/calendar-token: the token is shown once.
type TokenView struct {
	UserID    uuid.UUID `json:"userId"`
	Token     string    `json:"token"`
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"createdAt"`
}

// mayManage checks that the credential may manage userID's feed token: company keys for any
// user of the company, user-bound keys for their own user only.
func mayManage(ctx context.Context, userID uuid.UUID) error {
	if p, ok := tenancy.PrincipalFrom(ctx); ok && p.HasUser() && p.UserID != userID {
		return errs.Forbidden("forbidden", "a user-bound key manages only its own user's calendar feed")
	}
	ok, err := tenancy.Client(ctx).User.Query().Where(user.ID(userID)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("read user %s: %w", userID, err)
	}
	if !ok {
		return errs.NotFound("user %s not found", userID)
	}
	return nil
}

// IssueToken creates the user's feed token, replacing (revoking) the one it had.
func (s *Service) IssueToken(ctx context.Context, userID uuid.UUID) (TokenView, error) {
	if err := mayManage(ctx, userID); err != nil {
		return TokenView{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return TokenView{}, err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	db := tenancy.Client(ctx)
	if _, err := db.CalendarToken.Delete().Where(calendartoken.UserID(userID)).Exec(ctx); err != nil {
		return TokenView{}, fmt.Errorf("revoke calendar token: %w", err)
	}
	t, err := db.CalendarToken.Create().SetUserID(userID).SetTokenHash(tenancy.HashKey(token)).
		SetPrefix(token[:10]).SetCreatedAt(s.now()).Save(ctx)
	if err != nil {
		return TokenView{}, fmt.Errorf("store calendar token: %w", err)
	}
	return TokenView{UserID: userID, Token: token, URL: FeedPath(token), CreatedAt: t.CreatedAt}, nil
}

// RevokeToken deletes the user's feed token (404 when it has none).
func (s *Service) RevokeToken(ctx context.Context, userID uuid.UUID) error {
	if err := mayManage(ctx, userID); err != nil {
		return err
	}
	n, err := tenancy.Client(ctx).CalendarToken.Delete().Where(calendartoken.UserID(userID)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("revoke calendar token: %w", err)
	}
	if n == 0 {
		return errs.NotFound("user %s has no calendar feed", userID)
	}
	return nil
}

// Feed renders the calendar of the feed token's user (pinned in ctx): the series and
// appointments it owns.
func (s *Service) Feed(ctx context.Context) (string, error) {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok || p.Kind != tenancy.KindCalendar {
		return "", errs.NotFound("calendar feed not found")
	}
	db := tenancy.Client(ctx)
	rows, err := db.Appointment.Query().Where(appointment.OwnerID(p.UserID)).
		Order(ent.Asc(appointment.FieldStartAt), ent.Asc(appointment.FieldID)).All(ctx)
	if err != nil {
		return "", fmt.Errorf("read feed appointments: %w", err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, a := range rows {
		ids[i] = a.ID
	}
	xs, err := db.AppointmentException.Query().Where(appointmentexception.AppointmentIDIn(ids...)).
		Order(ent.Asc(appointmentexception.FieldOccurrenceStart)).All(ctx)
	if err != nil {
		return "", fmt.Errorf("read feed exceptions: %w", err)
	}
	byID := map[uuid.UUID][]*ent.AppointmentException{}
	for _, x := range xs {
		byID[x.AppointmentID] = append(byID[x.AppointmentID], x)
	}
	series := make([]Series, len(rows))
	for i, a := range rows {
		series[i] = Series{Appointment: a, Exceptions: byID[a.ID]}
	}
	return Calendar("BrokerDesk", series, s.now()), nil
}

// MountFeed registers the token routes on r (authenticated) and the feed on v1 behind feedAuth
// (tenancy.Authenticator.CalendarFeed).
func (h *Handler) MountFeed(r, v1 fiber.Router, feedAuth fiber.Handler) {
	r.Post("/users/:userId/calendar-token", policy.Require("appointments:read"), h.issueToken)
	r.Delete("/users/:userId/calendar-token", policy.Require("appointments:read"), h.revokeToken)
	v1.Get("/calendar/:token.ics", feedAuth, h.feed)
}

// FeedToken extracts the token of GET /calendar/{token}.ics.
func FeedToken(c *fiber.Ctx) string { return c.Params("token") }

func (h *Handler) issueToken(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	t, err := h.svc.IssueToken(c.UserContext(), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(t)
}

func (h *Handler) revokeToken(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "userId")
	if err != nil {
		return err
	}
	if err := h.svc.RevokeToken(c.UserContext(), id); err != nil {
		return err
	}
	return httpx.NoContent(c)
}

func (h *Handler) feed(c *fiber.Ctx) error {
	body, err := h.svc.Feed(c.UserContext())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "private, max-age=300")
	return c.SendString(body)
}
