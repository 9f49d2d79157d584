package app

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// rerunLocal marks a request that retryTransient runs again: the middlewares before the routes
// (requestLog, recover, retryTransient itself) pass it straight on.
const rerunLocal = "app.rerun"

func rerun(c *fiber.Ctx) bool { return c.Locals(rerunLocal) != nil }

// retryTransient runs a request again when it failed on a passing database failure that left
// nothing behind (tenancy.Transient: the connection broke before COMMIT, the server restarted,
// a serialization failure or deadlock), with backoff, until budget after the request began.
// PostgreSQL's advice for serialization failures and deadlocks is exactly this: run the whole
// transaction again. The request transaction rolled back, the limiter refunded its count
// (app/platform/ratelimit) and Idempotency-Key released its reservation (app/platform/idempotency), so the rerun
// starts clean; the request body is still in memory. A COMMIT whose outcome is unknown is never
// run again (503 commit_outcome_unknown). Failures to begin the transaction are retried inside
// tenancy already, without running any middleware twice.
func retryTransient(budget time.Duration, counted func()) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// A streamed body (the portfolio upload) is read once: it cannot run again; the client
		// retries after 503 (with its Idempotency-Key).
		if rerun(c) || budget <= 0 || httpx.Streamed(c) {
			return c.Next()
		}
		base := c.UserContext()
		ctx := tenancy.WithRetryDeadline(base, time.Now().Add(budget))
		c.SetUserContext(ctx)
		err := c.Next()
		for n := 0; tenancy.Classify(err) == tenancy.Transient && tenancy.WaitRetry(ctx, n); n++ {
			id := httpx.RequestID(c)
			c.Response().Reset()
			c.Set(httpx.RequestIDHeader, id)
			c.SetUserContext(ctx)
			c.Locals(rerunLocal, true)
			counted()
			err = c.RestartRouting()
			c.Locals(rerunLocal, nil)
		}
		return err
	}
}
