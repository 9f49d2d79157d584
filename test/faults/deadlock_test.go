package faults

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestFaults_Deadlock makes PostgreSQL detect a real deadlock (40P01) inside a request
// transaction and checks that app/retry.go runs the request again: 200 and the change stored,
// one rerun in the metrics; with a retry budget no longer than the time PostgreSQL takes to
// detect the deadlock (deadlock_timeout), the same collision answers 503 unavailable with
// Retry-After and stores nothing.
//
// Requests run at READ COMMITTED, where PostgreSQL never raises a serialization failure
// (40001), so the collision is a lock-order deadlock between PATCH /leads/{id} and a concurrent
// SQL session. The request locks the lead (SELECT … FOR UPDATE), updates it and records
// lead.updated, whose foreign key to companies takes a KEY SHARE lock on the company row. The
// session first locks the company row FOR UPDATE (so the event insert waits), and once the
// request waits, asks for the lead: a cycle. The request began waiting first, so its
// deadlock_timeout ends first and PostgreSQL aborts it; the session raises its own
// deadlock_timeout so that it never is the one aborted.
func TestFaults_Deadlock(t *testing.T) {
	owner, err := sql.Open("pgx", ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	var detect string
	if err := owner.QueryRow("SHOW deadlock_timeout").Scan(&detect); err != nil {
		t.Fatal(err)
	}
	detectAfter, err := time.ParseDuration(detect)
	if err != nil {
		t.Fatalf("deadlock_timeout %q: %v", detect, err)
	}

	t.Run("rerun", func(t *testing.T) {
		collide(t, owner, "5s", func(t *testing.T, r collision) {
			if r.status != 200 {
				t.Fatalf("PATCH during the deadlock: %d %s, want 200 after a rerun", r.status, r.body)
			}
			if r.lastName != "Rerun" {
				t.Errorf("stored last name %q, want the patch's", r.lastName)
			}
			if r.reruns != 1 {
				t.Errorf("brokerdesk_db_request_reruns_total %d, want 1", r.reruns)
			}
			if !strings.Contains(r.scrape, `brokerdesk_http_requests_total{method="PATCH",route="/api/public/v1/leads/:leadId",status="200"} 1`) {
				t.Errorf("the request is not counted once as 200:\n%s", grep(r.scrape, "http_requests_total"))
			}
		})
	})
	// The deadlock is detected deadlock_timeout after the request began waiting, so a budget of
	// exactly that long is always spent when the error arrives: no rerun, 503.
	t.Run("beyond the budget", func(t *testing.T) {
		collide(t, owner, detectAfter.String(), func(t *testing.T, r collision) {
			if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"code":"unavailable"`) {
				t.Fatalf("PATCH during the deadlock: %d Retry-After %q %s, want 503 unavailable with Retry-After",
					r.status, r.header.Get("Retry-After"), r.body)
			}
			if r.lastName != "Before" {
				t.Errorf("stored last name %q: the failed request changed the lead", r.lastName)
			}
			if r.reruns != 0 {
				t.Errorf("brokerdesk_db_request_reruns_total %d, want 0", r.reruns)
			}
		})
	})
}

// collision is what a PATCH that met a deadlock got, and what it left behind.
type collision struct {
	status   int
	header   http.Header
	body     []byte
	lastName string // of the lead afterwards
	reruns   int
	scrape   string
}

// collide runs the deadlock against a server of its own (metrics start at 0) whose retry budget
// is budget, and hands the outcome to check.
func collide(t *testing.T, owner *sql.DB, budget string, check func(*testing.T, collision)) {
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL,
		Env: map[string]string{"DB_RETRY_BUDGET": budget, "WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, env)
	co := env.NewCompany(t)
	created := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: co.Secret,
		Body: map[string]any{"firstName": "Dora", "lastName": "Before", "email": "dora@example.org"}})
	if created.Status != 201 {
		t.Fatalf("create lead: %d %s", created.Status, created.Body)
	}
	var lead struct{ ID string }
	created.Decode(t, &lead)
	deadlocks := func() int {
		var n int
		// Each statement is a transaction of its own, so each reads fresh statistics.
		if err := owner.QueryRow("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := deadlocks()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // guards against a hang only
	defer cancel()
	session, err := owner.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Rollback()
	// The session is never the one aborted (the owner connects as superuser, who may set it).
	if _, err := session.ExecContext(ctx, "SET LOCAL deadlock_timeout = '60s'"); err != nil {
		t.Fatal(err)
	}
	if _, err := session.ExecContext(ctx, "SELECT 1 FROM companies WHERE id = $1 FOR UPDATE", co.ID); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		status int
		header http.Header
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "PATCH", base+"/api/public/v1/leads/"+lead.ID,
			strings.NewReader(`{"lastName":"Rerun"}`))
		req.Header.Set("Authorization", "Bearer "+co.Secret)
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := apitest.Client(t).Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, resp.Header, b, err}
	}()

	// Wait until the request holds the lead and its event insert waits for the company row.
	for {
		var waiting int
		if err := owner.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND usename = $1 AND wait_event_type = 'Lock'
			AND query LIKE 'INSERT INTO events %'`, migrations.RoleApp).Scan(&waiting); err != nil {
			t.Fatalf("waiting for the request to block: %v", err)
		}
		if waiting == 1 {
			break
		}
		select {
		case a := <-answered:
			t.Fatalf("the request finished without waiting for the session: %d %s %v", a.status, a.body, a.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	// Close the cycle: the session waits for the request's lead lock until PostgreSQL aborts
	// the request; a rerun then waits for the session's locks, which it releases at once.
	if _, err := session.ExecContext(ctx, "SELECT 1 FROM leads WHERE id = $1 FOR UPDATE", lead.ID); err != nil {
		t.Fatalf("the session was aborted, not the request: %v", err)
	}
	if err := session.Rollback(); err != nil {
		t.Fatal(err)
	}
	a := <-answered
	if a.err != nil {
		t.Fatal(a.err)
	}
	// A real deadlock, counted by PostgreSQL (its statistics arrive within a second or so).
	for deadlocks() == before {
		select {
		case <-ctx.Done():
			t.Fatal("pg_stat_database counts no deadlock")
		case <-time.After(50 * time.Millisecond):
		}
	}

	got := env.Do(t, apitest.Request{Path: "/leads/" + lead.ID, Key: co.Secret})
	var after struct{ LastName string }
	got.Decode(t, &after)
	rec := httptest.NewRecorder()
	env.Server.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	scrape := rec.Body.String()
	m := regexp.MustCompile(`(?m)^brokerdesk_db_request_reruns_total (\d+)$`).FindStringSubmatch(scrape)
	if m == nil {
		t.Fatalf("no brokerdesk_db_request_reruns_total in the scrape")
	}
	var reruns int
	fmt.Sscan(m[1], &reruns)
	t.Logf("budget %s: %d, reruns %d, %s", budget, a.status, reruns, a.body)
	check(t, collision{status: a.status, header: a.header, body: a.body, lastName: after.LastName, reruns: reruns, scrape: scrape})
}

// grep returns the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
