// Package events tests the outbox: /events in commit order, /event-types, scopes, the purge.
package events

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// listedEvent is what the tests read of an Event.
type listedEvent struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	OccurredAt time.Time      `json:"occurredAt"`
	Data       map[string]any `json:"data"`
	Actor      struct {
		Type string `json:"type"`
	} `json:"actor"`
}

// writeRoute records one event per request and then waits a random moment before the commit,
// so transactions commit in another order than they inserted.
func writeRoute(v1 fiber.Router, m app.Middleware) {
	svc := events.NewService()
	v1.Post("/_test/events", m.Auth, func(c *fiber.Ctx) error {
		if err := svc.Record(c.UserContext(), "user.updated", fiber.Map{"n": c.Query("n")}); err != nil {
			return err
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		return c.SendStatus(204)
	})
}

func TestEvents_Feed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	extra := env.NewUser(t, a, "agent")

	var page apitest.Page[listedEvent]
	env.Do(t, apitest.Request{Path: "/events", Key: a.Secret}).Decode(t, &page)
	if len(page.Data) != 2 || page.Data[0].Type != "user.created" || page.Data[1].Data["id"] != extra.ID.String() {
		t.Fatalf("A's feed: %+v", page.Data)
	}
	if page.Data[0].Actor.Type != "operator" {
		t.Errorf("actor %q, want operator", page.Data[0].Actor.Type)
	}
	if page.Data[0].Data["email"] != a.Admin.Email {
		t.Errorf("data is not the User resource: %v", page.Data[0].Data)
	}
	cursor := page.Pagination.NextCursor

	env.Run(t, []apitest.Case{
		{Name: "B sees its own", Key: b.Secret, Path: "/events", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedEvent]
			r.Decode(t, &p)
			if len(p.Data) != 1 || p.Data[0].Data["id"] != b.Admin.ID.String() {
				t.Errorf("B's feed %s", r.Body)
			}
		}},
		{Name: "sandbox sees the twins", Key: a.TestSecret, Path: "/events", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedEvent]
			r.Decode(t, &p)
			if len(p.Data) != 2 || p.Data[0].Data["id"] != a.Admin.SandboxID.String() {
				t.Errorf("sandbox feed %s", r.Body)
			}
		}},
		{Name: "polling after the end is empty", Key: a.Secret, Path: "/events?cursor=" + cursor, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedEvent]
			r.Decode(t, &p)
			if len(p.Data) != 0 || p.Pagination.HasMore || p.Pagination.NextCursor == "" {
				t.Errorf("after the end: %s", r.Body)
			}
		}},
		{Name: "types filter", Key: a.Secret, Path: "/events?types=company.updated", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedEvent]
			r.Decode(t, &p)
			if len(p.Data) != 0 {
				t.Errorf("company.updated filter: %s", r.Body)
			}
		}},
		{Name: "since in the future", Key: a.Secret, Path: "/events?since=2999-01-01T00:00:00", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedEvent]
			r.Decode(t, &p)
			if len(p.Data) != 0 {
				t.Errorf("since 2999: %s", r.Body)
			}
		}},
		{Name: "since in the past", Key: a.Secret, Path: "/events?since=2020-01-01T00:00:00%2B01:00", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedEvent]
			r.Decode(t, &p)
			if len(p.Data) != 2 {
				t.Errorf("since 2020: %s", r.Body)
			}
		}},
		{Name: "without users:read the user events are hidden", Key: a.KeyWithScopes(t, "events:read"), Path: "/events", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[listedEvent]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("events of a scope the key lacks: %s", r.Body)
				}
			}},
		{Name: "cursor of another types filter", Key: a.Secret, Path: "/events?types=user.created&cursor=" + cursor, Status: 422},
		{Name: "unknown type", Key: a.Secret, Path: "/events?types=user.created,user.teleported", Status: 422, Problem: "validation_failed"},
		{Name: "bad since", Key: a.Secret, Path: "/events?since=yesterday", Status: 422, Problem: "validation_failed"},
		{Name: "bad limit", Key: a.Secret, Path: "/events?limit=500", Status: 422, Problem: "validation_failed"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "users:read"), Path: "/events", Status: 403, Problem: "insufficient_scope"},
		{Name: "no key", Path: "/events", Status: 401, Problem: "missing_credential"},
		{Name: "event types for any key", Key: a.KeyWithScopes(t, "leads:read"), Path: "/event-types", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var body struct {
					Data []events.Type `json:"data"`
				}
				r.Decode(t, &body)
				if len(body.Data) != len(events.Types) || body.Data[0].Scope == "" || body.Data[0].Description == "" {
					t.Errorf("event types %s", r.Body)
				}
			}},
	})
	// features changed by the operator reach both twins
	if _, err := env.Ops.SetFeatures(context.Background(), a.ID, []string{"leads", "customer_portal"}); err != nil {
		t.Fatal(err)
	}
	env.Do(t, apitest.Request{Path: "/events?cursor=" + cursor, Key: a.Secret}).Decode(t, &page)
	if len(page.Data) != 1 || page.Data[0].Type != "company.updated" {
		t.Errorf("after features: %+v", page.Data)
	}
}

