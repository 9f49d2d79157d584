package ratelimit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// headerKey limits by the X-Key header; no header, no limit.
func headerKey(c *fiber.Ctx) (string, bool) {
	k := c.Get("X-Key")
	return k, k != ""
}

// newApp serves GET /ok (200), /forbidden (403 through errs) and /written-403 behind mw, with
// the project's problem mapper, and a request logger writing to log.
func newApp(mw fiber.Handler, log *syncBuffer) *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler})
	app.Use(func(c *fiber.Ctx) error {
		if log != nil {
			l := zerolog.New(log)
			c.SetUserContext(l.WithContext(c.UserContext()))
		}
		return c.Next()
	})
	app.Use(mw)
	app.Get("/ok", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/forbidden", func(*fiber.Ctx) error {
		return errs.Forbidden("insufficient_scope", "this credential lacks the scope contacts:read")
	})
	app.Get("/written-403", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusForbidden) })
	return app
}

func do(t *testing.T, app *fiber.App, path, key string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if key != "" {
		req.Header.Set("X-Key", key)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMiddleware_HeadersCountDown sends L+1 requests a second apart through a Fiber app: the
// headers count down, the L+1st is a 429 problem with Retry-After, another key is unaffected.
func TestMiddleware_HeadersCountDown(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		clock := newFakeClock(t0)
		l := NewLimiter(b.new(t, Sliding, clock.Now), rateOf(5, time.Minute), "default")
		app := newApp(l.Middleware(headerKey), nil)
		type want struct {
			status                  int
			remaining, reset, retry string
		}
		wants := []want{
			{200, "4", "60", ""},
			{200, "3", "60", ""},
			{200, "2", "60", ""},
			{200, "1", "60", ""},
			{200, "0", "56", ""}, // nothing left: time until the first request leaves
			{429, "0", "55", "55"},
		}
		for i, w := range wants {
			resp := do(t, app, "/ok", "cred-a")
			h := resp.Header
			if resp.StatusCode != w.status || h.Get(HeaderLimit) != "5" || h.Get(HeaderRemaining) != w.remaining ||
				h.Get(HeaderReset) != w.reset || h.Get(fiber.HeaderRetryAfter) != w.retry {
				t.Fatalf("request %d: got %d limit=%q remaining=%q reset=%q retry-after=%q, want %d 5 %q %q %q", i+1,
					resp.StatusCode, h.Get(HeaderLimit), h.Get(HeaderRemaining), h.Get(HeaderReset), h.Get(fiber.HeaderRetryAfter),
					w.status, w.remaining, w.reset, w.retry)
			}
			if got, want := h.Get(HeaderPolicy), `"default";q=5;w=60`; got != want {
				t.Errorf("request %d: got RateLimit-Policy %q, want %q", i+1, got, want)
			}
			if got, want := h.Get(HeaderRateLimit), `"default";r=`+w.remaining+`;t=`+w.reset; got != want {
				t.Errorf("request %d: got RateLimit %q, want %q", i+1, got, want)
			}
			if w.status == 429 {
				if ct := h.Get(fiber.HeaderContentType); !strings.HasPrefix(ct, httpx.ContentTypeProblem) {
					t.Errorf("429: got Content-Type %q, want %s", ct, httpx.ContentTypeProblem)
				}
				var p httpx.Problem
				if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
					t.Fatal(err)
				}
				if p.Status != 429 || p.Type != httpx.TypeRateLimited || p.Code != "rate_limited" || p.Instance != "/ok" {
					t.Errorf("429: got problem %+v", p)
				}
			}
			clock.Add(time.Second)
		}
		resp := do(t, app, "/ok", "cred-b")
		if resp.StatusCode != 200 || resp.Header.Get(HeaderRemaining) != "4" {
			t.Errorf("second key: got %d remaining=%q, want 200 4", resp.StatusCode, resp.Header.Get(HeaderRemaining))
		}
		resp = do(t, app, "/ok", "")
		if resp.StatusCode != 200 || resp.Header.Get(HeaderLimit) != "" {
			t.Errorf("no key: got %d limit=%q, want 200 without headers", resp.StatusCode, resp.Header.Get(HeaderLimit))
		}
		clock.Set(t0.Add(5*time.Second + 55*time.Second)) // the refused request plus its Retry-After
		if resp := do(t, app, "/ok", "cred-a"); resp.StatusCode != 200 {
			t.Errorf("after Retry-After: got %d, want 200", resp.StatusCode)
		}
	})
}

