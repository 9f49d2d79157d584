// Package ratelimit tests the API quota across two server processes sharing Redis.
package ratelimit

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// exchange is one request and its answer, kept to be checked against the OpenAPI document.
type exchange struct {
	req  *http.Request
	resp *http.Response
	body []byte
}

// do sends GET /me with key to the server at url.
func do(t *testing.T, url, key string) exchange {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/public/v1/me", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{req, r, b}
}

// check validates the exchange against the OpenAPI document.
func (x exchange) check(t *testing.T) { t.Helper(); apitest.CheckHTTP(t, x.req, nil, x.resp, x.body) }

// get is do with the answer checked at once.
func get(t *testing.T, url, key string) *http.Response {
	t.Helper()
	x := do(t, url, key)
	x.check(t)
	return x.resp
}

// TestRateLimit_TwoProcessesShareRedis: one credential gets exactly 600 requests per sliding
// minute across both processes; the 601st is 429 with Retry-After; the headers count down; a
// second credential is unaffected; a 401 costs nothing.
func TestRateLimit_TwoProcessesShareRedis(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	redisURL := apitest.RedisURL(t)
	a := env.NewCompany(t)
	b := env.NewCompany(t)
	p1 := env.StartProcess(t, map[string]string{"REDIS_URL": redisURL})
	p2 := env.StartProcess(t, map[string]string{"REDIS_URL": redisURL})

	// 401s do not count
	for range 5 {
		if r := get(t, p1, "sk_live_unknown"); r.StatusCode != 401 || r.Header.Get("RateLimit-Remaining") != "" {
			t.Fatalf("401: %d remaining %q", r.StatusCode, r.Header.Get("RateLimit-Remaining"))
		}
	}
	// All 601 requests of a must fit into the sliding minute: their answers are checked against
	// the OpenAPI document after the last one (validation takes time on a busy machine).
	var timed []exchange
	defer func() {
		for _, x := range timed {
			x.check(t)
		}
	}()
	// the first 100 in order, alternating processes: Remaining counts down from 599
	for i := range 100 {
		srv := []string{p1, p2}[i%2]
		x := do(t, srv, a.Secret)
		timed = append(timed, x)
		r := x.resp
		if r.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, r.StatusCode)
		}
		if got, want := r.Header.Get("RateLimit-Remaining"), strconv.Itoa(599-i); got != want {
			t.Fatalf("request %d: RateLimit-Remaining %s, want %s", i+1, got, want)
		}
		if r.Header.Get("RateLimit-Limit") != "600" || r.Header.Get("RateLimit-Reset") == "" ||
			r.Header.Get("RateLimit-Policy") == "" || r.Header.Get("RateLimit") == "" {
			t.Fatalf("request %d: headers %v", i+1, r.Header)
		}
	}
	// the rest concurrently from both processes: exactly 500 more are admitted
	var mu sync.Mutex
	ok, limited := 0, 0
	var retryAfter string
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				srv := []string{p1, p2}[(w+i)%2]
				x := do(t, srv, a.Secret)
				r := x.resp
				mu.Lock()
				timed = append(timed, x)
				switch r.StatusCode {
				case 200:
					ok++
				case 429:
					limited++
					retryAfter = r.Header.Get("Retry-After")
				default:
					t.Errorf("status %d", r.StatusCode)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok != 500 || limited != 100 {
		t.Errorf("after the first 100: %d admitted, %d limited; want 500 and 100", ok, limited)
	}
	if n, err := strconv.Atoi(retryAfter); err != nil || n < 1 || n > 60 {
		t.Errorf("Retry-After %q", retryAfter)
	}
	last := do(t, p2, a.Secret)
	timed = append(timed, last)
	r := last.resp
	if r.StatusCode != 429 || r.Header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("601st: %d remaining %q", r.StatusCode, r.Header.Get("RateLimit-Remaining"))
	}
	if r := get(t, p1, b.Secret); r.StatusCode != 200 || r.Header.Get("RateLimit-Remaining") != "599" {
		t.Errorf("second credential: %d remaining %q", r.StatusCode, r.Header.Get("RateLimit-Remaining"))
	}
}
