// Package bench holds the Go benchmarks of the conventions (go tool task bench runs them):
// the cost of the v1 middleware chain beside a bare Fiber handler, and keyset pagination on a
// million rows, page 1 against page 1,000. They are not run by go tool task test.
package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// serve runs handler app on a loopback listener and returns its base URL.
func serve(b *testing.B, a *fiber.App) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = a.Listener(ln) }()
	b.Cleanup(func() { _ = a.Shutdown() })
	return "http://" + ln.Addr().String()
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func do(b *testing.B, method, url, key, idem string) {
	req, _ := http.NewRequest(method, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	r, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != 200 {
		b.Fatalf("%s %s: %d", method, url, r.StatusCode)
	}
}

// keyRing hands out keys, a new one every 500 requests, so no key reaches the 600/min quota
// however many iterations b.Loop runs (b.N is not known before the loop).
type keyRing struct {
	co   *apitest.Company
	keys []string
	n    int
}

func (r *keyRing) next(b *testing.B) string {
	if r.n%500 == 0 {
		b.StopTimer() // issuing a key is setup, not the request
		r.keys = append(r.keys, r.co.KeyWithScopes(b, "*"))
		b.StartTimer()
	}
	r.n++
	return r.keys[len(r.keys)-1]
}

// BenchmarkChain: one request through a bare Fiber handler, through auth + tenancy + rate limit
// (GET), and through those plus Idempotency-Key (POST with a fresh key each time). The handler
// is the same empty JSON answer everywhere; the difference is the chain.
func BenchmarkChain(b *testing.B) {
	noop := func(c *fiber.Ctx) error { return c.JSON(fiber.Map{}) }
	bare := fiber.New(fiber.Config{DisableStartupMessage: true})
	bare.Get("/noop", noop)
	bareURL := serve(b, bare)

	env := apitest.New(b, app.WithTestRoutes(func(v1 fiber.Router, m app.Middleware) {
		v1.Get("/_test/noop", m.Auth, m.RateLimit, noop)
		v1.Post("/_test/noop", m.Auth, m.RateLimit, m.Idempotent, noop)
	}))
	co := env.NewCompany(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = env.Server.ServeListener(ctx, ln, time.Second) }()
	b.Cleanup(cancel)
	apiURL := "http://" + ln.Addr().String() + app.V1Prefix + "/_test/noop"

	b.Run("bare-fiber", func(b *testing.B) {
		for b.Loop() {
			do(b, "GET", bareURL+"/noop", "", "")
		}
	})
	b.Run("auth+tenancy+ratelimit", func(b *testing.B) {
		ring := &keyRing{co: co}
		for b.Loop() {
			do(b, "GET", apiURL, ring.next(b), "")
		}
	})
	b.Run("auth+tenancy+ratelimit+idempotency", func(b *testing.B) {
		ring := &keyRing{co: co}
		for b.Loop() {
			do(b, "POST", apiURL, ring.next(b), uuid.NewString())
		}
	})
}

// BenchmarkUsersPage: GET /users?limit=50 on a company with 1,000,000 users, the first page
// against page 1,000 (rows 49,951 to 50,000), reached by its cursor. Keyset pagination makes
// both cost the same; OFFSET would make page 1,000 scan 50,000 rows.
func BenchmarkUsersPage(b *testing.B) {
	env := apitest.New(b)
	ctx := context.Background()
	co := env.NewCompany(b)
	start := time.Now()
	for i := range 20 {
		if err := env.InsertUsers(ctx, co.ID, fmt.Sprintf("m%d-", i), 50_000); err != nil {
			b.Fatal(err)
		}
	}
	owner, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.ExecContext(ctx, "ANALYZE users"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded 1,000,000 users in %s", time.Since(start).Round(time.Second))
	ring := &keyRing{co: co}
	var mu sync.Mutex
	key := func() string { mu.Lock(); defer mu.Unlock(); return ring.next(b) }

	// walk to page 1,000
	cursor := ""
	for range 999 {
		r := env.Do(b, apitest.Request{Path: "/users?limit=50&cursor=" + cursor, Key: key()})
		var p struct {
			Pagination struct{ NextCursor string } `json:"pagination"`
		}
		r.Decode(b, &p)
		cursor = p.Pagination.NextCursor
	}
	for _, tc := range []struct{ name, path string }{
		{"page-1", "/users?limit=50"},
		{"page-1000", "/users?limit=50&cursor=" + cursor},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				r := env.Do(b, apitest.Request{Path: tc.path, Key: key()})
				lat = append(lat, time.Since(t0))
				if r.Status != 200 {
					b.Fatalf("%d %s", r.Status, r.Body)
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
