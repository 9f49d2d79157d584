package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ulule/limiter/v3"
)

func rateOf(limit int64, period time.Duration) limiter.Rate {
	return limiter.Rate{Limit: limit, Period: period}
}

var windows = []Window{Sliding, FixedClock}

func TestStore_AdmitsLimitThenRefuses(t *testing.T) {
	t.Parallel()
	eachBackendWindow(t, func(t *testing.T, b backend, w Window) {
		clock := newFakeClock(t0)
		s := b.new(t, w, clock.Now)
		const limit = 5
		for i := int64(1); i <= limit; i++ {
			d := mustTake(t, s, "a", 1, limit, time.Minute)
			if !d.Allowed || d.Remaining != limit-i || d.Limit != limit {
				t.Fatalf("request %d: got allowed=%v remaining=%d limit=%d, want true %d %d", i, d.Allowed, d.Remaining, d.Limit, limit-i, limit)
			}
			clock.Add(time.Second)
		}
		for i := range 3 {
			d := mustTake(t, s, "a", 1, limit, time.Minute)
			if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
				t.Fatalf("request %d over the limit: got allowed=%v remaining=%d retryAfter=%v, want refused", limit+1+i, d.Allowed, d.Remaining, d.RetryAfter)
			}
		}
		// Refused requests were not counted: the peek still sees exactly the limit.
		p := mustTake(t, s, "a", 0, limit, time.Minute)
		if p.Remaining != 0 {
			t.Errorf("peek: got remaining %d, want 0", p.Remaining)
		}
		// Another key has its own count.
		d := mustTake(t, s, "b", 1, limit, time.Minute)
		if !d.Allowed || d.Remaining != limit-1 {
			t.Errorf("second key: got allowed=%v remaining=%d, want true %d", d.Allowed, d.Remaining, limit-1)
		}
	})
}

// TestStore_RetryAfterIsTimeUntilAdmitted checks RetryAfter against the clock: just before it the
// request is still refused, at it the request is admitted, and its whole seconds (Retry-After)
// are at most 1 s more.
func TestStore_RetryAfterIsTimeUntilAdmitted(t *testing.T) {
	t.Parallel()
	type hit struct {
		at time.Duration // after t0
		n  int64
	}
	cases := []struct {
		name      string
		window    Window
		limit     int64
		period    time.Duration
		hits      []hit
		refusedAt time.Duration
		n         int64
		wantRetry time.Duration
	}{
		{"sliding: oldest leaves", Sliding, 3, time.Minute,
			[]hit{{0, 1}, {10 * time.Second, 1}, {20 * time.Second, 1}}, 30 * time.Second, 1, 30 * time.Second},
		{"sliding: fractional seconds round up", Sliding, 3, time.Minute,
			[]hit{{300 * time.Millisecond, 1}, {time.Second, 2}}, 42*time.Second + 100*time.Millisecond, 1, 18200 * time.Millisecond},
		{"sliding: two needed wait for the second oldest", Sliding, 4, time.Minute,
			[]hit{{0, 1}, {5 * time.Second, 1}, {15 * time.Second, 2}}, 20 * time.Second, 2, 45 * time.Second},
		{"sliding: burst at the end of a minute", Sliding, 600, time.Minute,
			[]hit{{59*time.Second + 999*time.Millisecond, 600}}, 60 * time.Second, 1, 59*time.Second + 999*time.Millisecond},
		{"fixed: until the clock hour ends", FixedClock, 2, time.Hour,
			[]hit{{0, 1}, {time.Minute, 1}}, 10 * time.Minute, 1, 29*time.Minute + 59*time.Second + 500*time.Millisecond},
	}
	for _, b := range backends {
		for _, tc := range cases {
			t.Run(b.name+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				clock := newFakeClock(t0)
				s := b.new(t, tc.window, clock.Now)
				for _, h := range tc.hits {
					clock.Set(t0.Add(h.at))
					if d := mustTake(t, s, "k", h.n, tc.limit, tc.period); !d.Allowed {
						t.Fatalf("hit at %v refused", h.at)
					}
				}
				clock.Set(t0.Add(tc.refusedAt))
				d := mustTake(t, s, "k", tc.n, tc.limit, tc.period)
				if d.Allowed {
					t.Fatalf("request at %v admitted, want refused", tc.refusedAt)
				}
				if d.RetryAfter != tc.wantRetry {
					t.Errorf("got RetryAfter %v, want %v", d.RetryAfter, tc.wantRetry)
				}
				if secs := time.Duration(d.RetryAfterSeconds()) * time.Second; secs < d.RetryAfter || secs-d.RetryAfter >= time.Second {
					t.Errorf("got Retry-After %v for %v, want it rounded up by less than 1s", secs, d.RetryAfter)
				}
				if d.Remaining == 0 && tc.n == 1 && d.Reset != d.RetryAfter {
					t.Errorf("got Reset %v, want RetryAfter %v when nothing remains", d.Reset, d.RetryAfter)
				}
				clock.Set(t0.Add(tc.refusedAt + d.RetryAfter - time.Millisecond))
				if e := mustTake(t, s, "k", tc.n, tc.limit, tc.period); e.Allowed {
					t.Errorf("admitted 1ms before RetryAfter")
				}
				clock.Set(t0.Add(tc.refusedAt + d.RetryAfter))
				if e := mustTake(t, s, "k", tc.n, tc.limit, tc.period); !e.Allowed {
					t.Errorf("refused at RetryAfter: %+v", e)
				}
			})
		}
	}
}

