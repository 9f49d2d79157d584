package ratelimit

import (
	"github.com/google/uuid"

	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"
	"github.com/ulule/limiter/v3"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
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

	// While Redis is unreachable (health), requests are counted in fallback at fallbackRate:
	// the quota divided by the number of replicas. Nil for memory limiters.
	fallback     Store
	fallbackRate limiter.Rate
	health       *health
	observe      func(policy, outcome string) // metrics hook; nil: none
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
func (l *Limiter) Allow(ctx context.Context, key string) Decision { return l.AllowN(ctx, key, 1) }

// AllowN is Allow for n units at once (bytes of a byte budget).
func (l *Limiter) AllowN(ctx context.Context, key string, n int64) Decision {
	d := l.allow(ctx, key, n)
	if l.observe != nil {
		outcome := "allowed"
		switch {
		case !d.Allowed:
			outcome = "limited"
		case d.Degraded:
			outcome = "unlimited"
		}
		if d.Fallback {
			outcome += "_memory"
		}
		l.observe(l.policy, outcome)
	}
	return d
}

func (l *Limiter) allow(ctx context.Context, key string, n int64) Decision {
	if l.health != nil && l.health.skip() {
		return l.fromFallback(ctx, key, n)
	}
	var began time.Time
	if l.health != nil {
		began = l.health.now()
	}
	d, err := l.store.Take(ctx, key, n, l.rate)
	if err != nil {
		if l.fallback != nil {
			l.health.failed(err)
			return l.fromFallback(ctx, key, n)
		}
		zerolog.Ctx(ctx).Error().Err(err).Str("rate_limit_policy", l.policy).
			Msg("rate limiter unavailable: request admitted without a limit")
		return Decision{Allowed: true, Degraded: true, Limit: l.rate.Limit, policy: l.policy, period: l.rate.Period}
	}
	if l.health != nil {
		l.health.ok(began)
	}
	d.policy, d.period = l.policy, l.rate.Period
	return d
}

// fromFallback counts the request in this process's memory at the reduced rate.
func (l *Limiter) fromFallback(ctx context.Context, key string, n int64) Decision {
	d, err := l.fallback.Take(ctx, key, n, l.fallbackRate)
	if err != nil { // memory stores fail only on a bad rate, which New rules out
		return Decision{Allowed: true, Degraded: true, Fallback: true, Limit: l.fallbackRate.Limit, policy: l.policy, period: l.rate.Period}
	}
	d.Fallback, d.policy, d.period = true, l.policy, l.rate.Period
	return d
}

// Exhausted reports whether key has no request left in the current window, without taking one
// (the OAuth login checks it before a password is even compared). A failing store answers
// false, like Allow fails open.
func (l *Limiter) Exhausted(ctx context.Context, key string) bool { return l.Wait(ctx, key) > 0 }

// Wait is Exhausted with how long until key has a request again (at least a second), 0 when it
// has one now: the Retry-After of a refusal.
func (l *Limiter) Wait(ctx context.Context, key string) time.Duration {
	d, err := l.store.Take(ctx, key, 0, l.rate)
	if err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Str("rate_limit_policy", l.policy).Msg("rate limiter unavailable")
		return 0
	}
	if d.Remaining > 0 {
		return 0
	}
	return max(d.Reset, time.Second)
}

// Refund takes back the request d admitted for key, for a request that must not count. A
// failure is logged, not returned: the request is answered already.
func (l *Limiter) Refund(ctx context.Context, key string, d Decision) {
	if d.Degraded || !d.Allowed {
		return
	}
	store, rate := l.store, l.rate
	if d.Fallback {
		store, rate = l.fallback, l.fallbackRate
	}
	if err := store.Refund(ctx, key, rate, d); err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("rate_limit_policy", l.policy).Msg("rate limit refund failed")
	}
}

// Middleware limits the requests for which key returns a credential id (true); it lets the
// others through untouched (false: no credential, nothing to count). It sets the rate-limit
// headers on every limited response; a refused request gets Retry-After and the error of
// Decision.Err (429 through app/platform/httpx). A request the rest of the chain answers with 401 or 403
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
		// 401/403 do not count (spec); neither does a request a passing database failure
		// rolled back: it runs again (and is counted then) or the client retries after 503.
		if !d.Degraded && (deniedAccess(c, err) || tenancy.Classify(err) == tenancy.Transient) {
			l.Refund(ctx, k, d)
			d.Remaining = min(d.Remaining+1, d.Limit)
			d.SetHeaders(c)
		}
		return err
	}
}

// AuthGuard limits 401 and 403 answers per sender (key: Clients.Bucket): a sender that got the
// limit's number of them within the window is answered 429 at once, before the chain (and so
// before any database work), until the window ends. Only refusals count, in the shared store;
// a good request costs no store round trip: the verdict "blocked until" is kept in this
// process when a counted refusal finds the window full, so on N replicas a flooding sender gets
// at most N refusals past the limit before every replica blocks it. Mount it before
// authentication.
func (l *Limiter) AuthGuard(key func(*fiber.Ctx) string) fiber.Handler {
	var (
		mu      sync.Mutex
		blocked = map[string]time.Time{}
	)
	return func(c *fiber.Ctx) error {
		k := key(c)
		now := time.Now()
		mu.Lock()
		until, ok := blocked[k]
		if ok && !now.Before(until) {
			delete(blocked, k)
			ok = false
		}
		mu.Unlock()
		if ok {
			wait := max(int64(until.Sub(now)+time.Second-1)/int64(time.Second), 1)
			c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(wait, 10))
			return errs.RateLimited("too many rejected credentials from this address; retry in %d s", wait)
		}
		err := c.Next()
		if deniedAccess(c, err) {
			if d := l.Allow(c.UserContext(), k); !d.Degraded && (!d.Allowed || d.Remaining == 0) {
				mu.Lock()
				if len(blocked) > 100_000 { // a flood from very many senders: forget the expired
					for b, u := range blocked {
						if !now.Before(u) {
							delete(blocked, b)
						}
					}
				}
				blocked[strings.Clone(k)] = now.Add(max(d.Reset, time.Second))
				mu.Unlock()
			}
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

// Err is the error for a refused request: kind errs.ErrRateLimited (429 through app/platform/httpx), code
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
