package benchreports

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The book the benchmarks read: one company, its admin and 100 agents; n contacts and n
// contracts, n/10 leads, a few thousand tasks and appointments, n/50 documents. Written in SQL
// inside PostgreSQL (INSERT … SELECT over generate_series) as the operator role pinned to the
// company, as the other bench packages seed: row-level security and every constraint and
// trigger apply (contacts_search_columns derives search_text, sort_name and email_key from each
// row, so nothing here writes them). Ids are md5 of the company and the row's number, so a
// contract finds its contact without a lookup table. Every choice is a hash of the row's number
// (hashint8): the same n gives the same book.
//
// Owners are skewed as in a real brokerage: contact n belongs to agent floor(100·u²) for a hash
// u in [0,1), so agent 0 holds ~10% of the book and agent 99 ~0.5%; agent 25 (~1.0%) is the
// benchmarks' agent, agent 30 (~0.9%) delegates to it.
//
// Commissions: 1,680 statements (20 insurers × 84 months of 2020-2026) and 2n entries on them
// (2,000,000 at a million: 90% matched to a contract, ~285,000 booked a year), no liability
// rules (the defaults apply: 60 months for life and health, 12 else).

// seedBatch is the rows of one INSERT statement (and transaction).
const seedBatch = 200_000

// uniform is the SQL of a hash of the bigint expression x in [0, 1).
func uniform(x string) string {
	return fmt.Sprintf(`(abs(hashint8(%s)::bigint)::float8 / 2147483649.0)`, x)
}

// ownerOf is the SQL of the skewed owner (an element of the uuid[] $2) of contact number n.
func ownerOf(n string) string {
	return fmt.Sprintf(`($2::uuid[])[1 + floor(array_length($2::uuid[], 1) * power(%s, 2))::int]`, uniform(n+"::bigint * 16 + 1"))
}

type book struct {
	company  uuid.UUID
	agents   []uuid.UUID // 100 agents, owners of the book
	insurers []uuid.UUID
	stages   []uuid.UUID // the company's lead stages
	convert  uuid.UUID   // the stage "converted"
}