// TestStore_RetryAfterOnRedisClock runs the Redis scripts on Redis TIME (no clock override).
func TestStore_RetryAfterOnRedisClock(t *testing.T) {
	t.Parallel()
	for _, w := range windows {
		t.Run(w.String(), func(t *testing.T) {
			t.Parallel()
			s := redisBackend.new(t, w, nil)
			const period = 1500 * time.Millisecond
			for range 2 {
				if d := mustTake(t, s, "k", 1, 2, period); !d.Allowed {
					// Both fit even when a fixed window ends between them.
					t.Fatalf("refused under the limit: %+v", d)
				}
			}
			d := mustTake(t, s, "k", 1, 2, period)
			if d.Allowed {
				if w == FixedClock {
					return // crossed a window boundary (1.5 s windows): nothing to measure
				}
				t.Fatalf("third request admitted")
			}
			if d.RetryAfter <= 0 || d.RetryAfter > period {
				t.Fatalf("got RetryAfter %v, want in (0, %v]", d.RetryAfter, period)
			}
			if skew := time.Since(d.At); skew > time.Second || skew < -time.Second {
				t.Errorf("Redis clock %v differs from ours by %v", d.At, skew)
			}
			// Ask again shortly before and at RetryAfter; judge each answer by Redis's clock.
			for _, wait := range []time.Duration{d.RetryAfter - 300*time.Millisecond, 300 * time.Millisecond} {
				if wait <= 0 {
					continue
				}
				time.Sleep(wait)
				e := mustTake(t, s, "k", 1, 2, period)
				if due := e.At.Sub(d.At) >= d.RetryAfter; e.Allowed != due {
					t.Fatalf("%v after the refusal (RetryAfter %v): got allowed=%v", e.At.Sub(d.At), d.RetryAfter, e.Allowed)
				}
				if e.Allowed {
					return
				}
			}
			t.Fatalf("still refused after waiting RetryAfter %v", d.RetryAfter)
		})
	}
}

// TestFixedWindow_HundredPerClockHour is the lead intake's limit: 100 per key per clock hour.
func TestFixedWindow_HundredPerClockHour(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		clock := newFakeClock(t0) // 10:20:00.5
		l := NewLimiter(b.new(t, FixedClock, clock.Now), rateOf(IntakeLimit, IntakePeriod), IntakePolicy)
		ctx := context.Background()
		for i := int64(1); i <= 100; i++ {
			d := l.Allow(ctx, "pk_live_a")
			if !d.Allowed || d.Remaining != 100-i {
				t.Fatalf("submission %d: got allowed=%v remaining=%d, want true %d", i, d.Allowed, d.Remaining, 100-i)
			}
			if d.ResetSeconds() != 2400 {
				t.Fatalf("submission %d: got reset %ds, want 2400 (to 11:00)", i, d.ResetSeconds())
			}
		}
		d := l.Allow(ctx, "pk_live_a")
		if d.Allowed {
			t.Fatalf("101st admitted")
		}
		if got, want := d.RetryAfterSeconds(), int64(2400); got != want {
			t.Errorf("101st: got retryAfter %d, want %d (seconds to 11:00:00, rounded up)", got, want)
		}
		if got, want := d.RetryAfter, 39*time.Minute+59*time.Second+500*time.Millisecond; got != want {
			t.Errorf("101st: got RetryAfter %v, want %v", got, want)
		}
		if !l.Allow(ctx, "pk_live_b").Allowed {
			t.Errorf("another key refused")
		}
		clock.Set(time.Date(2026, 3, 2, 10, 59, 59, 999_000_000, time.UTC))
		for range 50 {
			if l.Allow(ctx, "pk_live_a").Allowed {
				t.Fatalf("admitted at 10:59:59.999")
			}
		}
		if got := l.Allow(ctx, "pk_live_a").RetryAfterSeconds(); got != 1 {
			t.Errorf("at 10:59:59.999: got retryAfter %d, want 1", got)
		}
		clock.Set(time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC))
		d = l.Allow(ctx, "pk_live_a")
		if !d.Allowed || d.Remaining != 99 || d.ResetSeconds() != 3600 {
			t.Errorf("at 11:00: got allowed=%v remaining=%d reset=%d, want true 99 3600 (refusals not counted)", d.Allowed, d.Remaining, d.ResetSeconds())
		}
	})
}

