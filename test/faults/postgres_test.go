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
// 500s, every submission answered 201 or 503, and every 201 is in the database.
func TestFaults_PostgresRestart(t *testing.T) {
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL,
		Env: map[string]string{"DB_RETRY_BUDGET": "2s", "WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, env)
	co := env.NewCompany(t)
	l := &loader{base: base, client: apitest.Client(t), meWorkers: 8, intakeWorkers: 4, y: newTally(),
		secrets: newKeys(t, co, tenancy.KindSecret, 40, 500), pubs: newKeys(t, co, tenancy.KindPublishable, 40, 90)}

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
	stopped := time.Since(restarted)
	time.Sleep(time.Second) // down: connections refused
	if _, err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	down := time.Since(restarted)
	time.Sleep(2 * time.Second)
	cancel()
	<-loadDone
	t.Logf("before the restart: %s", before)
	t.Logf("PostgreSQL stopped in %s, back after %s; all answers: %s", stopped.Round(10*time.Millisecond),
		down.Round(10*time.Millisecond), l.y)

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
	if l.y.count("me", 503)+l.y.count("intake", 503) == 0 {
		// Not an error in itself (the retries may absorb the whole restart), but then the
		// retries must have waited: the server cannot have answered during the outage.
		t.Logf("no 503: every request outlived the outage within DB_RETRY_BUDGET")
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
