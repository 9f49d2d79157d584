//go:build soak

package faults

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestSoak runs mixed traffic (intake, GET /me, GET /leads, POST /leads with Idempotency-Key)
// at about 80% of the rate measured in a calibration phase for SOAK_DURATION (default 10m) and
// reports resident memory, goroutines, open files and database connections at start (after
// warm-up) and end, and p50/p99 per minute. The server runs in this process, so the figures
// include the load generator. go tool task soak.
func TestSoak(t *testing.T) {
	dur := 10 * time.Minute
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		var err error
		if dur, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL, Env: map[string]string{"WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, env)
	co := env.NewCompany(t)
	// Secret keys (600 a minute, sliding) are used again after one pass over all of them, which
	// takes minutes (checked below); publishable keys (100 an hour per clock hour) never are:
	// enough of them are issued after the calibration, so that none is issued while the soak is
	// measured. Running out used to end the soak early and silently (a "10-minute" run stopped
	// after 3.5); now next issues another, and a key it cannot issue fails the test.
	secrets := newKeys(t, env, co, tenancy.KindSecret, 200, 550)
	secrets.cycle = true
	pubs := newKeys(t, env, co, tenancy.KindPublishable, 200, 95)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var seq atomic.Int64
	one := func(ctx context.Context) (int, bool) {
		n := seq.Add(1)
		var req *http.Request
		switch n % 4 {
		case 0:
			key, err := pubs.next()
			if err != nil {
				t.Errorf("intake: %v", err)
				return 0, false
			}
			req, _ = http.NewRequestWithContext(ctx, "POST", base+"/api/public/v1/leads/intake",
				strings.NewReader(fmt.Sprintf(`{"firstName":"Erika","lastName":"Soak","email":"soak%d@example.org"}`, n)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", key)
			req.Header.Set("Origin", "https://example.com")
		default:
			key, _ := secrets.next()
			switch n % 4 {
			case 1:
				req, _ = http.NewRequestWithContext(ctx, "GET", base+"/api/public/v1/me", nil)
			case 2:
				req, _ = http.NewRequestWithContext(ctx, "GET", base+"/api/public/v1/leads?limit=20", nil)
			case 3:
				req, _ = http.NewRequestWithContext(ctx, "POST", base+"/api/public/v1/leads",
					strings.NewReader(fmt.Sprintf(`{"firstName":"Max","lastName":"Soak","email":"w%d@example.org"}`, n)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprintf("soak-%d", n))
			}
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, true // status 0: no answer (fails the soak unless the drive was ending)
		}
		resp.Body.Close()
		return resp.StatusCode, true
	}

	// Calibrate: 16 closed-loop workers for 15 s give the maximum. The paced phases get 32
	// workers, so that latency spikes (a shared machine) do not hold the rate below the target.
	maxRate := drive(t, "calibration", 15*time.Second, 16, 0, one, nil)
	target := 0.8 * maxRate
	warmFor := 30 * time.Second
	t.Logf("maximum %.0f req/s; soak at %.0f req/s for %s after %s of warm-up", maxRate, target, dur, warmFor)
	// A pass over the secret keys must outlast their one-minute window twice over.
	secretRate := target * 3 / 4
	if need := int(secretRate*120/float64(secrets.perKey)) + 1; need > len(secrets.list) {
		secrets.add(t, need-len(secrets.list))
	}
	intakes := int64(target*(warmFor+dur).Seconds()/4*1.2) + 1000 // 20 % and some to spare
	if short := intakes - pubs.left(); short > 0 {
		began := time.Now()
		n := int((short + pubs.perKey - 1) / pubs.perKey)
		pubs.add(t, n)
		t.Logf("issued %d more publishable keys in %s", n, time.Since(began).Round(time.Millisecond))
	}

	// The samples are of the server, not of the load generator's connections: with the idle
	// keep-alive connections open, a slower last minute (more requests in flight, so more
	// connections) showed 18 more goroutines at the end than at the start (3 per connection).
	quiet := func() snapshot {
		client.CloseIdleConnections()
		for deadline := time.Now().Add(10 * time.Second); env.Server.App.Server().GetOpenConnectionsCount() > 0; {
			if time.Now().After(deadline) {
				t.Logf("still %d HTTP connections open", env.Server.App.Server().GetOpenConnectionsCount())
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return sample(t)
	}

	warm := drive(t, "warm-up", warmFor, 32, target, one, func(_ int, lat []time.Duration, statuses map[int]int) {
		t.Logf("warm-up: %d requests, p50 %s, p99 %s, statuses %v", len(lat), pct(lat, 50), pct(lat, 99), statuses)
	})
	start := quiet()
	t.Logf("warm-up %.0f req/s; start: %s", warm, start)
	reached := drive(t, "soak", dur, 32, target, one, func(minute int, lat []time.Duration, statuses map[int]int) {
		t.Logf("minute %d: %d requests, p50 %s, p99 %s, statuses %v", minute, len(lat), pct(lat, 50), pct(lat, 99), statuses)
		for s, n := range statuses {
			if s != 200 && s != 201 {
				t.Errorf("minute %d: %d answers %d", minute, n, s)
			}
		}
	})
	end := quiet()
	t.Logf("soak %.0f req/s (target %.0f)", reached, target)
	t.Logf("start: %s", start)
	t.Logf("end:   %s", end)
	grew := func(what string, from, to, slack int) {
		if to > from*11/10+slack {
			t.Errorf("%s grew %d → %d (more than 10 %%)", what, from, to)
		}
	}
	grew("resident memory (kB)", start.rss, end.rss, 0)
	// A few goroutines and descriptors come and go (timers, the pools' health checks).
	grew("goroutines", start.goroutines, end.goroutines, 5)
	grew("open files", start.fds, end.fds, 5)
	grew("database connections", start.dbConns, end.dbConns, 0)
}

type snapshot struct{ rss, goroutines, fds, dbConns int }

func (s snapshot) String() string {
	return fmt.Sprintf("RSS %d kB, goroutines %d, open files %d, database connections %d", s.rss, s.goroutines, s.fds, s.dbConns)
}

func sample(t *testing.T) snapshot {
	runtime.GC()
	var s snapshot
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			fmt.Sscan(strings.TrimSpace(v), &s.rss)
		}
	}
	s.goroutines = runtime.NumGoroutine()
	fds, _ := os.ReadDir("/proc/self/fd")
	s.fds = len(fds)
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND usename = 'brokerdesk_app'").Scan(&s.dbConns); err != nil {
		t.Fatal(err)
	}
	return s
}

// drive sends one() from workers for d, paced to rate requests a second (0: as fast as they go),
// calls perMinute with each minute's latencies and statuses (and the rest at the end), and
// returns the rate reached. It fails the test when one() ran out of keys before d was over.
func drive(t *testing.T, phase string, d time.Duration, workers int, rate float64, one func(context.Context) (int, bool),
	perMinute func(int, []time.Duration, map[int]int)) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	// Pacing by schedule: request i is due at begin + i/rate. A ticker drops the ticks no worker
	// waits for (all busy, or the process not scheduled on a loaded machine), and a 10-minute
	// run at "167 req/s" reached 138. Behind schedule the workers catch up, but by at most one
	// second's worth: a backlog beyond that is dropped rather than fired as a burst.
	var due atomic.Int64 // nanoseconds after begin of the next request
	interval := int64(0)
	if rate > 0 {
		interval = int64(float64(time.Second) / rate)
	}
	pace := func(begin time.Time) bool {
		if interval == 0 {
			return true
		}
		now := int64(time.Since(begin))
		at := due.Add(interval) - interval
		if at < now-int64(time.Second) {
			due.CompareAndSwap(at+interval, now-int64(time.Second)+interval)
		}
		if wait := time.Duration(at - now); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	var mu sync.Mutex
	var lat []time.Duration
	statuses := map[int]int{}
	minute, total := 1, 0
	begin := time.Now()
	flush := func() {
		if perMinute != nil {
			perMinute(minute, lat, statuses)
		}
		total += len(lat)
		lat, statuses = nil, map[int]int{}
		minute++
	}
	var ranOut atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if !pace(begin) {
					return
				}
				s := time.Now()
				status, ok := one(ctx)
				if !ok {
					ranOut.Store(true)
					cancel()
					return
				}
				if ctx.Err() != nil {
					return // cut off by the end of the phase: not an answer
				}
				mu.Lock()
				lat = append(lat, time.Since(s))
				statuses[status]++
				if time.Since(begin) >= time.Duration(minute)*time.Minute {
					flush()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(begin)
	if len(lat) > 0 {
		flush()
	}
	if ranOut.Load() {
		t.Errorf("%s: keys ran out after %s of %s", phase, took.Round(time.Second), d)
	}
	return float64(total) / took.Seconds()
}

func pct(l []time.Duration, p int) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(100 * time.Microsecond)
}
