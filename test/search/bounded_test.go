package search

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// copies inserts n copies of the row id of table, each with the fields of set(i) (column ->
// SQL expression of g, the copy's number 1..n) and a new id, as the operator role of company:
// a few hundred fixtures in one statement instead of as many requests.
func copies(t *testing.T, env *apitest.Env, company uuid.UUID, table, id string, n int, set map[string]string) {
	t.Helper()
	fields := "'id', gen_random_uuid()"
	for col, expr := range set {
		fields += fmt.Sprintf(", '%s', %s", col, expr)
	}
	q := fmt.Sprintf(`INSERT INTO %[1]s SELECT (jsonb_populate_record(r, jsonb_build_object(%[2]s))).*
		FROM %[1]s r, generate_series(1, $2) g WHERE r.id = $1`, table, fields)
	err := env.Operator(context.Background(), company, func(tx *sql.Tx) error {
		res, err := tx.Exec(q, id, n)
		if err != nil {
			return err
		}
		if got, _ := res.RowsAffected(); got != int64(n) {
			return fmt.Errorf("%d rows, want %d", got, n)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copies of %s %s: %v", table, id, err)
	}
}

// Catches: a name that scans and finds contracts (the contracts' branch run for a query
// without a digit: at a million contracts a seq scan or thousands of key matches per name),
// and a policy number no longer found once the branch needs a digit.
func TestSearch_ContractsNeedADigit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	c := contact(t, env, co.Secret, "Zenzi", "Zapfenstreich", "")
	k := contract(t, env, co.Secret, c, insurerID(t, env, co.Secret), "ZAPFENSTREICH-77")

	if got := ids(search(t, env, co.Secret, "zapfenstreich", "limit=50"), "contract"); len(got) != 0 {
		t.Errorf("q=zapfenstreich: contracts %v, want none (no digit)", got)
	}
	if got := search(t, env, co.Secret, "zapfenstreich", "types=contract"); len(got) != 0 {
		t.Errorf("q=zapfenstreich&types=contract: %+v, want none", got)
	}
	for _, q := range []string{"Zapfenstreich 77", "zapfenstreich77", "ZAPFENSTREICH-77"} {
		got := ids(search(t, env, co.Secret, q, "limit=50"), "contract")
		if len(got) != 1 || got[0] != k {
			t.Errorf("q=%s: contracts %v, want %s", q, got, k)
		}
	}
}

// Catches: a bounded branch (at most a few hundred matches read and scored, app/search
// scoreCap) that loses the exact match of a common term: same name, same e-mail, same policy
// key, each written after 260 partial matches (so after the first 100 the bounded read takes).
func TestSearch_BoundedKeepsExactMatches(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	var bounded bool
	if err := env.OwnerDB.QueryRow(`SELECT to_regoperator('public.@@>(tsvector,tsquery)') IS NOT NULL`).Scan(&bounded); err != nil || !bounded {
		t.Fatalf("no public.@@> (%v): the tests' migrations ran without a superuser, the bounded statement is not tested", err)
	}
	co := env.NewCompany(t)
	ins := insurerID(t, env, co.Secret)
	const n = 260

	filler := contact(t, env, co.Secret, "Filler", "Wurzelsepper", "tpl.wurzelsepp@example.org")
	copies(t, env, co.ID, "contacts", filler, n, map[string]string{
		"first_name": "'Filler' || g", "email": "'f' || g || '.wurzelsepp@example.org'"})
	lead := apitest.Create[idOnly](t, env, co.Secret, "/leads", map[string]any{
		"firstName": "Filler", "lastName": "Wurzelsepper", "email": "tpl.wurzelsepp@example.org"}).ID
	copies(t, env, co.ID, "leads", lead, n, map[string]string{
		"first_name": "'Filler' || g", "email": "'f' || g || '.wurzelsepp@example.org'",
		"email_key": "'f' || g || '.wurzelsepp@example.org'"})
	k := contract(t, env, co.Secret, filler, ins, "WS-4711-0")
	copies(t, env, co.ID, "contracts", k, n, map[string]string{"policy_number": "'WS-4711-' || g"})

	exactContact := apitest.Create[idOnly](t, env, co.Secret, "/contacts", map[string]any{
		"type": "business", "business": map[string]any{"companyName": "Wurzelsepp"}, "email": "wurzelsepp@example.org"}).ID
	exactLead := apitest.Create[idOnly](t, env, co.Secret, "/leads", map[string]any{
		"lastName": "Wurzelsepp", "email": "wurzelsepp@example.org"}).ID
	exactContract := contract(t, env, co.Secret, filler, ins, "WS 4711")
	// Two more of the same name: with limit=2 the first two by id (same title), as an
	// unbounded read ranks them, not any two exact ones.
	var twins []string
	for range 2 {
		twins = append(twins, apitest.Create[idOnly](t, env, co.Secret, "/contacts", map[string]any{
			"type": "business", "business": map[string]any{"companyName": "Wurzelsepp"}}).ID)
	}

	for _, c := range []struct {
		q, types string
		want     []string
	}{
		{"Wurzelsepp", "contact,lead", []string{exactContact, twins[0], twins[1], exactLead}},
		{"wurzelsepp@example.org", "contact,lead", []string{exactContact, exactLead}},
		{"WS-4711", "contract", []string{exactContract}},
	} {
		got := search(t, env, co.Secret, c.q, "limit=50&types="+c.types)
		if len(got) != 50 {
			t.Errorf("q=%s: %d hits, want 50 (the partial matches fill the list)", c.q, len(got))
		}
		for i, id := range c.want {
			if i >= len(got) || got[i].ID != id || got[i].Score != 1 {
				t.Errorf("q=%s: hit %d is %+v, want %s with score 1 (the exact matches first)", c.q, i, got[i], id)
			}
		}
	}
	got := search(t, env, co.Secret, "wurzelsepp", "types=contact&limit=2")
	if len(got) != 2 || got[0].ID != exactContact || got[1].ID != twins[0] {
		t.Errorf("q=wurzelsepp&limit=2: %+v, want %s and %s (the first exact ones by id; %s after them)", got, exactContact, twins[0], twins[1])
	}
}

// Catches: owner conditions for a restricted credential (tenancy.VisibleOwners) that leave out
// a delegating colleague's rows or let in another's: an agent finds exactly what an admin
// finds of its own and its delegators' contacts (and their leads, contracts, documents), in
// the same order with the same scores.
func TestSearch_AgentSameAsAdminFiltered(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ins := insurerID(t, env, co.Secret)
	agent, delegator, other := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	co.Delegate(t, delegator.ID, agent.ID, nil)
	agentKey := co.UserKey(t, agent)

	seen := map[string]bool{}
	for i, u := range []struct {
		key     string
		visible bool
	}{{agentKey, true}, {co.UserKey(t, delegator), true}, {co.UserKey(t, other), false}} {
		c := contact(t, env, u.key, fmt.Sprint("Quirin", i), "Quappenberg", "")
		k := contract(t, env, u.key, c, ins, fmt.Sprintf("QB-900-%d", i))
		d := upload(t, env, u.key, c, fmt.Sprintf("quappenberg-%d.pdf", i), apitest.PDF)
		l := apitest.Create[idOnly](t, env, u.key, "/leads", map[string]any{"firstName": fmt.Sprint("Lea", i), "lastName": "Quappenberg",
			"email": fmt.Sprintf("lea%d@example.org", i)}).ID
		for _, id := range []string{c, k, d, l} {
			seen[id] = u.visible
		}
	}
	for _, q := range []string{"quappenberg", "QB 900"} {
		admin := search(t, env, co.Secret, q, "limit=50")
		var want []hit
		for _, h := range admin {
			if seen[h.ID] {
				want = append(want, h)
			}
		}
		got := search(t, env, agentKey, q, "limit=50")
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("q=%s: agent %d hits, want %d of the admin's %d", q, len(got), len(want), len(admin))
			continue
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score || got[i].Highlight != want[i].Highlight {
				t.Errorf("q=%s: agent's hit %d %+v, want %+v", q, i, got[i], want[i])
			}
		}
	}
}