// seed writes the book of n contacts; it returns the time it took per table.
func seed(b *testing.B, env *apitest.Env, bk *book, n int) map[string]time.Duration {
	b.Helper()
	ctx := context.Background()
	took := map[string]time.Duration{}
	rebuild := dropBulkIndexes(b, env)
	step := func(name string, rows int, stmt string, args ...any) {
		start := time.Now()
		for from := 0; from < rows; from += seedBatch {
			to := min(from+seedBatch, rows) - 1
			err := env.Operator(ctx, bk.company, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, stmt, append([]any{bk.company, uuidArray(bk.agents), from, to, n}, args...)...)
				return err
			})
			if err != nil {
				b.Fatalf("seed %s %d..%d: %v", name, from, to, err)
			}
		}
		took[name] = time.Since(start)
		b.Logf("seeded %d %s in %s (load %s)", rows, name, took[name].Round(time.Millisecond), loadavg())
	}

	// Contacts: 16 first names × 64 surnames in turn (Müller is 1 in 64), one in ten a business,
	// an address, a date of birth, a profession for one in five: "Hufschmied" for ~10 of a
	// million, the rare word searched.
	step("contacts", n, `
		INSERT INTO contacts (id, company_id, type, first_name, last_name, company_name, email, owner_id,
		                      tags, labels, custom_fields, groups, sensitive, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 'c' || n)::uuid, $1, CASE WHEN biz THEN 'business' ELSE 'private' END,
		       f, l, CASE WHEN biz THEN l || ' ' || (ARRAY['GmbH','KG','OHG','e.K.','AG'])[1 + n % 5] ELSE '' END,
		       'kunde' || n || '@example.com', `+ownerOf("n")+`, '[]', '[]', '{}',
		       jsonb_build_object('address', jsonb_build_object('street', st, 'city', ci),
		                          'personal', jsonb_build_object('dateOfBirth', dob))
		       || CASE WHEN prof IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('profession', jsonb_build_object('profession', prof)) END,
		       '{}', 1, ts, ts
		FROM (SELECT n, n % 10 = 3 AS biz,
		        (ARRAY['Anna','Ben','Clara','David','Emma','Felix','Greta','Hans','Ida','Jonas','Karla','Lukas','Mia','Noah','Olga','Paul'])[1 + n % 16] AS f,
		        (ARRAY['Müller','Schmidt','Schneider','Fischer','Weber','Meyer','Wagner','Becker','Schulz','Hoffmann','Schäfer','Koch','Bauer','Richter','Klein','Wolf',
		               'Schröder','Neumann','Schwarz','Zimmermann','Braun','Krüger','Hofmann','Hartmann','Lange','Schmitt','Werner','Schmitz','Krause','Meier','Lehmann','Schmid',
		               'Schulze','Maier','Köhler','Herrmann','König','Walter','Mayer','Huber','Kaiser','Fuchs','Peters','Lang','Scholz','Möller','Weiß','Jung',
		               'Hahn','Schubert','Vogel','Friedrich','Keller','Günther','Frank','Berger','Winkler','Roth','Beck','Lorenz','Baumann','Franke','Albrecht','Schuster'])[1 + (n / 16) % 64] AS l,
		        (ARRAY['Hauptstraße','Schulstraße','Gartenweg','Bahnhofstraße','Lindenallee','Am Markt'])[1 + n % 6] || ' ' || (1 + n % 120) AS st,
		        (ARRAY['Berlin','Hamburg','München','Köln','Frankfurt','Stuttgart','Leipzig','Dresden'])[1 + (n / 7) % 8] AS ci,
		        to_char(date '1940-01-01' + (n::bigint * 7919 % 25000)::int, 'YYYY-MM-DD') AS dob,
		        CASE WHEN n % 100003 = 17 THEN 'Hufschmied'
		             WHEN n % 5 = 1 THEN (ARRAY['Lehrerin','Ingenieur','Ärztin','Elektriker','Kauffrau','Rentner','Student','Beamter'])[1 + (n / 5) % 8] END AS prof,
		        timestamptz '2019-01-01' + (n::bigint * 250000000 / $5) * interval '1 second' AS ts
		      FROM generate_series($3::int, $4::int) n) s`)

	// Contracts: contract i belongs to a hashed contact (a Poisson book: ~37% of the contacts
	// hold none, some three or more), of a type that fits the contact (private or business),
	// with one of the insurers, a policy number in the insurer's style (with dashes, spaces,
	// slashes), 80% active; start, end and main renewal dates, a premium and its frequency,
	// annual_premium as app/contracts writes it (NULL for a single premium); an owner on a third
	// (the contact's, now and then another agent's), none on the rest as after an import.
	step("contracts", n, `
		INSERT INTO contracts (id, company_id, contact_id, insurer_id, policy_number, type, status, start_date, end_date,
		                       main_renewal_date, premium, payment_frequency, annual_premium, owner_id, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 'k' || i)::uuid, $1, c.id, ($6::uuid[])[1 + i % array_length($6::uuid[], 1)],
		       CASE i % 4 WHEN 0 THEN 'LV' || p
		                  WHEN 1 THEN substr(p, 1, 3) || '-' || substr(p, 4, 3) || '-' || substr(p, 7, 3)
		                  WHEN 2 THEN 'HV ' || substr(p, 1, 5) || ' ' || substr(p, 6)
		                  ELSE p || '/' || (i % 97) END,
		       CASE WHEN c.type = 'business' THEN (ARRAY['042','080','230','070','044','051','140','040'])[1 + h % 8]
		            ELSE (ARRAY['010','011','020','021','028','030','041','041','050','051','052','130','130','140','070'])[1 + h % 15] END,
		       st, sd,
		       CASE WHEN st IN ('cancelled', 'ended') THEN sd + (365 * (1 + h % 10))::int
		            WHEN h % 10 < 3 THEN sd + (365 * (1 + h % 30))::int END,
		       CASE WHEN h % 10 < 6 THEN sd WHEN h % 10 < 7 THEN make_date(2020, 1, 1) END,
		       prem, pf,
		       CASE pf WHEN 'monthly' THEN prem * 12 WHEN 'quarterly' THEN prem * 4 WHEN 'half-yearly' THEN prem * 2
		               WHEN 'yearly' THEN prem END,
		       CASE WHEN h % 3 = 0 THEN c.owner_id WHEN h % 29 = 1 THEN ($2::uuid[])[1 + h % array_length($2::uuid[], 1)] END,
		       1, ts, ts
		FROM (SELECT i, h, lpad(i::text, 9, '0') AS p,
		        CASE WHEN h % 100 < 80 THEN 'active' WHEN h % 100 < 85 THEN 'suspended' WHEN h % 100 < 90 THEN 'cancelled'
		             WHEN h % 100 < 95 THEN 'ended' WHEN h % 100 < 98 THEN 'offer' ELSE 'application' END AS st,
		        date '2005-01-01' + (h / 7 % 7900)::int AS sd,
		        round(5 + (h / 11 % 50000) / 100.0, 2)::numeric(14,2) AS prem,
		        (ARRAY['monthly','monthly','monthly','monthly','monthly','quarterly','half-yearly','yearly','yearly','yearly','yearly','single'])[1 + h / 13 % 12] AS pf,
		        md5($1::uuid::text || 'c' || (abs(hashint8(i::bigint * 16 + 5)::bigint) % $5))::uuid AS contact,
		        timestamptz '2020-01-01' + (i::bigint * 220000000 / $5) * interval '1 second' AS ts
		      FROM (SELECT i, abs(hashint8(i::bigint * 16 + 7)::bigint) AS h FROM generate_series($3::int, $4::int) i) g) s
		JOIN contacts c ON c.id = s.contact`, uuidArray(bk.insurers))

	// Leads: a tenth of the contacts' number, created over 2024-2026, skewed owners as the
	// contacts, a source (none on one in eleven), a stage; those in "converted" are converted,
	// 1-90 days after creation, to a contact.
	leads := max(n/10, 1)
	step("leads", leads, `
		INSERT INTO leads (id, company_id, first_name, last_name, email, email_key, phone, phone_key, source, notes,
		                   additional_fields, stage_id, owner_id, converted, converted_at, contact_id, test, submissions,
		                   origin, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 'l' || n)::uuid, $1, f, l, e, e, ph, regexp_replace(ph, '[^0-9+]', '', 'g'), src, '',
		       '{}', stage, `+ownerOf("n")+`, conv, CASE WHEN conv THEN ts + (1 + n % 90) * interval '1 day' END,
		       CASE WHEN conv THEN md5($1::uuid::text || 'c' || (n * 7 % $5))::uuid END, false, 1, 'api', 1, ts, ts
		FROM (SELECT n, stage, stage = $7::uuid AS conv,
		        (ARRAY['Lea','Tim','Sara','Jan','Nina','Max','Lena','Tom'])[1 + n % 8] AS f,
		        (ARRAY['Müller','Schmidt','Becker','Wagner','Hofmann','Krause','Vogel','Lorenz','Jäger','Busch'])[1 + (n / 8) % 10] AS l,
		        'interessent' || n || '@example.net' AS e, '+49 30 ' || (1000000 + n) AS ph,
		        (ARRAY['website','referral','phone','event','social_media','advertisement','partner','landing_page','registration','other', NULL])[1 + n % 11] AS src,
		        timestamptz '2024-01-01' + (n::bigint * 94000000 / GREATEST($5 / 10, 1)) * interval '1 second' AS ts
		      FROM (SELECT n, ($6::uuid[])[1 + abs(hashint8(n::bigint * 16 + 9)::bigint) % array_length($6::uuid[], 1)] AS stage
		            FROM generate_series($3::int, $4::int) n) g) s`, uuidArray(bk.stages), bk.convert)

	// Tasks and appointments: a few thousand each over 2026, by the skewed owners, on a contact.
	const others = 5000
	step("tasks", others, `
		INSERT INTO tasks (id, company_id, title, description, contact_id, assignee_id, creator_id, due_at, priority, status,
		                   completed_at, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 't' || n)::uuid, $1, 'Rückruf zum Vertrag ' || n, '', md5($1::uuid::text || 'c' || (n * 131 % $5))::uuid,
		       `+ownerOf("(n * 131 % $5)")+`, `+ownerOf("(n * 131 % $5)")+`, ts + interval '7 days', 'normal',
		       CASE WHEN n % 5 < 2 THEN 'done' WHEN n % 5 = 2 THEN 'in_progress' ELSE 'open' END,
		       CASE WHEN n % 5 < 2 THEN ts + interval '3 days' END, 1, ts, ts
		FROM (SELECT n, timestamptz '2026-01-01' + n * interval '1 hour 30 minutes' AS ts FROM generate_series($3::int, $4::int) n) s`)
	step("appointments", others, `
		INSERT INTO appointments (id, company_id, title, description, location, type, start_at, end_at, all_day, time_zone,
		                          owner_id, contact_id, creator_id, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 'a' || n)::uuid, $1, 'Jahresgespräch', '', '', 'meeting', ts, ts + interval '1 hour', false, 'Europe/Berlin',
		       `+ownerOf("(n * 173 % $5)")+`, md5($1::uuid::text || 'c' || (n * 173 % $5))::uuid, `+ownerOf("(n * 173 % $5)")+`, 1, ts, ts
		FROM (SELECT n, timestamptz '2026-01-05 08:00+01' + n * interval '1 hour 40 minutes' AS ts FROM generate_series($3::int, $4::int) n) s`)

	// Documents: one per 50 contacts, a policy's PDF with a text layer (German business prose;
	// the rare word in a handful), as GET /search reads them by filename and text.
	docs := max(n/50, 1)
	step("documents", docs, `
		INSERT INTO documents (id, company_id, contact_id, type, filename, content_type, size, sha256, blob_key, text, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 'd' || n)::uuid, $1, md5($1::uuid::text || 'c' || (n * 37 % $5))::uuid, 'other',
		       (ARRAY['Police','Nachtrag','Beitragsrechnung','Schadenmeldung','Beratungsprotokoll'])[1 + n % 5] || '_' || n || '.pdf',
		       'application/pdf', 20000 + n % 5000, md5('d' || n) || md5('e' || n), 'bench/' || n,
		       'Sehr geehrte Kundin, sehr geehrter Kunde, ' ||
		       (ARRAY['anbei erhalten Sie Ihre Police zur Hausratversicherung.','der Beitrag für das kommende Versicherungsjahr wurde neu berechnet.',
		              'Ihr Schaden vom letzten Monat wurde reguliert.','wir bestätigen die Änderung Ihrer Bankverbindung.',
		              'im Beratungsgespräch haben wir Ihren Bedarf an Berufsunfähigkeitsschutz besprochen.'])[1 + n % 5] ||
		       CASE WHEN n % 4000 = 11 THEN ' Der Hufschmied ist als Beruf in der Gefahrengruppe B versichert.' ELSE '' END ||
		       ' Mit freundlichen Grüßen, Ihr Maklerbüro', 1, ts, ts
		FROM (SELECT n, timestamptz '2022-01-01' + n * interval '1 hour' AS ts FROM generate_series($3::int, $4::int) n) s
		WHERE array_length($2::uuid[], 1) > 0`) // ($2 unused otherwise: every statement takes the same first five)

	// Commission statements: one per insurer and month of 2020-2026 (20 insurers × 84 months =
	// 1,680), as the worker leaves them: processed; reconciled up to September 2026 (a few
	// disputed), received after; fourteen insurers in twenty send GDV 0400, four CSV, two BiPRO.
	// Statement s is insurer s % 20's of month s / 20. Counts and totals are summed after the
	// entries.
	ins := len(bk.insurers)
	statements := 84 * ins
	step("commission statements", statements, `
		INSERT INTO commission_statements (id, company_id, format, status, import_status, insurer_id, filename, size, sha256,
		                                   blob_key, period_from, period_to, issues, processed_at, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 's' || s)::uuid, $1, fmt,
		       CASE WHEN pf >= date '2026-10-01' THEN 'received' WHEN s % 53 = 7 THEN 'disputed' ELSE 'reconciled' END,
		       'processed', ($6::uuid[])[1 + v], 'Provision_' || v || '_' || to_char(pf, 'YYYY-MM') ||
		         CASE fmt WHEN 'gdv_0400' THEN '.gdv' WHEN 'csv' THEN '.csv' ELSE '.xml' END,
		       40000 + s % 9000, md5('s' || s) || md5('t' || s), 'commissions/' || $1::uuid::text || '/bench-' || s,
		       pf, (pf + interval '1 month' - interval '1 day')::date, '[]', ts, 1, ts, ts
		FROM (SELECT s, v, (date '2020-01-01' + (s / array_length($6::uuid[], 1)) * interval '1 month')::date AS pf,
		        CASE WHEN v * 10 < array_length($6::uuid[], 1) * 7 THEN 'gdv_0400' WHEN v * 10 < array_length($6::uuid[], 1) * 9 THEN 'csv'
		             ELSE 'bipro_430_5' END AS fmt,
		        (date '2020-01-01' + (s / array_length($6::uuid[], 1) + 1) * interval '1 month')::timestamptz + v * interval '1 hour' AS ts
		      FROM (SELECT s, s % array_length($6::uuid[], 1) AS v FROM generate_series($3::int, $4::int) s) g0) g
		WHERE array_length($2::uuid[], 1) > 0 AND $5::int > 0`, uuidArray(bk.insurers))

	// Commission entries: two per contract (2,000,000 at a million), booked evenly over
	// 2020-2026 (~285,000 a year), each on the statement of its insurer and month. Types as GDV
	// 0400 gives them: 55% commission (Sollstellungsart 40, 20.00 to 1,519.99), 25% premium
	// postings (their commission, 1.00 to 80.99), 10% cancellation (41, -10.00 to -809.99), 6%
	// correction (90, ±100.00), 4% other. Nine in ten matched as the matcher leaves them (a
	// hashed contract: its insurer, policy number and key, its contact, matched_by auto; ~83% of
	// the contracts have one or more), the tenth of a policy the book does not hold.
	entries := 2 * n
	step("commission entries", entries, `
		INSERT INTO commission_entries (id, company_id, statement_id, insurer_id, contract_id, contact_id, policy_number, policy_key,
		                                type, code, amount, booked_on, description, matched_by, line, version, created_at, updated_at)
		SELECT md5($1::uuid::text || 'e' || i)::uuid, $1,
		       md5($1::uuid::text || 's' || (((extract(year FROM b)::int - 2020) * 12 + extract(month FROM b)::int - 1) * array_length($6::uuid[], 1) + v))::uuid,
		       ($6::uuid[])[1 + v], cid, pid, pn, ltrim(regexp_replace(upper(pn), '[^A-Z0-9]', '', 'g'), '0'),
		       ty, CASE ty WHEN 'commission' THEN '40' WHEN 'cancellation' THEN '41' WHEN 'correction' THEN '90' WHEN 'premium' THEN '01' ELSE '' END,
		       CASE ty WHEN 'commission' THEN round(20 + a % 150000 / 100.0, 2) WHEN 'premium' THEN round(1 + a % 8000 / 100.0, 2)
		               WHEN 'cancellation' THEN -round(10 + a % 80000 / 100.0, 2) WHEN 'correction' THEN round((a % 20001 - 10000) / 100.0, 2)
		               ELSE round(a % 5000 / 100.0, 2) END::numeric(14,2),
		       b, CASE ty WHEN 'commission' THEN 'Provision' WHEN 'cancellation' THEN 'Storno Provision' WHEN 'correction' THEN 'Korrektur'
		               WHEN 'premium' THEN 'Beitragsbuchung' ELSE 'Sonstiges' END,
		       CASE WHEN cid IS NOT NULL THEN 'auto' END, i, 1, (b + 5)::timestamptz, (b + 5)::timestamptz
		FROM (SELECT i, h / 7 % 1000003 AS a, b, c.id AS cid, c.contact_id AS pid,
		        CASE WHEN k IS NULL THEN i % array_length($6::uuid[], 1) ELSE k % array_length($6::uuid[], 1) END AS v,
		        CASE WHEN k IS NULL THEN 'FR-' || lpad(i::text, 9, '0') ELSE c.policy_number END AS pn,
		        CASE WHEN h % 100 < 55 THEN 'commission' WHEN h % 100 < 80 THEN 'premium' WHEN h % 100 < 90 THEN 'cancellation'
		             WHEN h % 100 < 96 THEN 'correction' ELSE 'other' END AS ty
		      FROM (SELECT i, h, date '2020-01-01' + (h / 101 % 2557)::int AS b,
		              CASE WHEN h / 3 % 10 <> 9 THEN abs(hashint8(i::bigint * 16 + 11)::bigint) % $5 END AS k
		            FROM (SELECT i, abs(hashint8(i::bigint * 16 + 13)::bigint) AS h FROM generate_series($3::int, $4::int) i) g0) g
		      LEFT JOIN contracts c ON c.id = md5($1::uuid::text || 'k' || g.k)::uuid) s
		WHERE array_length($2::uuid[], 1) > 0`, uuidArray(bk.insurers))
	step("commission statement totals", statements, `
		UPDATE commission_statements s SET entry_count = t.n, matched_count = t.matched, total = t.total
		FROM (SELECT statement_id, count(*) AS n, count(contract_id) AS matched, sum(amount) AS total
		      FROM commission_entries WHERE company_id = $1 GROUP BY statement_id) t
		WHERE s.id = t.statement_id AND s.company_id = $1 AND $3::int <= $4::int AND $5::int > 0 AND array_length($2::uuid[], 1) > 0`)

	start := time.Now()
	rebuild()
	took["bulk-indexes"] = time.Since(start)
	b.Logf("rebuilt the GIN and commission entry indexes in %s (load %s)", took["bulk-indexes"].Round(time.Millisecond), loadavg())
	return took
}

