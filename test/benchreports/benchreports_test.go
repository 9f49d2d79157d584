// Package benchreports holds the benchmarks of issue 24's "Numbers" for the reports and the
// search: the five reports (/reports/portfolio, renewals and cross-selling first page,
// pipeline, activity), the two commission reports (/reports/commissions,
// /reports/cancellation-liability) and GET /search at 1,000,000 contacts, 1,000,000 contracts
// and 2,000,000 commission entries in one company, for an admin key and an agent key (goals:
// reports p50 < 300 ms, search p50 < 50 ms, the agent within 1.3× of the admin). Its own
// package, one database per package: the seed is minutes of PostgreSQL's work and nothing else
// should share it. go tool task bench runs it once (-benchtime 1x); the benchmark seeds the
// company, then measures BENCH_REPORTS_ROUNDS rounds of every case in that one iteration. go
// test without -bench seeds nothing.
package benchreports

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// serve runs env's server on a loopback listener and returns the v1 base URL.
func serve(b *testing.B, env *apitest.Env) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = env.Server.ServeListener(ctx, ln, time.Second) }()
	b.Cleanup(cancel)
	return "http://" + ln.Addr().String() + app.V1Prefix
}

// get sends GET url with key and returns the status and the answer's body.
func get(b *testing.B, url, key string) (int, []byte) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	r, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		b.Fatal(err)
	}
	return r.StatusCode, body
}

// userKeys hands out keys bound to user, a new one every 500 requests (the 600/min quota).
type userKeys struct {
	co   *apitest.Company
	user operator.User
	key  string
	n    int
}

func (r *userKeys) next(b *testing.B) string {
	if r.n%500 == 0 {
		b.StopTimer() // issuing a key is setup, not the request
		r.key = r.co.UserKey(b, r.user)
		b.StartTimer()
	}
	r.n++
	return r.key
}

// envInt reads a positive number from the environment, else def.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// percentiles sorts lat and returns its p50 and p99.
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func uuidArray(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "{" + strings.Join(s, ",") + "}"
}

// loadavg is the first three fields of /proc/loadavg ("" where there is none).
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
