package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// redisServer is a private redis-server child on a fixed port, killed and started again.
type redisServer struct {
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedis(t *testing.T, port int) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("no redis-server in PATH: install redis-server (apt-get install redis-server)")
	}
	r := &redisServer{port: port, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return r
		}
		if time.Now().After(deadline) {
			r.kill()
			t.Fatalf("redis-server on port %d does not answer", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *redisServer) kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestFaults_RedisKilled kills Redis (SIGKILL) for about three seconds under GET /me load and
// starts it again: zero 5xx, every answer keeps its rate-limit headers, the quota holds per
// process (REPLICAS=20: 600/20 = 30 a minute per key in memory), /readyz stays 200 and says
// degraded, and the outage is three log lines at most, not one per request.
func TestFaults_RedisKilled(t *testing.T) {
	port := freePort(t)
	rs := startRedis(t, port)
	t.Cleanup(func() { rs.kill() })
	var logs apitest.LogBuffer
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL, Log: &logs, Env: map[string]string{
		"REDIS_URL": fmt.Sprintf("redis://127.0.0.1:%d/0", port), "REPLICAS": "20", "WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, env)
	co := env.NewCompany(t)
	client := apitest.Client(t)
	if r := env.Do(t, apitest.Request{Method: "GET", Path: "/me", Key: co.Secret}); r.Status != 200 || r.Header.Get("RateLimit-Limit") != "600" {
		t.Fatalf("GET /me with Redis up: %d, RateLimit-Limit %q", r.Status, r.Header.Get("RateLimit-Limit"))
	}
	y := newTally()
	l := &loader{base: base, client: client, meWorkers: 6, y: y,
		secrets: newKeys(t, env, co, tenancy.KindSecret, 200, 25)}
	get := func(key, path string) (*http.Response, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		return client.Do(req)
	}

	ctx, cancel := context.WithCancel(context.Background())
	loadDone := make(chan struct{})
	go func() { l.run(ctx, t); close(loadDone) }()
	time.Sleep(500 * time.Millisecond)
	rs.kill()
	killed := time.Now()

	// During the outage: one key, hammered, meets its in-memory quota of 30 with headers.
	time.Sleep(300 * time.Millisecond)
	hammer := co.KeyWithScopes(t, "users:read")
	limited, admitted := 0, 0
	for range 40 {
		resp, err := get(hammer, "/api/public/v1/me")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case 200:
			admitted++
			if resp.Header.Get("RateLimit-Limit") != "30" {
				t.Errorf("in memory: RateLimit-Limit %q, want 30 (600 / REPLICAS 20)", resp.Header.Get("RateLimit-Limit"))
			}
		case 429:
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("429 in memory without Retry-After")
			}
		default:
			t.Errorf("hammered key: %d", resp.StatusCode)
		}
	}
	if admitted != 30 || limited != 10 {
		t.Errorf("one key, 40 requests during the outage: %d admitted, %d refused; want 30 and 10", admitted, limited)
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Checks map[string]string `json:"checks"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if resp.StatusCode != 200 || ready.Checks["redis"] != "degraded" {
		t.Errorf("/readyz during the outage: %d %v, want 200 with redis degraded", resp.StatusCode, ready.Checks)
	}

	time.Sleep(time.Until(killed.Add(3 * time.Second)))
	rs = startRedis(t, port)
	restarted := time.Now()
	time.Sleep(2 * time.Second) // the next probe finds it (ProbeEvery)
	cancel()
	<-loadDone
	t.Logf("Redis down for about 3 s; answers: %s", y)

	for status, n := range y.counts["me"] {
		if status != 200 && status != 429 {
			t.Errorf("GET /me answered %d %d times: want 200 or 429 only", status, n)
		}
	}
	if y.count("me", 200) == 0 {
		t.Fatalf("no successes: %s", y)
	}
	// The load ran through the outage: requests were answered 200 while Redis was down.
	during := y.where(func(a answer) bool { return a.status == 200 && a.start.After(killed) && a.end.Before(restarted) })
	t.Logf("%d answers 200 sent and answered while Redis was down", len(during))
	if len(during) == 0 {
		t.Errorf("no GET /me was sent and answered 200 while Redis was down: the load did not run during the fault")
	}
	if r := env.Do(t, apitest.Request{Method: "GET", Path: "/me", Key: co.Secret}); r.Status != 200 || r.Header.Get("RateLimit-Limit") != "600" {
		t.Errorf("GET /me after Redis came back: %d, RateLimit-Limit %q, want 600 (shared through Redis again)", r.Status, r.Header.Get("RateLimit-Limit"))
	}
	if n := logs.Lines("redis"); n < 2 || n > 3 {
		t.Errorf("%d log lines about Redis, want 2 or 3 (start, maybe a reminder, end):\n%s", n, logs.String())
	}
	if n := logs.Lines(`"level":"error"`); n > 2 {
		t.Errorf("%d error lines during a 3 s outage, want at most 2 (start and a reminder)", n)
	}
	if logs.Lines("reachable again") != 1 {
		t.Errorf("the outage's end was not logged:\n%s", logs.String())
	}
}
