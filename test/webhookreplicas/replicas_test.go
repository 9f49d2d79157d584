// Package webhookreplicas runs webhook delivery across several `brokerdesk serve` processes on
// one database (its own, so no other test's workers take part): every event is delivered at
// least once, also when a process is killed with SIGKILL in the middle of deliveries or shut
// down gracefully while it delivers.
package webhookreplicas

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// counter is the receiver: deliveries per webhook-id. Each answer takes delay, so that
// deliveries are in flight when a process goes away.
type counter struct {
	mu     sync.Mutex
	seen   map[string]int
	total  int
	delay  time.Duration
	secret string
	bad    int // deliveries whose signature did not verify
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	time.Sleep(c.delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	if wh, err := standardwebhooks.NewWebhook(c.secret); err != nil || wh.Verify(body, r.Header) != nil {
		c.bad++
		w.WriteHeader(400)
		return
	}
	c.seen[r.Header.Get("webhook-id")]++
	c.total++
}

func (c *counter) stats(ids []string) (missing, duplicates, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		switch n := c.seen[id]; {
		case n == 0:
			missing++
		case n > 1:
			duplicates += n - 1
		}
	}
	return missing, duplicates, c.total
}

// insertEvents records n lead.created events of company in transactions of 50, as the app role
// pinned to the company (the outbox as writes fill it), and returns their ids.
func insertEvents(t *testing.T, env *apitest.Env, company uuid.UUID, n int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		batch := min(50, n-len(ids))
		err := env.Pinned(context.Background(), company, func(tx *sql.Tx) error {
			rows, err := tx.Query(`INSERT INTO events (id, company_id, type, occurred_at, data, actor)
				SELECT gen_random_uuid(), $1, 'lead.created', now(), jsonb_build_object('n', i), '{"type":"system"}'
				FROM generate_series(1, $2) i RETURNING id::text`, company, batch)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// waitAll waits until every id arrived at least once, or fails after timeout.
func waitAll(t *testing.T, c *counter, ids []string, timeout time.Duration, phase string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		missing, dups, total := c.stats(ids)
		if missing == 0 {
			t.Logf("%s: %d events all delivered; %d duplicate deliveries (%d requests in all so far)", phase, len(ids), dups, total)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d events never delivered within %s", phase, missing, len(ids), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestWebhooks_Replicas(t *testing.T) {
	env := apitest.New(t)
	co := env.NewCompany(t)
	rcv := &counter{seen: map[string]int{}, delay: 5 * time.Millisecond}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints", Key: co.Secret,
		Body: map[string]any{"url": srv.URL, "events": []string{"lead.created"}}})
	if r.Status != 201 {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	var ep struct{ Secret string }
	r.Decode(t, &ep)
	rcv.mu.Lock()
	rcv.secret = ep.Secret
	rcv.mu.Unlock()

	// JOBS_RESCUE_AFTER: how soon a killed process's running deliveries go to another (the
	// minimum above the 30 s job timeout; river's rescuer looks every 30 s).
	extra := map[string]string{"WEBHOOK_WORKERS": "8", "JOBS_RESCUE_AFTER": "31s"}
	p1, p2 := env.StartServe(t, extra), env.StartServe(t, extra)

	all := insertEvents(t, env, co.ID, 1000)
	waitAll(t, rcv, all, 4*time.Minute, "two processes")

	// SIGKILL one process while deliveries run.
	rcv.mu.Lock()
	rcv.delay = 40 * time.Millisecond
	rcv.mu.Unlock()
	ids := insertEvents(t, env, co.ID, 1000)
	start := time.Now()
	for {
		_, _, total := rcv.stats(nil)
		if total >= len(all)+150 || time.Since(start) > time.Minute {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	p1.Kill()
	t.Logf("killed one process after %d of the second 1000 deliveries", func() int { _, _, n := rcv.stats(nil); return n - len(all) }())
	all = append(all, ids...)
	waitAll(t, rcv, all, 4*time.Minute, "after SIGKILL")

	// SIGTERM the other while it delivers, with a third process started: the running deliveries
	// finish (or go back to the queue) and the third delivers the rest.
	_ = env.StartServe(t, extra)
	ids = insertEvents(t, env, co.ID, 500)
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
		if _, _, total := rcv.stats(nil); total >= len(all)+100 {
			break
		}
	}
	if !p2.Terminate(25 * time.Second) {
		t.Errorf("SIGTERM: the process did not exit within 25 s:\n%s", p2.Output())
	}
	all = append(all, ids...)
	waitAll(t, rcv, all, 4*time.Minute, "after SIGTERM")

	if rcv.bad > 0 {
		t.Errorf("%d deliveries did not verify", rcv.bad)
	}
}
