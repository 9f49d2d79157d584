package portal

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

// Throttling the sign-in (docs/decisions/portal.md "Sign-in throttle"): failures count in the
// limiters of the OAuth login (LoginAccount: 5 per 15 minutes per account and sender; LoginIP:
// 20 per 15 minutes per sender), under keys of their own ("portal:<company>:…"), so neither
// login's attempts spend the other's budget and a customer of two brokerages is counted per
// brokerage. Only failures count, and never per account alone: five wrong passwords from an
// attacker's address lock that address out of the account, while the customer signs in from
// anywhere else. A refused attempt is not checked at all (not even the password), so a blocked
// sender learns nothing.
//
// The same pair guards the TOTP code (per access and sender), the password asked to switch TOTP
// off, and the reset form (every request counts there: each may send a mail).

// throttle is the pair of keys of one kind of attempt by one sender.
type throttle struct {
	m          *Module
	acct, addr string
}

// throttleOf is the throttle of kind ("login", "code", "reset", "disable") for account (an
// e-mail address or an access id) from the request's sender (its address or IPv6 /64).
func (m *Module) throttleOf(c *fiber.Ctx, company uuid.UUID, kind, account string) throttle {
	from := m.d.Clients.Bucket(c)
	prefix := "portal:" + company.String() + ":" + kind
	return throttle{m: m, acct: prefix + ":acct:" + account + "|" + from, addr: prefix + ":ip:" + from}
}

// wait is how long the sender must wait before the next attempt (0: it may try now). A
// failing store admits (the limiter fails open, as the API's does).
func (t throttle) wait(ctx context.Context) time.Duration {
	if t.m.d.Limits == nil {
		return 0
	}
	return max(t.m.d.Limits.LoginAccount.Wait(ctx, t.acct), t.m.d.Limits.LoginIP.Wait(ctx, t.addr))
}

// fail counts one failed attempt.
func (t throttle) fail(ctx context.Context) {
	if t.m.d.Limits == nil {
		return
	}
	t.m.d.Limits.LoginAccount.Allow(ctx, t.acct)
	t.m.d.Limits.LoginIP.Allow(ctx, t.addr)
}

// tooMany is the page of a refused attempt: 429 with Retry-After and the wait in minutes.
func (m *Module) tooMany(c *fiber.Ctx, page string, wait time.Duration, d PageData) error {
	mins := int((wait + time.Minute - 1) / time.Minute)
	c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(wait.Seconds()+0.999)))
	if mins <= 1 {
		d.Notice = "Zu viele Versuche. Bitte warten Sie eine Minute und versuchen Sie es dann erneut."
	} else {
		d.Notice = fmt.Sprintf("Zu viele Versuche. Bitte warten Sie %d Minuten und versuchen Sie es dann erneut.", mins)
	}
	return m.render(c, fiber.StatusTooManyRequests, page, d)
}
