package ratelimit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/ulule/limiter/v3"
)

func lines(s *syncBuffer) []string { return strings.Split(strings.TrimSpace(s.String()), "\n") }

// TestLimits_RedisDownCountsInMemory: with Redis unreachable the quota still holds, in memory,
// divided by REPLICAS, and the answers carry its numbers.
func TestLimits_RedisDownCountsInMemory(t *testing.T) {
	t.Parallel()
	_, down := closedRedis(t)
	var logs syncBuffer
	lim, err := New("redis://"+down+"/0", Config{API: limiter.Rate{Limit: 9, Period: time.Minute},
		Intake: limiter.Rate{Limit: 6, Period: time.Hour}, Replicas: 3, Log: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		l    *Limiter
		want int64 // per process: limit / replicas
	}{{lim.API, 3}, {lim.Intake, 2}} {
		key := uuid.NewString()
		for i := range tc.want {
			d := tc.l.Allow(ctx, key)
			if !d.Allowed || !d.Fallback || d.Degraded || d.Limit != tc.want || d.Remaining != tc.want-i-1 {
				t.Fatalf("%s request %d: got %+v, want admitted in memory, limit %d, remaining %d", tc.l.Policy(), i+1, d, tc.want, tc.want-i-1)
			}
		}
		if d := tc.l.Allow(ctx, key); d.Allowed || !d.Fallback || d.RetryAfterSeconds() < 1 {
			t.Errorf("%s over the in-memory quota: got %+v, want refused with Retry-After", tc.l.Policy(), d)
		}
	}
	if !lim.Degraded() {
		t.Errorf("Degraded() = false during the outage")
	}
	if got := lines(&logs); len(got) != 1 || !strings.Contains(got[0], "redis unreachable") {
		t.Errorf("got log lines %q, want the one line of the outage's start", got)
	}
}

// TestHealth_LogsBounded: an outage logs once when it starts, at most every LogEvery while it
// lasts however many requests fail, and once when it ends; only one request per ProbeEvery tries
// Redis.
func TestHealth_LogsBounded(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	h := newHealth(zerolog.New(&logs))
	now := time.Unix(1_700_000_000, 0)
	h.now = func() time.Time { return now }
	var changes []bool
	h.onChange = func(down bool) { changes = append(changes, down) }

	if h.skip() {
		t.Fatal("skip before any failure")
	}
	began := now.Add(-time.Millisecond) // in flight when Redis died
	h.failed(errFake)
	h.ok(began)
	if !h.down.Load() {
		t.Fatal("a call that began before the outage ended it")
	}
	probes := 0
	for range 95 { // 95 s of outage, 1000 requests a second
		for range 1000 {
			if !h.skip() {
				probes++
				h.failed(errFake)
			}
		}
		now = now.Add(time.Second)
	}
	if probes < 90 || probes > 100 {
		t.Errorf("%d requests tried Redis in 95 s, want about one a second", probes)
	}
	h.ok(now)
	h.ok(now)
	got := lines(&logs)
	// start, reminders at 30 s, 60 s, 90 s, end
	if len(got) != 5 || !strings.Contains(got[0], "redis unreachable") || !strings.Contains(got[1], "still unreachable") ||
		!strings.Contains(got[4], "reachable again") {
		t.Errorf("got %d log lines, want 5 (start, three reminders, end):\n%s", len(got), strings.Join(got, "\n"))
	}
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Errorf("got outage changes %v, want [true false]", changes)
	}
	if h.skip() {
		t.Errorf("skip after the outage ended")
	}
}

var errFake = fakeErr("dial tcp: connection refused")

type fakeErr string

func (e fakeErr) Error() string { return string(e) }
