package ratelimit

import (
	"github.com/google/uuid"

	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"
	"github.com/ulule/limiter/v3"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Header names. RateLimit-Limit, -Remaining and -Reset are the spec's; RateLimit-Policy and
// RateLimit are the structured fields of draft-ietf-httpapi-ratelimit-headers.
const (
	HeaderLimit     = "RateLimit-Limit"
	HeaderRemaining = "RateLimit-Remaining"
	HeaderReset     = "RateLimit-Reset"
	HeaderPolicy    = "RateLimit-Policy"
	HeaderRateLimit = "RateLimit"
)

// Limiter applies one rate, under one policy name, to keys counted in one store.
type Limiter struct {
	store  Store
	rate   limiter.Rate
	policy string
}

// NewLimiter returns a limiter of rate over store. policy names the quota in RateLimit-Policy and
// RateLimit ("default" for the v1 API); it must be a plain token (letters, digits, '-', '_',
// '.'). NewLimiter panics on a rate without a positive limit and period or a bad policy name:
// both are constants of the program.
func NewLimiter(store Store, rate limiter.Rate, policy string) *Limiter {
	if err := checkRate(rate, 0); err != nil {
		panic(err)
	}
	if !validPolicy(policy) {
		panic(fmt.Sprintf("ratelimit: policy name %q is not a plain token", policy))
	}
	return &Limiter{store: store, rate: rate, policy: policy}
}

func validPolicy(p string) bool {
	if p == "" {
		return false
	}
	for _, r := range p {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// Rate is the limiter's rate.
func (l *Limiter) Rate() limiter.Rate { return l.rate }

// Policy is the limiter's policy name.
func (l *Limiter) Policy() string { return l.policy }

// Store is the limiter's store.
func (l *Limiter) Store() Store { return l.store }

// Allow takes one request for key and returns the decision. When the store fails it admits the
// request (fail open, see the package comment): it logs one error line through zerolog.Ctx(ctx)
// and returns a Degraded decision. Callers that shape their own 429 (the legacy lead intake) use
// this with SetHeaders and RetryAfterSeconds; everything else uses Middleware.
func (l *Limiter) Allow(ctx context.Context, key string) Decision {
	d, err := l.store.Take(ctx, key, 1, l.rate)
	if err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Str("rate_limit_policy", l.policy).
			Msg("rate limiter unavailable: request admitted without a limit")
		return Decision{Allowed: true, Degraded: true, Limit: l.rate.Limit, policy: l.policy, period: l.rate.Period}
	}
	d.policy, d.period = l.policy, l.rate.Period
	return d
}

// Exhausted reports whether key has no request left in the current window, without taking one
// (the OAuth login checks it before a password is even compared). A failing store answers
// false, like Allow fails open.
func (l *Limiter) Exhausted(ctx context.Context, key string) bool {
	d, err := l.store.Take(ctx, key, 0, l.rate)
	if err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Str("rate_limit_policy", l.policy).Msg("rate limiter unavailable")
		return false
	}
	return d.Remaining <= 0
}

// Refund takes back the request d admitted for key, for a request that must not count. A
// failure is logged, not returned: the request is answered already.
func (l *Limiter) Refund(ctx context.Context, key string, d Decision) {
	if d.Degraded || !d.Allowed {
		return
	}
	if err := l.store.Refund(ctx, key, l.rate, d); err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("rate_limit_policy", l.policy).Msg("rate limit refund failed")
	}
}

// Middleware limits the requests for which key returns a credential id (true); it lets the
// others through untouched (false: no credential, nothing to count). It sets the rate-limit
// headers on every limited response; a refused request gets Retry-After and the error of
// Decision.Err (429 through app/httpx). A request the rest of the chain answers with 401 or 403
// is refunded. Mount it after authentication, so key can read the principal.
func (l *Limiter) Middleware(key func(*fiber.Ctx) (string, bool)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		k, ok := key(c)
		if !ok {
			return c.Next()
		}
		ctx := c.UserContext()
		d := l.Allow(ctx, k)
		d.SetHeaders(c)
		if !d.Allowed {
			return d.Err()
		}
		err := c.Next()
		if !d.Degraded && deniedAccess(c, err) {
			l.Refund(ctx, k, d)
			d.Remaining = min(d.Remaining+1, d.Limit)
			d.SetHeaders(c)
		}
		return err
	}
}

// deniedAccess reports whether the chain answered 401 or 403, as an error or a written status.
func deniedAccess(c *fiber.Ctx, err error) bool {
	if err == nil {
		s := c.Response().StatusCode()
		return s == http.StatusUnauthorized || s == http.StatusForbidden
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fe.Code == http.StatusUnauthorized || fe.Code == http.StatusForbidden
	}
	return errors.Is(err, errs.ErrUnauthenticated) || errors.Is(err, errs.ErrForbidden)
}

// SetHeaders writes d's rate-limit headers on the response, and Retry-After when d refused the
// request. A Degraded decision writes none: there are no numbers to tell.
func (d Decision) SetHeaders(c *fiber.Ctx) {
	if d.Degraded {
		return
	}
	limit := strconv.FormatInt(d.Limit, 10)
	remaining := strconv.FormatInt(d.Remaining, 10)
	reset := strconv.FormatInt(d.ResetSeconds(), 10)
	c.Set(HeaderLimit, limit)
	c.Set(HeaderRemaining, remaining)
	c.Set(HeaderReset, reset)
	if d.policy != "" {
		c.Set(HeaderPolicy, `"`+d.policy+`";q=`+limit+`;w=`+strconv.FormatInt(ceilSeconds(d.period), 10))
		c.Set(HeaderRateLimit, `"`+d.policy+`";r=`+remaining+`;t=`+reset)
	}
	if !d.Allowed {
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(d.RetryAfterSeconds(), 10))
	}
}

// Err is the error for a refused request: kind errs.ErrRateLimited (429 through app/httpx), code
// "rate_limited". It is nil for an admitted one.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return errs.RateLimited("rate limit of %d requests per %s exceeded; retry in %d s",
		d.Limit, formatPeriod(d.period), d.RetryAfterSeconds())
}

func formatPeriod(p time.Duration) string {
	switch p {
	case 0:
		return "period"
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "day"
	}
	return p.String()
}

// CredentialKey is the key function of the v1 API: the id of the authenticated credential (not
// the secret), or false when the request carries no principal.
func CredentialKey(c *fiber.Ctx) (string, bool) {
	p, ok := tenancy.PrincipalFrom(c.UserContext())
	if !ok || p == nil {
		return "", false
	}
	if p.ClientID != uuid.Nil {
		// OAuth: one quota per grant, the client and the user (or the company for client
		// credentials), however many tokens it was issued
		return "oauth:" + p.ClientID.String() + ":" + p.UserID.String() + ":" + p.CompanyID.String(), true
	}
	return p.KeyID.String(), true
}
