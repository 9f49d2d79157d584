package benchemail

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The words searched: rare is in about 1 message in 1,000 (~100 of 100,000), common in 1 in
// 10. Neither is in any subject, so the share of matching messages is what the seed says.
const (
	rareWord   = "Elementarschadenklausel"
	commonWord = "Kündigung"
)

// BenchmarkEmailThreadSearch: GET /email-threads?q= (issue 21: p50 < 50 ms at 100,000
// messages in the company). One company, EMAIL_BENCH_MESSAGES messages (default 100,000) in a
// fifth as many threads (1 to 9 messages each) over three mailboxes: a shared one and the
// personal ones of agents A and B, a third of the threads each. 3,000 contacts owned in turn
// by A, B and the admin; four threads in five are linked to one contact (its inbound
// messages; the contact's owner does not depend on the mailbox). Agent A sees the shared
// mailbox, its own, and B's threads linked to A's contacts (~75% of the threads). Cases:
// q=<rare word>, q=<common word> and no q (the plain list, for comparison), as the admin's
// key (visibility all) and A's, alternating in an order that rotates every round;
// EMAIL_BENCH_ROUNDS rounds (default 100) in the one iteration (-benchtime 1x).
// BENCH_EXPLAIN=1 prints EXPLAIN (ANALYZE, BUFFERS) of each case's list statement as ent sent
// it (run with -v).
func BenchmarkEmailThreadSearch(b *testing.B) {
	n := envInt(b, "EMAIL_BENCH_MESSAGES", 100_000)
	rounds := envInt(b, "EMAIL_BENCH_ROUNDS", 100)
	threads := max(n/5, 1)
	const contacts = 3000

	var mu sync.Mutex
	var traced []tracedQuery
	tracing := false
	env := apitest.New(b, app.WithSQLTrace(func(q string, args any) {
		mu.Lock()
		defer mu.Unlock()
		if tracing && strings.Contains(q, `FROM "email_threads"`) && strings.Contains(q, "ORDER BY") {
			a, _ := args.([]any)
			traced = append(traced, tracedQuery{q, a})
		}
	}))
	ctx := context.Background()
	co := env.NewCompany(b, "emails")
	agentA, agentB := env.NewUser(b, co, "agent"), env.NewUser(b, co, "agent")
	var boxes []uuid.UUID
	for i, owner := range []*uuid.UUID{nil, &agentA.ID, &agentB.ID} {
		m, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID,
			Email: fmt.Sprintf("postfach%d@makler-bench.test", i), IMAPURL: "imap://127.0.0.1:1143", SMTPURL: "smtp://127.0.0.1:1025",
			Username: "bench", Password: "geheim", OwnerID: owner, Shared: owner == nil})
		if err != nil {
			b.Fatal(err)
		}
		boxes = append(boxes, m.ID)
	}
	// Paused: serving starts the jobs, whose periodic sync would try the made-up servers.
	if _, err := env.OwnerDB.ExecContext(ctx, `UPDATE mailboxes SET sync_state = 'paused' WHERE company_id = $1`, co.ID); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	seedThreads(b, env, co.ID, []uuid.UUID{agentA.ID, agentB.ID, co.Admin.ID}, boxes, contacts, threads)
	var msgs, links, rare, common int
	if err := env.OwnerDB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM emails WHERE company_id = $1),
			(SELECT count(*) FROM email_links WHERE company_id = $1),
			(SELECT count(*) FROM emails WHERE company_id = $1 AND search_text LIKE '%' || lower($2) || '%'),
			(SELECT count(*) FROM emails WHERE company_id = $1 AND search_text LIKE '%' || lower($3) || '%')`,
		co.ID, rareWord, commonWord).Scan(&msgs, &links, &rare, &common); err != nil {
		b.Fatal(err)
	}
	if _, err := env.OwnerDB.ExecContext(ctx, "VACUUM ANALYZE contacts, mailboxes, email_threads, emails, email_links"); err != nil {
		b.Fatal(err)
	}
	// Write the seed's dirty pages out now, not while the first case is measured.
	if _, err := env.OwnerDB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		b.Logf("CHECKPOINT (needs a superuser or pg_checkpoint): %v", err)
	}
	fmt.Printf("email search bench: %d messages, %d threads, %d links, %d contacts; %q in %d messages, %q in %d; seeded in %s; load %s\n",
		msgs, threads, links, contacts, rareWord, rare, commonWord, common, time.Since(start).Round(time.Second), loadavg())

	base := serve(b, env) + "/email-threads"
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
	cases := []struct{ name, url string }{
		{"q=rare", base + "?q=" + url.QueryEscape(rareWord)},
		{"q=common", base + "?q=" + url.QueryEscape(commonWord)},
		{"no-q", base},
	}
	type item struct {
		who  *credential
		name string
		url  string
	}
	var items []item
	for _, who := range creds {
		who.keys = &userKeys{co: co, user: who.user}
		for _, c := range cases {
			items = append(items, item{who, who.name + "-" + c.name, c.url})
		}
	}
	// One warm-up round (plans cached, pages in memory), then the measured ones.
	for _, it := range items {
		if st, body := call(b, "GET", it.url, it.who.keys.next(b), "", ""); st != 200 {
			b.Fatalf("%s: %d %s", it.name, st, body)
		}
	}
	lat := make([][]time.Duration, len(items))
	b.ResetTimer()
	for b.Loop() {
		for round := range rounds {
			for j := range items {
				k := (j + round) % len(items)
				key := items[k].who.keys.next(b)
				t0 := time.Now()
				st, body := call(b, "GET", items[k].url, key, "", "")
				lat[k] = append(lat[k], time.Since(t0))
				if st != 200 {
					b.Fatalf("%s: %d %s", items[k].name, st, body)
				}
			}
		}
	}
	b.StopTimer()
	for k, it := range items {
		p50, p99 := percentiles(lat[k])
		b.ReportMetric(ms(p50), it.name+"-p50-ms")
		b.ReportMetric(ms(p99), it.name+"-p99-ms")
		fmt.Printf("email search bench: %-14s p50 %7.2f ms  p99 %7.2f ms  (%d requests)\n", it.name, ms(p50), ms(p99), len(lat[k]))
	}
	fmt.Printf("email search bench: load after %s\n", loadavg())

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
	for _, who := range creds {
		for _, c := range cases {
			for _, q := range trace(func() { call(b, "GET", c.url, who.keys.next(b), "", "") }) {
				b.Logf("EXPLAIN (ANALYZE, BUFFERS) of %s %s:\n%s\n%s", who.name, c.name, q.sql,
					env.Explain(b, co.ID, who.user.ID, who.vis, q.sql, q.args))
				b.Logf("the same with jit = off:\n%s", env.Explain(b, co.ID, who.user.ID, who.vis, q.sql, q.args, "SET LOCAL jit = off"))
				if v, ok := ownMailbox(q.sql); ok {
					b.Logf("with jit = off and the thread's own mailbox_id in the ent rule (no self-join):\n%s\n%s", v,
						env.Explain(b, co.ID, who.user.ID, who.vis, v, q.args, "SET LOCAL jit = off"))
				}
			}
		}
	}
}

type tracedQuery struct {
	sql  string
	args []any
}

// seedThreads writes the company's contacts (as the operator role), threads, messages and
// links (as the app role pinned to the company, as the sync writes them) in SQL, 2,000 threads
// a statement. Ids are md5 of the company and the row's number, so messages find their thread
// and links their message without a lookup. Bodies are German business mail of 400–900
// characters; a reply quotes the first message of its thread.
func seedThreads(b *testing.B, env *apitest.Env, company uuid.UUID, owners, boxes []uuid.UUID, contacts, threads int) {
	b.Helper()
	ctx := context.Background()
	seedContacts(b, env, company, owners, contacts)
	const batch = 2000
	for from := 1; from <= threads; from += batch {
		to := min(from+batch-1, threads)
		err := env.Pinned(ctx, company, func(tx *sql.Tx) error {
			// thread t: mailbox t % 3, k = 1 + (t*31) % 9 messages three hours apart, a contact
			// unless t % 5 = 0.
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO email_threads (id, company_id, created_at, updated_at, mailbox_id, subject, subject_key, last_message_at, message_count)
				SELECT md5($1::uuid::text || 't' || t)::uuid, $1, ts, ts + (k - 1) * interval '3 hours', ($2::uuid[])[1 + t % 3], subj, lower(subj),
				       ts + (k - 1) * interval '3 hours', k
				FROM (SELECT t, 1 + (t * 31) % 9 AS k, timestamptz '2025-01-01' + t * interval '25 minutes' AS ts,
				        (ARRAY['Ihre Hausratversicherung','Schadenmeldung Wasserschaden','Beitragsanpassung zum 01.01.','Termin zur Jahresberatung',
				               'Unterlagen Kfz-Versicherung','Änderung der Bankverbindung','Angebot Berufsunfähigkeitsversicherung','Rückfrage zum Antrag',
				               'Police Wohngebäudeversicherung','Nachtrag zur Haftpflicht','Beitragsrechnung','Vertragsübersicht',
				               'Adressänderung','Fragen zur Rentenversicherung','Zahnzusatzversicherung','Reiseversicherung für den Urlaub'])[1 + t % 16]
				          || ' (Vorgang ' || (100000 + t) || ')' AS subj
				      FROM generate_series($3::int, $4::int) t) s`, company, uuidArray(boxes), from, to); err != nil {
				return fmt.Errorf("threads: %w", err)
			}
			// message j of thread t: inbound from the contact (or a stranger) when j is odd,
			// else our answer; h decides the words searched.
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO emails (id, company_id, created_at, updated_at, version, thread_id, mailbox_id, direction, status, message_id,
				                    in_reply_to, "references", from_address, from_name, "to", cc, bcc, subject, text_body, search_text, sent_at)
				SELECT md5($1::uuid::text || 'e' || t || '.' || j)::uuid, $1, at, at, 1, md5($1::uuid::text || 't' || t)::uuid, box,
				       CASE WHEN j % 2 = 1 THEN 'inbound' ELSE 'outbound' END, CASE WHEN j % 2 = 1 THEN 'received' ELSE 'sent' END,
				       'b' || t || '.' || j || '@bench.test', CASE WHEN j > 1 THEN 'b' || t || '.' || (j - 1) || '@bench.test' ELSE '' END,
				       '[]', fa, '', jsonb_build_array(jsonb_build_object('email', ta)), '[]', '[]', subj, body,
				       lower(subj || ' ' || fa || ' ' || ta || ' ' || body), at
				FROM (SELECT t, j, at, box, subj, fa, ta,
				        'Sehr geehrte Damen und Herren,' || E'\n\n' ||
				        (ARRAY['anbei erhalten Sie die Unterlagen zu Ihrer Versicherung.','bitte senden Sie uns eine Kopie Ihres Personalausweises.',
				               'der Schaden vom letzten Wochenende wurde der Versicherung gemeldet.','wir haben den Beitrag für das kommende Jahr neu berechnet.',
				               'können wir nächste Woche einen Termin zur Beratung vereinbaren?','die Police für Ihr Fahrzeug liegt im Anhang.',
				               'vielen Dank für Ihre Nachricht, wir melden uns in Kürze.','die Bankverbindung wurde geändert, bitte prüfen Sie die neuen Daten.'])[1 + (h / 10) % 8]
				        || ' ' ||
				        (ARRAY['Der Gutachter meldet sich bei Ihnen.','Die Rechnung des Handwerkers reichen wir weiter.','Bitte unterschreiben Sie das Formular.',
				               'Der Versicherer hat den Antrag angenommen.','Die Frist endet am Monatsende.','Rufen Sie uns gern an.'])[1 + (h / 80) % 6]
				        || CASE WHEN h % 10 = 3 THEN ' Die ' || $5 || ' zum Ablauf haben wir dem Versicherer übermittelt.' ELSE '' END
				        || CASE WHEN h % 1000 = 7 THEN ' Es geht um die ' || $6 || ' Ihres Vertrags.' ELSE '' END
				        || E'\n\nMit freundlichen Grüßen\nIhr Team der Makler Bench GmbH\nHauptstraße 1, 10115 Berlin\nTelefon 030 1234567'
				        || CASE WHEN j > 1 THEN E'\n\n> Am Vortag schrieb ' || ta || E':\n> ' || subj || E'\n> Bitte um Rückmeldung zu den Unterlagen.' ELSE '' END AS body
				      FROM (SELECT t, j, abs(hashint4(t * 10 + j)::bigint) AS h,
				              timestamptz '2025-01-01' + t * interval '25 minutes' + (j - 1) * interval '3 hours' AS at,
				              ($2::uuid[])[1 + t % 3] AS box,
				              CASE WHEN j > 1 THEN 'AW: ' ELSE '' END ||
				              (ARRAY['Ihre Hausratversicherung','Schadenmeldung Wasserschaden','Beitragsanpassung zum 01.01.','Termin zur Jahresberatung',
				                     'Unterlagen Kfz-Versicherung','Änderung der Bankverbindung','Angebot Berufsunfähigkeitsversicherung','Rückfrage zum Antrag',
				                     'Police Wohngebäudeversicherung','Nachtrag zur Haftpflicht','Beitragsrechnung','Vertragsübersicht',
				                     'Adressänderung','Fragen zur Rentenversicherung','Zahnzusatzversicherung','Reiseversicherung für den Urlaub'])[1 + t % 16]
				              || ' (Vorgang ' || (100000 + t) || ')' AS subj,
				              CASE WHEN j % 2 = 1 THEN cm ELSE 'postfach' || (t % 3) || '@makler-bench.test' END AS fa,
				              CASE WHEN j % 2 = 1 THEN 'postfach' || (t % 3) || '@makler-bench.test' ELSE cm END AS ta
				            FROM generate_series($3::int, $4::int) t,
				                 LATERAL generate_series(1, 1 + (t * 31) % 9) j,
				                 LATERAL (SELECT CASE WHEN t % 5 = 0 THEN 'anfrage' || t || '@web.example' ELSE 'kunde' || (((t / 3) * 7919) % $7) || '@example.com' END AS cm) c
				           ) s1) s2`, company, uuidArray(boxes), from, to, commonWord, rareWord, contacts); err != nil {
				return fmt.Errorf("emails: %w", err)
			}
			_, err := tx.ExecContext(ctx, `
				INSERT INTO email_links (id, company_id, email_id, thread_id, contact_id, created_at)
				SELECT md5($1::uuid::text || 'l' || t || '.' || j)::uuid, $1, md5($1::uuid::text || 'e' || t || '.' || j)::uuid, md5($1::uuid::text || 't' || t)::uuid,
				       md5($1::uuid::text || 'c' || (((t / 3) * 7919) % $4))::uuid, now()
				FROM generate_series($2::int, $3::int) t, LATERAL generate_series(1, 1 + (t * 31) % 9, 2) j
				WHERE t % 5 <> 0`, company, from, to, contacts)
			if err != nil {
				return fmt.Errorf("links: %w", err)
			}
			return nil
		})
		if err != nil {
			b.Fatalf("seed threads %d..%d: %v", from, to, err)
		}
	}
}

// ownMailbox rewrites the visibility rule's "id IN (SELECT t.id FROM email_threads t WHERE
// t.mailbox_id IN (…))" of an email_threads statement into "mailbox_id IN (…)": the thread's
// own column instead of a second scan of the table (the fix proposed in
// docs/perf-notes/2026-12-07-email.md). ok is false when the statement has no such term.
func ownMailbox(q string) (string, bool) {
	const from = `"email_threads"."id" IN (SELECT t.id FROM email_threads t WHERE t.mailbox_id IN (`
	i := strings.Index(q, from)
	if i < 0 {
		return q, false
	}
	rest := q[i+len(from):]
	depth := 1
	for j, r := range rest {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 { // the end of the mailboxes subquery; the next ")" closed the threads one
			if j+1 >= len(rest) || rest[j+1] != ')' {
				return q, false
			}
			return q[:i] + `"email_threads"."mailbox_id" IN (` + rest[:j+1] + rest[j+2:], true
		}
	}
	return q, false
}