// TestEvents_ConcurrentWritersPolledInCommitOrder: 1,000 writes from 20 goroutines, committing
// out of insertion order, while a poller follows nextCursor: it gets every event exactly once.
func TestEvents_ConcurrentWritersPolledInCommitOrder(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(writeRoute))
	a := env.NewCompany(t)
	var page apitest.Page[listedEvent]
	env.Do(t, apitest.Request{Path: "/events?types=user.updated", Key: a.Secret}).Decode(t, &page)
	cursor := page.Pagination.NextCursor

	const writers, each = 20, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := env.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/_test/events?n=%d-%d", w, i), Key: a.Secret})
				if r.Status != 204 {
					t.Errorf("write: %d %s", r.Status, r.Body)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	seen := map[string]int{}
	var order []string
	poll := func() {
		for {
			var p apitest.Page[listedEvent]
			r := env.Do(t, apitest.Request{Path: "/events?types=user.updated&limit=200&cursor=" + cursor, Key: a.Secret})
			if r.Status != 200 {
				t.Fatalf("poll: %d %s", r.Status, r.Body)
			}
			r.Decode(t, &p)
			for _, e := range p.Data {
				n := fmt.Sprint(e.Data["n"])
				seen[n]++
				order = append(order, n)
			}
			cursor = p.Pagination.NextCursor
			if !p.Pagination.HasMore {
				return
			}
		}
	}
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		default:
			time.Sleep(5 * time.Millisecond)
		}
		poll()
	}
	poll()
	if len(seen) != writers*each {
		t.Errorf("poller saw %d distinct events, want %d", len(seen), writers*each)
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("event %s seen %d times", n, c)
		}
	}
	// commit order: the database's sequence, which the feed follows
	db, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT data->>'n' FROM events WHERE company_id = $1 AND type = 'user.updated' ORDER BY seq`, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var bySeq []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		bySeq = append(bySeq, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(bySeq, " ") != strings.Join(order, " ") {
		t.Error("the feed's order differs from commit (seq) order")
	}
	var inserted []string
	rows2, err := db.Query(`SELECT data->>'n' FROM events WHERE company_id = $1 AND type = 'user.updated' ORDER BY id`, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	for rows2.Next() {
		var n string
		if err := rows2.Scan(&n); err != nil {
			t.Fatal(err)
		}
		inserted = append(inserted, n)
	}
	if err := rows2.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(inserted, " ") == strings.Join(bySeq, " ") {
		t.Log("note: this run committed in insertion order; the test proves less than it can")
	}
}

func TestEvents_Purge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	a := env.NewCompany(t)
	owner, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	tx, err := env.AppDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', $1, true)", a.ID.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, company_id, type, occurred_at, data, actor)
		VALUES (gen_random_uuid(), $1, 'user.updated', now() - interval '31 days', '{}', '{"type":"system"}')`, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec(`UPDATE job_runs SET last_run_at = '-infinity'`); err != nil {
		t.Fatal(err)
	}
	// two replicas at once: one purges, the other finds the job done
	var wg sync.WaitGroup
	results := make([]bool, 2)
	var deleted int64
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := env.Server.Purger().RunOnce(ctx)
			if err != nil {
				t.Error(err)
			}
			results[i] = r.Ran
			deleted += r.Events
		}()
	}
	wg.Wait()
	if results[0] == results[1] {
		t.Errorf("replicas ran %v: want exactly one", results)
	}
	if deleted < 1 {
		t.Errorf("purged %d events, want the old one", deleted)
	}
	var left int
	if err := owner.QueryRow(`SELECT count(*) FROM events WHERE occurred_at < now() - interval '30 days'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d old events left", left)
	}
	var p apitest.Page[listedEvent]
	env.Do(t, apitest.Request{Path: "/events", Key: a.Secret}).Decode(t, &p)
	if len(p.Data) != 1 {
		t.Errorf("recent events must stay: %d", len(p.Data))
	}
}
