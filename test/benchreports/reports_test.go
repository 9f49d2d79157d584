package benchreports

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The goals (issue 24, "Numbers").
const (
	reportGoalMS = 300.0
	searchGoalMS = 50.0
	agentRatio   = 1.3
)

// BenchmarkReportsAndSearch: the five reports, the two commission reports and GET /search on
// one company of BENCH_REPORTS_CONTACTS contacts (default 1,000,000), as many contracts and
// twice as many commission entries (seed_test.go),
// for the admin's key (visibility all) and agent A's (own_and_delegated: A owns ~1% of the
// contacts, agent B ~0.9% delegates to A), over HTTP on a loopback listener, one request after
// the other. Sub-benchmarks:
//   - reports: GET /reports/portfolio (asOf today, by type group), /reports/renewals (first
//     page, the first quarter of 2027), /reports/cross-selling (first page), /reports/pipeline
//     and /reports/activity (2026); /reports/commissions of 2026 by month and by insurer
//     (~285,000 entries of 2,000,000), /reports/cancellation-liability on 2026-12-31;
//     BENCH_REPORTS_ROUNDS rounds (default 20);
//   - search: GET /search?q= a surname (Müller, 1 in 64 contacts), a policy number typed with
//     other separators than stored, a rare word (a profession of ~10 contacts and a few
//     documents' text); five times as many rounds.
//
// A sub-benchmark stops early, after at least three rounds, once it has run
// BENCH_REPORTS_BUDGET_S seconds (default 300). BENCH_REPORTS_PAUSE=1 stops after the seed and
// keeps the database open for EXPLAIN by hand (it prints the database, the company and the users).
//
// Within a sub-benchmark the requests alternate, admin and agent of every case, in an order
// that rotates every round, so both sides of a ratio meet the same minutes of a shared
// machine. Each case reports its p50 and p99 (ms) and the agent/admin ratio of the p50s.
// BENCH_EXPLAIN=1 then prints EXPLAIN (ANALYZE, BUFFERS) of every statement of every case as
// the server sent it, for each credential (run with -v) and again with jit = off
// (docs/benchmarks.md, "Reports and search at a million").
func BenchmarkReportsAndSearch(b *testing.B) {
	n := envInt(b, "BENCH_REPORTS_CONTACTS", 1_000_000)
	rounds := envInt(b, "BENCH_REPORTS_ROUNDS", 20)
	// A report that takes seconds would make 20 rounds an hour: past the budget a
	// sub-benchmark stops after its third round.
	budget := time.Duration(envInt(b, "BENCH_REPORTS_BUDGET_S", 300)) * time.Second

	var mu sync.Mutex
	var traced []tracedQuery
	tracing := false
	env := apitest.New(b, app.WithSQLTrace(func(q string, args any) {
		mu.Lock()
		defer mu.Unlock()
		if tracing && bookStatement.MatchString(q) {
			a, _ := args.([]any)
			traced = append(traced, tracedQuery{q, a})
		}
	}))
	ctx := context.Background()
	co := env.NewCompany(b)
	bk := &book{company: co.ID}
	if err := env.InsertUsers(ctx, co.ID, "agent", 100); err != nil {
		b.Fatal(err)
	}
	var err error
	if bk.agents, err = env.UserIDs(ctx, co.ID, "agent"); err != nil {
		b.Fatal(err)
	}
	err = env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		// Insurers are shared by every company; the bench's own twenty.
		if _, err := tx.ExecContext(ctx, `INSERT INTO insurers (id, vu_number, name, created_at)
			SELECT gen_random_uuid(), 'BR' || lpad(i::text, 2, '0'), 'Bench Versicherung ' || i || ' AG', now()
			FROM generate_series(1, 20) i ON CONFLICT (vu_number) DO NOTHING`); err != nil {
			return err
		}
		if err := scanIDs(ctx, tx, &bk.insurers, `SELECT id FROM insurers WHERE vu_number LIKE 'BR__' ORDER BY vu_number`); err != nil {
			return err
		}
		// Two stages between the company's "new" and "converted".
		if _, err := tx.ExecContext(ctx, `INSERT INTO lead_stages (id, company_id, key, name, color, position, is_final, created_at, updated_at)
			VALUES (gen_random_uuid(), $1, 'contacted', 'Kontaktiert', '#f59e0b', 100, false, now(), now()),
			       (gen_random_uuid(), $1, 'offer', 'Angebot', '#a855f7', 200, false, now(), now())`, co.ID); err != nil {
			return err
		}
		// The operator's policy admits every company's rows: name the company.
		if err := scanIDs(ctx, tx, &bk.stages, `SELECT id FROM lead_stages WHERE company_id = $1 ORDER BY position`, co.ID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT id FROM lead_stages WHERE company_id = $1 AND key = 'converted'`, co.ID).Scan(&bk.convert)
	})
	if err != nil {
		b.Fatal(err)
	}
	agentA := operator.User{ID: bk.agents[25]}
	co.Delegate(b, bk.agents[30], agentA.ID, nil)

	start := time.Now()
	seed(b, env, bk, n)
	for _, stmt := range []string{"VACUUM ANALYZE contacts, contracts, leads, lead_stages, tasks, appointments, documents, insurers, users, delegations, commission_statements, commission_entries"} {
		if _, err := env.OwnerDB.ExecContext(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	// Write the seed's dirty pages out now, not while the first case is measured.
	if _, err := env.OwnerDB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		b.Logf("CHECKPOINT (needs a superuser or pg_checkpoint): %v", err)
	}
	var contacts, contracts, leads, seenContacts, seenContracts int
	var policy string
	err = env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM contacts WHERE company_id = $3),
				(SELECT count(*) FROM contracts WHERE company_id = $3), (SELECT count(*) FROM leads WHERE company_id = $3),
				(SELECT count(*) FROM contacts WHERE owner_id IN ($1, $2)),
				(SELECT count(*) FROM contracts k JOIN contacts c ON c.id = k.contact_id WHERE c.owner_id IN ($1, $2))`,
			agentA.ID, bk.agents[30], co.ID).Scan(&contacts, &contracts, &leads, &seenContacts, &seenContracts); err != nil {
			return err
		}
		// A policy number agent A may see, in the style "HV 00012 3456".
		return tx.QueryRowContext(ctx, `SELECT k.policy_number FROM contracts k JOIN contacts c ON c.id = k.contact_id
			WHERE c.owner_id = $1 AND k.policy_number LIKE 'HV %' ORDER BY k.policy_number LIMIT 1`, agentA.ID).Scan(&policy)
	})
	if err != nil {
		b.Fatal(err)
	}
	// Typed as a person reads it off a letter: other separators than stored.
	typed := strings.ReplaceAll(strings.TrimPrefix(policy, "HV "), " ", "")
	typed = "HV-" + typed[:3] + "." + typed[3:6] + "." + typed[6:]
	fmt.Printf("reports bench: %d contacts, %d contracts, %d leads; agent A sees %d contacts (%.2f%%), %d contracts; seeded in %s; load %s\n",
		contacts, contracts, leads, seenContacts, 100*float64(seenContacts)/float64(max(contacts, 1)), seenContracts,
		time.Since(start).Round(time.Second), loadavg())

	if os.Getenv("BENCH_REPORTS_PAUSE") != "" {
		// For plan work by hand: the seeded database stays open (psql as the owner, then SET
		// ROLE brokerdesk_app and the app.* settings) until the process is stopped.
		fmt.Printf("reports bench: paused; database %s company %s admin %s agent %s (delegated by %s) policy %q\n",
			env.OwnerURL, co.ID, co.Admin.ID, agentA.ID, bk.agents[30], typed)
		select {}
	}
	base := serve(b, env)
	type credential struct {
		name string
		user operator.User
		vis  string
		keys *userKeys
	}
	creds := []*credential{
		{name: "admin", user: co.Admin, vis: "all"},
		{name: "agent", user: agentA, vis: "own_and_delegated"},
	}
	for _, who := range creds {
		who.keys = &userKeys{co: co, user: who.user}
	}
	type benchCase struct{ name, url string }
	groups := []struct {
		name   string
		goal   float64
		rounds int
		cases  []benchCase
	}{
		{"reports", reportGoalMS, rounds, []benchCase{
			{"portfolio", base + "/reports/portfolio"},
			{"renewals", base + "/reports/renewals?from=2027-01-01&to=2027-03-31"},
			{"cross-selling", base + "/reports/cross-selling"},
			{"pipeline", base + "/reports/pipeline?from=2026-01-01&to=2026-12-31"},
			{"activity", base + "/reports/activity?from=2026-01-01&to=2026-12-31"},
			{"commissions-month", base + "/reports/commissions?from=2026-01-01&to=2026-12-31&groupBy=month"},
			{"commissions-insurer", base + "/reports/commissions?from=2026-01-01&to=2026-12-31&groupBy=insurer"},
			{"liability", base + "/reports/cancellation-liability?asOf=2026-12-31"},
		}},
		{"search", searchGoalMS, 5 * rounds, []benchCase{
			{"name", base + "/search?q=" + url.QueryEscape("Müller")},
			{"policy", base + "/search?q=" + url.QueryEscape(typed)},
			{"rare", base + "/search?q=Hufschmied"},
		}},
	}
	type item struct {
		who  *credential
		name string
		url  string
	}
	for _, g := range groups {
		var items []item
		for _, c := range g.cases {
			for _, who := range creds {
				items = append(items, item{who, c.name + "-" + who.name, c.url})
			}
		}
		b.Run(g.name, func(b *testing.B) {
			// One warm-up round (plans cached, pages in memory), then the measured ones.
			for _, it := range items {
				if st, body := get(b, it.url, it.who.keys.next(b)); st != 200 {
					b.Fatalf("%s: %d %s", it.name, st, body)
				}
			}
			lat := make([][]time.Duration, len(items))
			b.ResetTimer()
			started := time.Now()
			for b.Loop() {
				for round := range g.rounds {
					if round >= 3 && time.Since(started) > budget {
						break
					}
					for j := range items {
						k := (j + round) % len(items)
						key := items[k].who.keys.next(b)
						t0 := time.Now()
						st, body := get(b, items[k].url, key)
						lat[k] = append(lat[k], time.Since(t0))
						if st != 200 {
							b.Fatalf("%s: %d %s", items[k].name, st, body)
						}
					}
				}
			}
			b.StopTimer()
			p50s := map[string]float64{}
			for k, it := range items {
				p50, p99 := percentiles(lat[k])
				p50s[it.name] = ms(p50)
				b.ReportMetric(ms(p50), it.name+"-p50-ms")
				b.ReportMetric(ms(p99), it.name+"-p99-ms")
				fmt.Printf("reports bench: %-22s p50 %8.2f ms  p99 %8.2f ms  (%d requests)\n", it.name, ms(p50), ms(p99), len(lat[k]))
			}
			for _, c := range g.cases {
				admin, agent := p50s[c.name+"-admin"], p50s[c.name+"-agent"]
				ratio := agent / admin
				b.ReportMetric(ratio, c.name+"-agent/admin")
				verdict := "met"
				if admin >= g.goal || agent >= g.goal*agentRatio || ratio > agentRatio {
					verdict = "MISSED"
				}
				fmt.Printf("reports bench: %-14s admin %8.2f ms, agent %8.2f ms (%.2f×): goal p50 < %.0f ms, agent ≤ %.1f×: %s\n",
					c.name, admin, agent, ratio, g.goal, agentRatio, verdict)
			}
			fmt.Printf("reports bench: %s done, load %s\n", g.name, loadavg())
		})
	}

	if os.Getenv("BENCH_EXPLAIN") == "" {
		return
	}
	trace := func(f func()) []tracedQuery {
		mu.Lock()
		tracing, traced = true, nil
		mu.Unlock()
		f()
		mu.Lock()
		defer mu.Unlock()
		tracing = false
		return traced
	}
	for _, g := range groups {
		for _, c := range g.cases {
			for _, who := range creds {
				for _, q := range trace(func() { get(b, c.url, who.keys.next(b)) }) {
					b.Logf("EXPLAIN (ANALYZE, BUFFERS) of %s %s:\n%s\n%s", c.name, who.name, q.sql,
						env.Explain(b, co.ID, who.user.ID, who.vis, q.sql, q.args))
					// What the plan would be without JIT (every big statement was JIT-compiled
					// in the first run, 0.3-1.5 s a statement).
					b.Logf("the same with jit = off (%s %s):\n%s", c.name, who.name,
						env.Explain(b, co.ID, who.user.ID, who.vis, q.sql, q.args, "SET LOCAL jit = off"))
				}
			}
		}
	}
}

// bookStatement says a traced statement reads the book (not the credential's lookup, the
// transaction's set_config or the rate limiter's bookkeeping).
var bookStatement = regexp.MustCompile(`(?i)\b(from|join)\s+("?public"?\.)?"?(contacts|contracts|leads|lead_stages|documents|tasks|appointments|insurers|commission_entries)"?\b`)

type tracedQuery struct {
	sql  string
	args []any
}

// scanIDs runs query and appends the uuid of every row to ids.
func scanIDs(ctx context.Context, tx *sql.Tx, ids *[]uuid.UUID, query string, args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return err
		}
		*ids = append(*ids, id)
	}
	return rows.Err()
}
