package faults

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestFaults_PostgresRestart restarts the cluster (fast shutdown: every connection gets 57P01,
// down for about two seconds) under GET /me on 8 connections and the lead intake on 4: zero
// 500s, every submission answered 201 or 503, and every 201 is in the database. The load runs
// through the outage (requests are sent while the database is down) and after it (successes),
// and the retries wait: requests stay in flight a second or more while it refuses them, and a
// 503 unavailable comes only after the retry budget is spent.
func TestFaults_PostgresRestart(t *testing.T) {
	const budget = 2 * time.Second
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL,
		Env: map[string]string{"DB_RETRY_BUDGET": budget.String(), "WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, env)
	co := env.NewCompany(t)
	l := &loader{base: base, client: apitest.Client(t), meWorkers: 8, intakeWorkers: 4, y: newTally(),
		secrets: newKeys(t, env, co, tenancy.KindSecret, 40, 500), pubs: newKeys(t, env, co, tenancy.KindPublishable, 40, 90)}

	// Warm up (the client's OpenAPI validator compiles the document on first use).
	if r := env.Do(t, apitest.Request{Method: "GET", Path: "/me", Key: co.Secret}); r.Status != 200 {
		t.Fatalf("GET /me: %d %s", r.Status, r.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	loadDone := make(chan struct{})
	go func() { l.run(ctx, t); close(loadDone) }()
	time.Sleep(time.Second)
	before := l.y.String()
	restarted := time.Now()
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	downAt := time.Now() // the postmaster is gone: nothing can succeed until upAt
	time.Sleep(time.Second)
	startAt := time.Now()
	if _, err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	upAt := time.Now()
	time.Sleep(2 * time.Second)
	cancel()
	<-loadDone
	t.Logf("before the restart: %s", before)
	t.Logf("PostgreSQL stopped in %s, back after %s; all answers: %s", downAt.Sub(restarted).Round(10*time.Millisecond),
		upAt.Sub(restarted).Round(10*time.Millisecond), l.y)

	for _, op := range []string{"me", "intake"} {
		for status, n := range l.y.counts[op] {
			ok := status == 503 || op == "me" && status == 200 || op == "intake" && status == 201
			if !ok {
				t.Errorf("%s answered %d %d times: want only success or 503", op, status, n)
			}
		}
	}
	if l.y.count("me", 200) == 0 || l.y.count("intake", 201) == 0 {
		t.Fatalf("the load got no successes: %s", l.y)
	}
	// The load ran through the outage: requests were sent from the fast shutdown (which ends
	// every session at once) until PostgreSQL was back, and more succeeded afterwards.
	sent := l.y.where(func(a answer) bool { return a.start.After(restarted) && a.start.Before(upAt) })
	recovered := l.y.where(func(a answer) bool { return a.success() && a.start.After(upAt) })
	// The retries waited: requests spent a second or more in flight while PostgreSQL surely
	// refused them (from shortly after the fast shutdown began, which ends every session at
	// once, until it was started again). Without retries each fails within milliseconds of
	// being sent (a 503 unavailable of its own).
	refusing := restarted.Add(200 * time.Millisecond)
	waiting := l.y.where(func(a answer) bool {
		from, to := a.start, a.end
		if from.Before(refusing) {
			from = refusing
		}
		if to.After(startAt) {
			to = startAt
		}
		return to.Sub(from) >= time.Second
	})
	waitedOK := 0
	for _, a := range waiting {
		if a.success() {
			waitedOK++
		}
	}
	t.Logf("%d requests sent during the outage; %d waited a second or more while PostgreSQL refused them (%d of those then succeeded); %d successes after it was back",
		len(sent), len(waiting), waitedOK, len(recovered))
	if len(sent) == 0 {
		t.Errorf("no request was sent during the outage: the load did not run during the fault")
	}
	if len(waiting) == 0 {
		t.Errorf("no request waited a second while PostgreSQL refused it: the retries did not wait")
	}
	if len(recovered) == 0 {
		t.Errorf("no request succeeded after PostgreSQL was back")
	}
	// A 503 unavailable is the retry budget spent: the request waited until less than one
	// backoff (tenancy.Backoff: at most 480 ms) was left of it.
	minWait := budget - 500*time.Millisecond
	early := l.y.where(func(a answer) bool {
		return a.status == 503 && a.code == "unavailable" && a.end.Sub(a.start) < minWait
	})
	for i, a := range early {
		if i == 3 {
			break
		}
		t.Errorf("%s %s answered 503 unavailable after %s", a.op, a.requestID, a.end.Sub(a.start).Round(time.Millisecond))
	}
	if len(early) > 0 {
		t.Errorf("%d answers 503 unavailable came before the retry budget was spent (want at least %s)", len(early), minWait)
	}

	assertStored(t, co.ID.String(), l.y.created)

	// Afterwards the server serves as before.
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/me", Key: co.Secret})
	if r.Status != 200 {
		t.Errorf("GET /me after the restart: %d %s", r.Status, r.Body)
	}
}

// assertStored fails t unless every e-mail of created is a lead of company in the database.
func assertStored(t *testing.T, company string, created []string) {
	t.Helper()
	db, err := sql.Open("pgx", ownerURL) // the superuser: RLS does not hide other companies
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored := map[string]bool{}
	rows, err := db.Query("SELECT email FROM leads WHERE company_id = $1 AND email IS NOT NULL", company)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		stored[e] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, e := range created {
		if !stored[e] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d submissions answered 201 are not in the database", lost, len(created))
	}
}
