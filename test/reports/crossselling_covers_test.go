package reports

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	appreports "github.com/brokerdesk/brokerdesk/app/reports"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The cross-selling report reads contact_covers, counts kept by triggers in every write of a
// contract or contact (migrations/20261212100400). These tests hold the counts against the
// definition, recomputed from the contracts themselves (coversOracle: the report's statement
// before the counts), after each kind of write.

// coversOracle is every contact of company with its score and gaps as the report defines them,
// computed from the contracts, next to what contact_covers holds; read as the operator (every
// row of the company, no visibility).
func coversOracle(t *testing.T, env *apitest.Env, company uuid.UUID) (want, got map[string]string) {
	t.Helper()
	want, got = map[string]string{}, map[string]string{}
	err := env.Operator(context.Background(), company, func(tx *sql.Tx) error {
		for _, q := range []struct {
			into map[string]string
			sql  string
		}{
			{want, `WITH held AS (
				SELECT contact_id, array_agg(DISTINCT type::text) AS types, bool_or(status = 'active') AS customer
				FROM contracts WHERE company_id = $1 AND status IN ('active', 'suspended', 'offer', 'application')
				GROUP BY contact_id)
			SELECT p.id::text, CASE WHEN COALESCE(h.customer, false) THEN 'customer' ELSE 'prospect' END || ' ' ||
				COALESCE((SELECT sum(r.weight) FROM cross_selling_rules() r
					WHERE r.contact_type = p.type::text AND NOT (r.covers && COALESCE(h.types, '{}'))), 0) || ' ' ||
				COALESCE((SELECT string_agg(r.gap || ':' || r.weight, ',' ORDER BY r.weight DESC, r.gap) FROM cross_selling_rules() r
					WHERE r.contact_type = p.type::text AND NOT (r.covers && COALESCE(h.types, '{}'))), '') || ' ' ||
				COALESCE(p.owner_id::text, '-')
			FROM contacts p LEFT JOIN held h ON h.contact_id = p.id WHERE p.company_id = $1`},
			{got, `SELECT id::text, CASE WHEN active_contracts > 0 THEN 'customer' ELSE 'prospect' END || ' ' || score || ' ' ||
				gaps || ' ' || COALESCE(owner_id::text, '-') || CASE WHEN rank = -score THEN '' ELSE ' rank ' || rank END
			FROM contact_covers WHERE company_id = $1`},
		} {
			rows, err := tx.QueryContext(context.Background(), q.sql, company)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id, v string
				if err := rows.Scan(&id, &v); err != nil {
					rows.Close()
					return err
				}
				q.into[id] = v
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want, got
}

// checkCovers fails when contact_covers differs from the definition for any contact.
func checkCovers(t *testing.T, env *apitest.Env, company uuid.UUID, after string) {
	t.Helper()
	want, got := coversOracle(t, env, company)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("after %s: contact %s: covers %q, want %q", after, id, got[id], w)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("after %s: contact_covers holds %s, which is no contact", after, id)
		}
	}
}

// Catches: a rule changed in Go (labels, the gap filter's values) but not in the database that
// scores, or the other way round.
func TestCrossSelling_RulesMatchDatabase(t *testing.T) {
	env := apitest.New(t)
	rows, err := env.OwnerDB.Query(`SELECT contact_type, gap, weight, array_to_string(covers, ' ') FROM cross_selling_rules()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var db []string
	for rows.Next() {
		var ctype, gap string
		var weight int
		var covers string
		if err := rows.Scan(&ctype, &gap, &weight, &covers); err != nil {
			t.Fatal(err)
		}
		db = append(db, fmt.Sprint(ctype, " ", gap, " ", weight, " ", covers))
	}
	var code []string
	for _, r := range appreports.GapRules() {
		code = append(code, fmt.Sprint(r[0], " ", r[1], " ", r[2], " ", strings.Join(r[3].([]string), " ")))
	}
	slices.Sort(db)
	slices.Sort(code)
	if !slices.Equal(db, code) {
		t.Errorf("cross_selling_rules() %v\napp/reports gapRules %v", db, code)
	}
	// One partial index per gap, which the statement names as a literal.
	for _, g := range appreports.GapTypes() {
		var n int
		if err := env.OwnerDB.QueryRow(`SELECT count(*) FROM pg_indexes WHERE indexname = $1`, "tenant_contact_covers_gap_"+g).Scan(&n); err != nil || n != 1 {
			t.Errorf("index tenant_contact_covers_gap_%s: %d (%v)", g, n, err)
		}
	}
}

// Catches: a write path whose contracts are not counted (a status change, a type change, a
// contract moved to another contact, a delete, a hand-written INSERT as the portfolio transfer
// writes), a contact's type or owner not followed, a count lost between two writers of one
// contact, a row left behind by a deleted contact.
func TestCrossSelling_CountsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	ins := insurerID(t, env, co.Secret, "5501")
	p1 := mustContact(t, env, co, "private", "Eins", &agent.ID)
	p2 := mustContact(t, env, co, "private", "Zwei", nil)
	b1 := mustContact(t, env, co, "business", "Drei GmbH", nil)
	checkCovers(t, env, co.ID, "contacts created")

	k1 := mustContract(t, env, co.Secret, ct{Contact: p1, Insurer: ins, Type: "041", Status: "active"})
	k2 := mustContract(t, env, co.Secret, ct{Contact: p1, Insurer: ins, Type: "041", Status: "offer"})
	k3 := mustContract(t, env, co.Secret, ct{Contact: p2, Insurer: ins, Type: "130", Status: "application"})
	checkCovers(t, env, co.ID, "contracts created")

	patch := func(id string, body map[string]any) {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/contracts/" + id, Key: co.Secret, Body: body})
		if r.Status != 200 {
			t.Fatalf("PATCH %s %v: %d %s", id, body, r.Status, r.Body)
		}
	}
	patch(k1, map[string]any{"status": "cancelled"})
	checkCovers(t, env, co.ID, "status active -> cancelled")
	patch(k2, map[string]any{"type": "010"})
	checkCovers(t, env, co.ID, "type changed")
	patch(k3, map[string]any{"status": "active"})
	checkCovers(t, env, co.ID, "application -> active")
	patch(k3, map[string]any{"contactId": p1})
	checkCovers(t, env, co.ID, "contract moved to another contact")
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contracts/" + k2, Key: co.Secret}); r.Status != 204 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	checkCovers(t, env, co.ID, "contract deleted")

	// As the portfolio transfer writes: SQL, not ent.
	err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO contracts (id, company_id, contact_id, insurer_id, policy_number, type, status, version, created_at, updated_at)
			VALUES (gen_random_uuid(), $1, $2, $3, 'SQL-1', '042', 'active', 1, now(), now())`, co.ID, b1, ins)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkCovers(t, env, co.ID, "a contract inserted in SQL")

	// The contact's type and owner follow (as any write of the contact would).
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		return db.Contact.UpdateOneID(uuid.MustParse(p2)).SetType(contact.TypeBusiness).SetOwnerID(agent.ID).Exec(ctx)
	})
	checkCovers(t, env, co.ID, "contact type and owner changed")

	// Ten writers of one contact at once: every count kept.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustContract(t, env, co.Secret, ct{Contact: b1, Insurer: ins, Type: []string{"080", "230", "044", "070", "040"}[i%5], Status: "active"})
		}()
	}
	wg.Wait()
	checkCovers(t, env, co.ID, "ten concurrent contracts of one contact")

	etag := env.Do(t, apitest.Request{Path: "/contacts/" + p1, Key: co.Secret}).Header.Get("ETag")
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + p1, Key: co.Secret,
		Header: map[string]string{"If-Match": etag}}); r.Status != 204 {
		t.Fatalf("DELETE contact: %d %s", r.Status, r.Body)
	}
	checkCovers(t, env, co.ID, "contact deleted with its contracts")
}