// TestMiddleware_AccessDeniedDoesNotCount: 401/403 answers do not consume quota.
func TestMiddleware_AccessDeniedDoesNotCount(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		l := NewLimiter(b.new(t, Sliding, nil), rateOf(3, time.Minute), "default")
		app := newApp(l.Middleware(headerKey), nil)
		for _, path := range []string{"/forbidden", "/written-403", "/forbidden", "/forbidden"} {
			resp := do(t, app, path, "k")
			if resp.StatusCode != 403 || resp.Header.Get(HeaderRemaining) != "3" {
				t.Fatalf("GET %s: got %d remaining=%q, want 403 3", path, resp.StatusCode, resp.Header.Get(HeaderRemaining))
			}
		}
		if resp := do(t, app, "/ok", "k"); resp.StatusCode != 200 || resp.Header.Get(HeaderRemaining) != "2" {
			t.Errorf("GET /ok: got %d remaining=%q, want 200 2", resp.StatusCode, resp.Header.Get(HeaderRemaining))
		}
	})
}

// TestMiddleware_TwoProcessesShareRedis: two limiters with their own Redis clients (two server
// processes) count one quota.
func TestMiddleware_TwoProcessesShareRedis(t *testing.T) {
	t.Parallel()
	c1, c2 := newTestRedis(t), newTestRedis(t)
	prefix := newTestPrefix(t, c1)
	rate := rateOf(4, time.Minute)
	a := newApp(NewLimiter(NewRedisSlidingStore(c1, prefix), rate, "default").Middleware(headerKey), nil)
	b := newApp(NewLimiter(NewRedisSlidingStore(c2, prefix), rate, "default").Middleware(headerKey), nil)
	steps := []struct {
		app       *fiber.App
		status    int
		remaining string
	}{
		{a, 200, "3"}, {b, 200, "2"}, {a, 200, "1"}, {b, 200, "0"}, {a, 429, "0"}, {b, 429, "0"},
	}
	for i, s := range steps {
		resp := do(t, s.app, "/ok", "cred")
		if resp.StatusCode != s.status || resp.Header.Get(HeaderRemaining) != s.remaining {
			t.Fatalf("request %d: got %d remaining=%q, want %d %s", i+1, resp.StatusCode, resp.Header.Get(HeaderRemaining), s.status, s.remaining)
		}
	}
	if resp := do(t, b, "/ok", "other"); resp.StatusCode != 200 || resp.Header.Get(HeaderRemaining) != "3" {
		t.Errorf("other key: got %d remaining=%q, want 200 3", resp.StatusCode, resp.Header.Get(HeaderRemaining))
	}
}

// closedRedis returns a client of a port nothing listens on.
func closedRedis(t *testing.T) (*redis.Client, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c, addr
}

