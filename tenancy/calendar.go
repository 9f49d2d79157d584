package tenancy

import (
	"database/sql"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// KindCalendar is the Principal kind of a calendar feed token: it reads its user's
// appointments and nothing else (no scopes).
const KindCalendar = "calendar"

// calendarQuery resolves a feed token and pins the transaction in one round trip, as authQuery
// pins a key bound to the token's user: company, user and the visibility of the user's role
// ($2: the roles that see all), so RLS restricts the feed as it restricts that user's requests.
// calendar_feed_user is SECURITY DEFINER (migrations/): it reads tokens of every company.
const calendarQuery = `SELECT company_id, user_id, user_role,
	set_config('app.company_id', company_id::text, true),
	set_config('app.user_id', user_id::text, true),
	set_config('app.visibility', CASE WHEN user_role = ANY($2::text[]) THEN 'all' ELSE 'own_and_delegated' END, true)
FROM calendar_feed_user($1)`

// CalendarFeed guards GET /calendar/{token}.ics: tokenOf extracts the token from the request.
// An unknown, revoked or expired token, one whose issuing key or OAuth grant is no longer
// alive, an inactive user or company is 404 (a feed URL is a secret address, not a credential
// a client retries); calendar_feed_user decides all of it in the lookup's round trip. The rest of the chain runs in one transaction
// pinned to the company, as the token's user.
func (a *Authenticator) CalendarFeed(tokenOf func(*fiber.Ctx) string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		token := tokenOf(c)
		if token == "" {
			return errs.NotFound("calendar feed not found")
		}
		ctx := c.UserContext()
		tx, err := a.client.BeginTx(withAuthPending(ctx), nil)
		if err != nil {
			return fmt.Errorf("begin feed transaction: %w", err)
		}
		done := false
		defer func() {
			if !done {
				_ = tx.Rollback()
			}
		}()
		var p Principal
		var role sql.NullString
		var pinned, pinnedUser string
		rows, err := tx.QueryContext(ctx, calendarQuery, HashKey(token), a.seeAllArg())
		if err != nil {
			return fmt.Errorf("resolve calendar token: %w", err)
		}
		found := rows.Next()
		if found {
			err = rows.Scan(&p.CompanyID, &p.UserID, &role, &pinned, &pinnedUser, &p.Visibility)
		}
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("resolve calendar token: %w", err)
		}
		if !found || p.UserID == uuid.Nil {
			return errs.NotFound("calendar feed not found")
		}
		p.LiveCompanyID, p.Kind, p.UserRole = p.CompanyID, KindCalendar, role.String
		ctx = WithClient(WithPrincipal(ctx, &p), tx.Client())
		c.SetUserContext(ctx)
		if err := c.Next(); err != nil {
			return err
		}
		done = true
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit feed transaction: %w", err)
		}
		return nil
	}
}
