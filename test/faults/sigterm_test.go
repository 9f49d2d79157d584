package faults

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestFaults_SIGTERM sends SIGTERM to `brokerdesk serve` under GET /me and intake load, with one
// POST /leads held inside the server (waiting for a row lock) at that moment. The promises:
//   - the held request completes with its real answer (201, stored) although the listener
//     closed while it waited;
//   - every request the server began (its request log names the request's X-Request-Id) reaches
//     the client with the status the server logged: a server that drops in-flight requests
//     fails here, where the test used to accept any transport error;
//   - the load ran into the shutdown: answers arrived after the signal;
//   - none is 5xx, every intake 201 is stored, the process exits within SHUTDOWN_TIMEOUT.
//
// Requests the server never began (sent after the listener closed) fail to connect: that is
// the load balancer's cue, not an answer, and the only transport errors allowed.
func TestFaults_SIGTERM(t *testing.T) {
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL, Env: map[string]string{"WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Server.Close)
	const shutdownTimeout = 5 * time.Second
	// LOG_LEVEL=info: one line per request with its id and status, the server's own account.
	p := env.StartServe(t, map[string]string{"SHUTDOWN_TIMEOUT": shutdownTimeout.String(), "WEBHOOK_WORKERS": "0", "LOG_LEVEL": "info"})
	co, held := env.NewCompany(t), env.NewCompany(t)
	y := newTally()
	l := &loader{base: p.URL, client: apitest.Client(t), meWorkers: 8, intakeWorkers: 4, y: y,
		secrets: newKeys(t, env, co, tenancy.KindSecret, 40, 500), pubs: newKeys(t, env, co, tenancy.KindPublishable, 40, 90)}
	// Warm up: the process's first requests and the client's validator.
	for range 3 {
		if a, _ := l.do(context.Background(), "warm-up", mustGet(t, p.URL+"/api/public/v1/me", co.Secret)); a.status != 200 {
			t.Fatalf("GET /me: %d", a.status)
		}
	}

	// The held request: POST /leads of a second company whose row a SQL session locks, so the
	// lead's foreign key check waits inside the request transaction until the session ends.
	owner, err := sql.Open("pgx", ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	lock, err := owner.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.Exec("SELECT 1 FROM companies WHERE id = $1 FOR UPDATE", held.ID); err != nil {
		t.Fatal(err)
	}
	type reply struct {
		status int
		body   []byte
		err    error
	}
	heldReply := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequest("POST", p.URL+"/api/public/v1/leads",
			strings.NewReader(`{"firstName":"Held","lastName":"Inflight","email":"held-inflight@example.org"}`))
		req.Header.Set("Authorization", "Bearer "+held.Secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := apitest.Client(t).Do(req)
		if err != nil {
			heldReply <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		heldReply <- reply{resp.StatusCode, b, err}
	}()
	waitForLockWait(t, owner)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loadDone := make(chan struct{})
	go func() { l.run(ctx, t); close(loadDone) }()
	time.Sleep(1500 * time.Millisecond)
	before := y.answers()
	signalled := time.Now()
	exited := make(chan bool, 1)
	go func() { exited <- p.Terminate(shutdownTimeout + 2*time.Second) }()

	// The listener closes while the held request still waits: it is in flight at the shutdown.
	addr := strings.TrimPrefix(p.URL, "http://")
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Since(signalled) > shutdownTimeout {
			t.Fatalf("the listener still accepts connections %s after SIGTERM", shutdownTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case r := <-heldReply:
		t.Fatalf("the held request was answered before its lock was released: %d %s %v", r.status, r.body, r.err)
	default:
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	r := <-heldReply
	if r.err != nil || r.status != 201 {
		t.Errorf("the request in flight at SIGTERM: %d %s %v, want its 201", r.status, r.body, r.err)
	}

	ok := <-exited
	took := time.Since(signalled)
	cancel()
	<-loadDone
	t.Logf("SIGTERM after %d answers; exit after %s; answers in all: %s", before, took.Round(time.Millisecond), y)
	if !ok {
		t.Fatalf("the process did not exit within SHUTDOWN_TIMEOUT %s (+2 s):\n%s", shutdownTimeout, p.Output())
	}
	if took > shutdownTimeout+time.Second {
		t.Errorf("exit took %s, want within SHUTDOWN_TIMEOUT %s", took, shutdownTimeout)
	}
	for _, op := range []string{"me", "intake"} {
		for status, n := range y.counts[op] {
			if status >= 500 {
				t.Errorf("%s answered %d %d times", op, status, n)
			}
		}
	}
	if before == 0 {
		t.Fatalf("no answers before SIGTERM: %s", y)
	}

	// Every request the server began got its answer, with the status the server logged.
	logged := requestLog(t, p.Output())
	dropped, errsBefore := 0, 0
	for _, a := range y.where(func(answer) bool { return true }) {
		st, began := logged[a.requestID]
		switch {
		case began && a.status != st:
			dropped++
			if dropped <= 5 {
				t.Errorf("%s %s: the server answered %d, the client got %d (0: no answer)", a.op, a.requestID, st, a.status)
			}
		case !began && a.status == 0 && a.end.Before(signalled):
			errsBefore++
		case !began && a.status > 0:
			t.Errorf("%s %s: answered %d but not in the server's request log", a.op, a.requestID, a.status)
		}
	}
	if dropped > 0 {
		t.Errorf("%d requests the server began did not reach the client with their status", dropped)
	}
	if errsBefore > 0 {
		t.Errorf("%d transport errors before the signal", errsBefore)
	}
	after := y.where(func(a answer) bool { return a.status > 0 && a.end.After(signalled) })
	refused := y.where(func(a answer) bool { return a.status == 0 })
	t.Logf("%d answers arrived after the signal, %d requests were refused (sent after the listener closed)", len(after), len(refused))
	if len(after) == 0 {
		t.Errorf("no answer arrived after the signal: the load was not running into the shutdown")
	}
	if r.status == 201 {
		assertStored(t, held.ID.String(), []string{"held-inflight@example.org"})
	}
	assertStored(t, co.ID.String(), y.created)
}

// waitForLockWait returns once a request transaction of the app role waits for a row lock.
func waitForLockWait(t *testing.T, owner *sql.DB) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		var waiting int
		if err := owner.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND usename = $1 AND wait_event_type = 'Lock'`, migrations.RoleApp).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held request never waited for the company row")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// requestLog reads the server's request lines (JSON, LOG_LEVEL=info): request id -> status.
func requestLog(t *testing.T, out string) map[string]int {
	t.Helper()
	m := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
			Status    int    `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "request" {
			m[line.RequestID] = line.Status
		}
	}
	if len(m) == 0 {
		t.Fatalf("no request lines in the server's log:\n%.2000s", out)
	}
	return m
}

func mustGet(t *testing.T, url, key string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return req
}
