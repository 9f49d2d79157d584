package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ulule/limiter/v3"
)

// Window is how a store counts.
type Window int

const (
	// Sliding admits a request iff fewer than the limit were admitted in the trailing period
	// (an exact log, see the package comment).
	Sliding Window = iota + 1
	// FixedClock counts per window aligned to multiples of the period since the Unix epoch (for
	// one hour: the clock hour).
	FixedClock
)

func (w Window) String() string {
	switch w {
	case Sliding:
		return "sliding"
	case FixedClock:
		return "fixed"
	}
	return fmt.Sprintf("Window(%d)", int(w))
}

// Store is a limiter.Store that also answers with a Decision measured on the store's own clock
// (Redis TIME for the Redis stores) and can take a recorded request back.
type Store interface {
	limiter.Store
	// Take admits n requests for key under rate when they fit and records them. Refused
	// requests are not recorded. n == 0 only reports.
	Take(ctx context.Context, key string, n int64, rate limiter.Rate) (Decision, error)
	// Refund removes what d recorded for key, for a request that must not count (a 401 or 403).
	// Refunding a decision that recorded nothing does nothing, and neither does refunding a
	// fixed-window decision after its window ended. Call it at most once per decision: a sliding
	// log ignores a second call, but a fixed window's counter cannot tell it apart.
	Refund(ctx context.Context, key string, rate limiter.Rate, d Decision) error
}

// Decision is the answer for one request: whether it is admitted and the numbers for the
// headers. Durations are measured on the store's clock, so they are right even when the server's
// clock and Redis's disagree.
type Decision struct {
	Allowed   bool
	Limit     int64
	Remaining int64
	// Reset is, for a fixed window, the time to the window's end. For a sliding window it is the
	// time until one more request would be admitted when Remaining is 0, and otherwise the time
	// until the window has drained and Remaining is back to Limit.
	Reset time.Duration
	// RetryAfter is the time until this request would be admitted; 0 when Allowed. A request
	// bigger than the limit never fits: its RetryAfter is the period.
	RetryAfter time.Duration
	// At is the store's clock when it decided.
	At time.Time
	// Degraded reports that the store failed and the request was admitted without counting: it
	// carries no numbers, and SetHeaders writes none.
	Degraded bool
	// Fallback reports that Redis was unreachable and the request was counted in this process's
	// memory, against the quota divided by REPLICAS; the numbers are that count's.
	Fallback bool

	policy string        // RateLimit-Policy name, set by Limiter
	period time.Duration // set by Limiter
	token  token         // what Take recorded, for Refund
}

// token identifies what one Take recorded: for a sliding log the admission time and the
// sequence numbers first..first+n-1; for a fixed window the window start and the count.
type token struct {
	at    int64 // microseconds: admission time (sliding) or window start (fixed)
	first int64
	n     int64
}

// ResetSeconds is Reset in whole seconds, rounded up.
func (d Decision) ResetSeconds() int64 { return ceilSeconds(d.Reset) }

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up so that waiting that long always
// suffices, and at least 1 for a refused request (the value of Retry-After and of the legacy
// intake's retryAfter). It is 0 for an admitted one.
func (d Decision) RetryAfterSeconds() int64 {
	if d.Allowed {
		return 0
	}
	return max(ceilSeconds(d.RetryAfter), 1)
}

// Context is d as ulule's limiter.Context: Reset as Unix seconds (rounded up), Reached for a
// refused request.
func (d Decision) Context() limiter.Context {
	return limiter.Context{
		Limit:     d.Limit,
		Remaining: d.Remaining,
		Reset:     ceilSeconds(time.Duration(d.At.UnixNano()) + d.Reset),
		Reached:   !d.Allowed,
	}
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// raw is a decision in the stores' integer arithmetic: microseconds and counts.
type raw struct {
	admitted bool
	count    int64 // recorded requests in the window after the decision
	reset    int64 // µs
	retry    int64 // µs
	now      int64 // µs
	tok      token
}

func (r raw) decision(limit int64) Decision {
	return Decision{
		Allowed:    r.admitted,
		Limit:      limit,
		Remaining:  max(limit-r.count, 0),
		Reset:      time.Duration(max(r.reset, 0)) * time.Microsecond,
		RetryAfter: time.Duration(max(r.retry, 0)) * time.Microsecond,
		At:         time.UnixMicro(r.now),
		token:      r.tok,
	}
}

var errRate = errors.New("ratelimit: rate needs a positive limit and a period of at least 1µs")

func checkRate(rate limiter.Rate, n int64) error {
	if rate.Limit <= 0 || rate.Period < time.Microsecond {
		return errRate
	}
	if n < 0 {
		return fmt.Errorf("ratelimit: negative count %d", n)
	}
	return nil
}

// StoreOption configures a store.
type StoreOption func(*storeConfig)

type storeConfig struct {
	now     func() time.Time
	timeout time.Duration
}

func newStoreConfig(opts []StoreOption) storeConfig {
	c := storeConfig{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// DefaultTimeout bounds each Redis call of a store, so an unreachable Redis delays a request by
// at most this much before the limiter fails open.
const DefaultTimeout = 200 * time.Millisecond

// WithClock makes a store read the time from now instead of its default clock (time.Now for
// memory, Redis TIME for Redis, where now's value is then passed to the script). For tests.
func WithClock(now func() time.Time) StoreOption {
	return func(c *storeConfig) { c.now = now }
}

// WithTimeout sets the deadline of each Redis call (default DefaultTimeout); 0 or less leaves the
// caller's context alone. go-redis applies a deadline to socket reads and writes only when the
// client has Options.ContextTimeoutEnabled (New sets it); otherwise its ReadTimeout still
// applies. Memory stores ignore it.
func WithTimeout(d time.Duration) StoreOption {
	return func(c *storeConfig) { c.timeout = d }
}

// viaTake gives a Store the limiter.Store methods that are Take in other words: Get, Increment
// and Peek. Each store embeds one bound to its own Take.
type viaTake struct {
	take func(ctx context.Context, key string, n int64, rate limiter.Rate) (Decision, error)
}

// Get implements limiter.Store: it takes one request.
func (t viaTake) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return t.Increment(ctx, key, 1, rate)
}

// Increment implements limiter.Store: it takes count requests.
func (t viaTake) Increment(ctx context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	d, err := t.take(ctx, key, count, rate)
	if err != nil {
		return limiter.Context{}, err
	}
	return d.Context(), nil
}

// Peek implements limiter.Store: it reports without recording; Reached means a request now
// would be refused.
func (t viaTake) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	d, err := t.take(ctx, key, 0, rate)
	if err != nil {
		return limiter.Context{}, err
	}
	c := d.Context()
	c.Reached = d.Remaining == 0
	return c, nil
}
