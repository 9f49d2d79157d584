package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

// newTestRedis returns a client of the tests' Redis (test/testsvc.RedisURL: TEST_REDIS_URL,
// else 127.0.0.1:6379 when it answers, else a private redis-server). No Redis is a failure,
// never a skip.
func newTestRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	url, err := testsvc.RedisURL(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("Redis URL %q: %v", url, err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newTestPrefix returns a key prefix no other test (or parallel run) uses, and deletes its keys
// when the test ends.
func newTestPrefix(tb testing.TB, c *redis.Client) string {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, tb.Name())
	p := "rltest:" + name + ":" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, "{"+p+":*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return p
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// backend builds a store of one window kind; now nil means the store's own clock.
type backend struct {
	name string
	new  func(t testing.TB, w Window, now func() time.Time) Store
}

var memoryBackend = backend{"memory", func(_ testing.TB, w Window, now func() time.Time) Store {
	var opts []StoreOption
	if now != nil {
		opts = append(opts, WithClock(now))
	}
	if w == Sliding {
		return NewMemorySlidingStore(opts...)
	}
	return NewMemoryFixedStore(opts...)
}}

var redisBackend = backend{"redis", func(t testing.TB, w Window, now func() time.Time) Store {
	c := newTestRedis(t)
	p := newTestPrefix(t, c)
	var opts []StoreOption
	if now != nil {
		opts = append(opts, WithClock(now))
	}
	if w == Sliding {
		return NewRedisSlidingStore(c, p, opts...)
	}
	return NewRedisFixedStore(c, p, opts...)
}}

var backends = []backend{memoryBackend, redisBackend}

// eachBackend runs test as a parallel subtest per backend, so every behaviour is checked on
// memory and on Redis alike.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

// eachBackendWindow runs test as a parallel subtest per backend and window kind.
func eachBackendWindow(t *testing.T, test func(t *testing.T, b backend, w Window)) {
	for _, b := range backends {
		for _, w := range windows {
			t.Run(b.name+" "+w.String(), func(t *testing.T) {
				t.Parallel()
				test(t, b, w)
			})
		}
	}
}

// t0 is a fake "now": 2026-03-02 10:20:00.5 UTC, inside a clock hour and off a second boundary.
var t0 = time.Date(2026, 3, 2, 10, 20, 0, 500_000_000, time.UTC)

func mustTake(tb testing.TB, s Store, key string, n int64, limit int64, period time.Duration) Decision {
	tb.Helper()
	d, err := s.Take(context.Background(), key, n, rateOf(limit, period))
	if err != nil {
		tb.Fatalf("Take(%q, %d): %v", key, n, err)
	}
	return d
}