// TestMiddleware_RedisDownFailsOpen: with Redis unreachable every request is admitted, without
// rate-limit headers, and each logs one error line.
func TestMiddleware_RedisDownFailsOpen(t *testing.T) {
	t.Parallel()
	for _, w := range windows {
		t.Run(w.String(), func(t *testing.T) {
			t.Parallel()
			c, _ := closedRedis(t)
			store := NewRedisFixedStore(c, "down")
			if w == Sliding {
				store = NewRedisSlidingStore(c, "down")
			}
			l := NewLimiter(store, rateOf(1, time.Minute), "default")
			var log syncBuffer
			app := newApp(l.Middleware(headerKey), &log)
			start := time.Now()
			for i := range 3 {
				resp := do(t, app, "/ok", "k")
				if resp.StatusCode != 200 {
					t.Fatalf("request %d: got %d, want 200 (fail open)", i+1, resp.StatusCode)
				}
				for _, h := range []string{HeaderLimit, HeaderRemaining, HeaderReset, HeaderPolicy, HeaderRateLimit, fiber.HeaderRetryAfter} {
					if v := resp.Header.Get(h); v != "" {
						t.Errorf("request %d: got %s %q, want none", i+1, h, v)
					}
				}
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("3 requests took %v with Redis down, want well under the timeout each", took)
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(lines) != 3 {
				t.Fatalf("got %d log lines, want 3: %s", len(lines), log.String())
			}
			var entry struct {
				Level, Message, Error string
				Policy                string `json:"rate_limit_policy"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
				t.Fatal(err)
			}
			if entry.Level != "error" || !strings.Contains(entry.Message, "rate limiter unavailable") ||
				entry.Error == "" || entry.Policy != "default" {
				t.Errorf("got log line %s, want an error naming the limiter", lines[0])
			}
		})
	}
}

// TestAllow_LegacyIntakeBody shapes the legacy intake's 429 from Allow's numbers.
func TestAllow_LegacyIntakeBody(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(t0)
	l := NewLimiter(NewMemoryFixedStore(WithClock(clock.Now)), rateOf(2, time.Hour), IntakePolicy)
	app := fiber.New()
	app.Post("/intake", func(c *fiber.Ctx) error {
		d := l.Allow(c.UserContext(), c.Get("X-API-Key"))
		d.SetHeaders(c)
		if !d.Allowed {
			return c.Status(fiber.StatusTooManyRequests).JSON(fiber.Map{"error": "rate_limit_exceeded", "retryAfter": d.RetryAfterSeconds()})
		}
		return c.Status(fiber.StatusCreated).JSON(fiber.Map{"status": "created"})
	})
	var last *http.Response
	for range 3 {
		req := httptest.NewRequest(http.MethodPost, "/intake", nil)
		req.Header.Set("X-API-Key", "pk_live_x")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		last = resp
	}
	defer last.Body.Close()
	var body struct {
		Error      string `json:"error"`
		RetryAfter int64  `json:"retryAfter"`
	}
	if err := json.NewDecoder(last.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if last.StatusCode != 429 || body.Error != "rate_limit_exceeded" || body.RetryAfter != 2400 ||
		last.Header.Get(fiber.HeaderRetryAfter) != "2400" || last.Header.Get(HeaderPolicy) != `"intake";q=2;w=3600` {
		t.Errorf("got %d %+v Retry-After=%q Policy=%q, want 429 rate_limit_exceeded 2400", last.StatusCode, body,
			last.Header.Get(fiber.HeaderRetryAfter), last.Header.Get(HeaderPolicy))
	}
}

func TestCredentialKey(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	app := fiber.New()
	app.Use(func(c *fiber.Ctx) error {
		if c.Get("X-Auth") != "" {
			c.SetUserContext(tenancy.WithPrincipal(c.UserContext(), &tenancy.Principal{KeyID: id, CompanyID: uuid.New()}))
		}
		return c.Next()
	})
	app.Get("/", func(c *fiber.Ctx) error {
		k, ok := CredentialKey(c)
		return c.SendString(k + " " + strconv.FormatBool(ok))
	})
	for _, tc := range []struct {
		name, auth, want string
	}{
		{"principal gives its key id", "yes", id.String() + " true"},
		{"no principal is not limited", "", " false"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.auth != "" {
			req.Header.Set("X-Auth", tc.auth)
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(got) != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDecision_Err(t *testing.T) {
	t.Parallel()
	d := Decision{Allowed: false, Limit: 600, RetryAfter: 1500 * time.Millisecond, period: time.Minute}
	err := d.Err()
	var e *errs.E
	if !errors.As(err, &e) || e.Kind != errs.ErrRateLimited || e.Code != "rate_limited" {
		t.Fatalf("got %#v, want errs.E of kind ErrRateLimited", err)
	}
	if want := "rate limit of 600 requests per minute exceeded; retry in 2 s"; e.Detail != want {
		t.Errorf("got detail %q, want %q", e.Detail, want)
	}
	if p := httpx.ToProblem(err); p.Status != 429 || p.Type != httpx.TypeRateLimited {
		t.Errorf("got problem %+v, want 429 %s", p, httpx.TypeRateLimited)
	}
	if (Decision{Allowed: true}).Err() != nil {
		t.Errorf("admitted decision has an error")
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	c := newTestRedis(t)
	_, down := closedRedis(t)
	url := c.Options().Addr
	cases := []struct {
		name, url, backend string
		wantErr, wantPing  bool
	}{
		{"no URL: memory", "", "memory", false, true},
		{"URL: redis", "redis://" + url + "/0", "redis", false, true},
		{"unreachable Redis still builds", "redis://" + down + "/0", "redis", false, false},
		{"bad URL", "http://nope", "", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lim, err := New(tc.url, Config{Prefix: newTestPrefix(t, c)})
			if (err != nil) != tc.wantErr {
				t.Fatalf("got error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			defer lim.Close()
			if lim.Backend() != tc.backend {
				t.Errorf("got backend %s, want %s", lim.Backend(), tc.backend)
			}
			if got := lim.API.Rate(); got.Limit != 600 || got.Period != time.Minute || lim.API.Policy() != "default" {
				t.Errorf("got API rate %+v policy %s, want 600/min default", got, lim.API.Policy())
			}
			if got := lim.Intake.Rate(); got.Limit != 100 || got.Period != time.Hour || lim.Intake.Policy() != "intake" {
				t.Errorf("got intake rate %+v policy %s, want 100/h intake", got, lim.Intake.Policy())
			}
			ctx := context.Background()
			if err := lim.Ping(ctx); (err == nil) != tc.wantPing {
				t.Errorf("got Ping %v, want ok=%v", err, tc.wantPing)
			}
			d := lim.API.Allow(ctx, "cred-"+uuid.NewString())
			if !d.Allowed || d.Degraded || d.Fallback == tc.wantPing {
				t.Errorf("got %+v, want admitted, counted in memory=%v", d, !tc.wantPing)
			}
			if tc.wantPing {
				if d.Remaining != 599 {
					t.Errorf("got remaining %d, want 599", d.Remaining)
				}
				if lim.Intake.Store().(interface{ Window() Window }).Window() != FixedClock ||
					lim.API.Store().(interface{ Window() Window }).Window() != Sliding {
					t.Errorf("got the wrong windows")
				}
			}
		})
	}
}