// TestStore_UluleInterface drives the stores through ulule's limiter.Limiter.
func TestStore_UluleInterface(t *testing.T) {
	t.Parallel()
	eachBackendWindow(t, func(t *testing.T, b backend, w Window) {
		clock := newFakeClock(t0)
		l := limiter.New(b.new(t, w, clock.Now), rateOf(3, time.Minute))
		ctx := context.Background()
		for i := int64(1); i <= 3; i++ {
			c, err := l.Get(ctx, "k")
			if err != nil || c.Reached || c.Remaining != 3-i || c.Limit != 3 {
				t.Fatalf("Get %d: got %+v, %v", i, c, err)
			}
			if c.Reset <= t0.Unix() || c.Reset > t0.Add(time.Minute).Unix()+1 {
				t.Errorf("Get %d: got Reset %d, want Unix seconds within the minute after %d", i, c.Reset, t0.Unix())
			}
		}
		if c, err := l.Get(ctx, "k"); err != nil || !c.Reached {
			t.Fatalf("Get 4: got %+v, %v, want reached", c, err)
		}
		if c, err := l.Peek(ctx, "k"); err != nil || !c.Reached || c.Remaining != 0 {
			t.Fatalf("Peek: got %+v, %v, want reached, 0 remaining", c, err)
		}
		if c, err := l.Reset(ctx, "k"); err != nil || c.Remaining != 3 {
			t.Fatalf("Reset: got %+v, %v", c, err)
		}
		if c, err := l.Increment(ctx, "k", 2); err != nil || c.Reached || c.Remaining != 1 {
			t.Fatalf("Increment 2: got %+v, %v", c, err)
		}
		if c, err := l.Increment(ctx, "k", 2); err != nil || !c.Reached || c.Remaining != 1 {
			t.Fatalf("Increment 2 more: got %+v, %v, want reached with 1 remaining", c, err)
		}
		if c, err := l.Peek(ctx, "other"); err != nil || c.Reached || c.Remaining != 3 {
			t.Fatalf("Peek of an unused key: got %+v, %v", c, err)
		}
	})
}

func TestStore_RefundTakesBackOneRequest(t *testing.T) {
	t.Parallel()
	eachBackendWindow(t, func(t *testing.T, b backend, w Window) {
		clock := newFakeClock(t0)
		s := b.new(t, w, clock.Now)
		rate := rateOf(3, time.Minute)
		ctx := context.Background()
		mustTake(t, s, "k", 1, 3, time.Minute)
		d := mustTake(t, s, "k", 1, 3, time.Minute)
		if err := s.Refund(ctx, "k", rate, d); err != nil {
			t.Fatal(err)
		}
		if p := mustTake(t, s, "k", 0, 3, time.Minute); p.Remaining != 2 {
			t.Errorf("after refund: got remaining %d, want 2", p.Remaining)
		}
		// A refused decision takes nothing back; a sliding log also ignores a second
		// refund of one decision (a fixed counter cannot, see Store.Refund).
		if w == Sliding {
			if err := s.Refund(ctx, "k", rate, d); err != nil {
				t.Fatal(err)
			}
		}
		refused := mustTake(t, s, "k", 5, 3, time.Minute)
		if err := s.Refund(ctx, "k", rate, refused); err != nil {
			t.Fatal(err)
		}
		if p := mustTake(t, s, "k", 0, 3, time.Minute); p.Remaining != 2 {
			t.Errorf("after a second refund: got remaining %d, want 2", p.Remaining)
		}
	})
}

// TestStore_ConcurrentAdmitsExactlyLimit hits one key from many goroutines (and, for Redis, two
// clients, as two server processes would).
func TestStore_ConcurrentAdmitsExactlyLimit(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		stores := []Store{b.new(t, Sliding, nil)}
		if b.name == "redis" {
			c := newTestRedis(t)
			stores = append(stores, NewRedisSlidingStore(c, stores[0].(*RedisStore).prefix))
		}
		const limit, workers, each = 600, 40, 25
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for i := range workers {
			s := stores[i%len(stores)]
			wg.Go(func() {
				for range each {
					d, err := s.Take(context.Background(), "k", 1, rateOf(limit, time.Minute))
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if got := admitted.Load(); got != limit {
			t.Errorf("got %d admitted of %d, want exactly %d", got, workers*each, limit)
		}
	})
}