// dropBulkIndexes drops the GIN indexes of the seeded tables (the trigram and search-key
// indexes of contacts, leads, contracts, documents) and the plain indexes of commission_entries,
// and returns the function that builds them again from their definitions. Inserting a million
// rows into three trigram GIN indexes of contacts row by row took ~0.9 ms a row on this machine
// (15 minutes for the contacts); 2,000,000 entries into nine b-trees keyed by random ids and
// dates took 9 minutes at load 3-4. One CREATE INDEX per index after the rows is a sort,
// minutes for all. The rebuilt indexes are the ones the migrations define (pg_get_indexdef),
// without a pending list. No constraint is a GIN index or a non-unique one (the primary key and
// the unique keys stay): nothing the seed writes goes unchecked.
func dropBulkIndexes(b *testing.B, env *apitest.Env) func() {
	b.Helper()
	ctx := context.Background()
	rows, err := env.OwnerDB.QueryContext(ctx, `SELECT c.oid::regclass::text, pg_get_indexdef(c.oid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE (a.amname = 'gin' AND i.indrelid IN ('contacts'::regclass, 'contracts'::regclass, 'leads'::regclass, 'documents'::regclass))
		   OR (i.indrelid = 'commission_entries'::regclass AND NOT i.indisunique)
		ORDER BY 1`)
	if err != nil {
		b.Fatal(err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			b.Fatal(err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	rows.Close()
	for _, name := range names {
		if _, err := env.OwnerDB.ExecContext(ctx, "DROP INDEX "+name); err != nil {
			b.Fatal(err)
		}
	}
	return func() {
		conn, err := env.OwnerDB.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET maintenance_work_mem = '256MB'"); err != nil {
			b.Fatal(err)
		}
		for _, def := range defs {
			if _, err := conn.ExecContext(ctx, def); err != nil {
				b.Fatalf("%s: %v", def, err)
			}
		}
	}
}
