package contacts

import (
	"context"
	"database/sql"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContacts_SearchKeys: q for a key that sees some owners goes through contact_search_keys
// (migration 20261126070000) when the term has a three-character window, and its answers stay
// those of the pg_trgm path: owners' and delegators' contacts only, renamed and reassigned
// contacts found under their new name and owner, LIKE wildcards taken literally, two-character
// terms through the pg_trgm path. The SQL trace shows which path ran; its plan reads the GIN
// index through our own leakproof operator, and the built-in arraycontains is not leakproof
// (20261126070000 had marked it for every array type; issue 20 item 10).
func TestContacts_SearchKeys(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lists []string
	var lastArgs []any
	env := apitest.New(t, app.WithSQLTrace(func(q string, args any) {
		if strings.Contains(q, `FROM "contacts"`) && strings.Contains(q, "ORDER BY") {
			mu.Lock()
			lists = append(lists, q)
			// copied: a string argument may point into Fiber's request buffer, which the
			// next request on the connection overwrites (issue 20 D)
			a, _ := args.([]any)
			lastArgs = make([]any, len(a))
			for i, v := range a {
				if s, ok := v.(string); ok {
					v = strings.Clone(s)
				}
				lastArgs[i] = v
			}
			mu.Unlock()
		}
	}))
	a := env.NewCompany(t)
	agentA, agentB, agentC := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	a.Delegate(t, agentB.ID, agentA.ID, nil)
	keyA := a.UserKey(t, agentA, "contacts:read")

	create := func(owner, first, last, profession string) (id, etag string) {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret, Body: map[string]any{
			"type": "private", "firstName": first, "lastName": last, "ownerId": owner,
			"profession": map[string]any{"profession": profession}}})
		if r.Status != 201 {
			t.Fatalf("create %s: %d %s", last, r.Status, r.Body)
		}
		var c struct{ ID string }
		r.Decode(t, &c)
		return c.ID, r.Header.Get("ETag")
	}
	ownA, _ := create(agentA.ID.String(), "Anna", "Müller", "Bäckerin")
	delegB, etagB := create(agentB.ID.String(), "Ben", "Müllerová", "Maler_in")
	otherC, etagC := create(agentC.ID.String(), "Clara", "Müller", "50% Teilzeit")

	search := func(q string) (ids []string, keys bool) {
		t.Helper()
		mu.Lock()
		lists = nil
		mu.Unlock()
		r := env.Do(t, apitest.Request{Path: "/contacts?limit=50&q=" + q, Key: keyA})
		if r.Status != 200 {
			t.Fatalf("q=%s: %d %s", q, r.Status, r.Body)
		}
		var page apitest.Page[struct{ ID string }]
		r.Decode(t, &page)
		for _, c := range page.Data {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		mu.Lock()
		defer mu.Unlock()
		if len(lists) != 1 {
			t.Fatalf("q=%s: %d list statements traced, want 1", q, len(lists))
		}
		return ids, strings.Contains(lists[0], "contact_search_keys")
	}
	want := func(ids ...string) []string { slices.Sort(ids); return ids }
	check := func(q string, keys bool, ids ...string) {
		t.Helper()
		got, usedKeys := search(q)
		if !slices.Equal(got, want(ids...)) {
			t.Errorf("q=%s: got %v, want %v", q, got, want(ids...))
		}
		if usedKeys != keys {
			t.Errorf("q=%s: through contact_search_keys %v, want %v", q, usedKeys, keys)
		}
	}

	check("m%C3%BCll", true, ownA, delegB) // C's Müller is not visible to A
	mu.Lock()
	keysQuery, keysArgs := lists[0], lastArgs // the statement of q=müll through the keys
	mu.Unlock()
	check("m%C3%BC", false, ownA, delegB)    // two characters: no window, the pg_trgm path
	check("M%C3%9CLLER", true, ownA, delegB) // q is lower-cased like search_text
	check("er_in", true, delegB)             // _ is a character, not a wildcard
	check("mal_r", true)                     // "_" as a wildcard would match "maler_in"
	check("50%25", true)                     // "50%": C's, invisible
	check("b%C3%A4ckerin", true, ownA)       // the profession
	check("anna%20m%C3%BCl", true)           // fields are separate: "anna\nmüller" does not hold "anna mül"
	check("kerin", true, ownA)

	patch := func(id, etag, body string) {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/contacts/" + id, Key: a.Secret, Body: body,
			Header: map[string]string{"If-Match": etag, "Content-Type": "application/merge-patch+json"}})
		if r.Status != 200 {
			t.Fatalf("patch %s: %d %s", id, r.Status, r.Body)
		}
	}
	patch(delegB, etagB, `{"lastName":"Schmidt"}`)
	check("m%C3%BCll", true, ownA)
	check("schmi", true, delegB)
	patch(otherC, etagC, `{"ownerId":"`+agentA.ID.String()+`"}`)
	check("m%C3%BCll", true, ownA, otherC)
	check("50%25", true, otherC)

	t.Run("the keys' condition is an index condition under the policies", func(t *testing.T) {
		// 2,000 more contacts of A's, none a match: walking the sort order would compute
		// contact_search_keys (COST 1000) for each, the keys' index finds the two at once,
		// if the condition may be an index condition under the policies (leakproof) and the
		// index's operator class serves its operator.
		ctx := context.Background()
		if err := env.Pinned(ctx, a.ID, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO contacts (id, company_id, type, first_name, last_name, sort_name,
				search_text, owner_id, created_at, updated_at, version, tags, labels, custom_fields, groups, sensitive)
				SELECT gen_random_uuid(), $1, 'private', 'P', 'Schmidt', 'schmidt', 'p' || E'\n' || 'schmidt' || i || E'\n', $2,
				       now(), now(), 1, '[]', '[]', '{}', '{}', '{}'
				FROM generate_series(1, 2000) AS i`, a.ID, agentA.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		plan := env.Explain(t, a.ID, agentA.ID, "own_and_delegated", keysQuery, keysArgs, "ANALYZE contacts")
		if !strings.Contains(plan, "Bitmap Index Scan on tenant_contacts_search_keys") ||
			!regexp.MustCompile(`Index Cond: \(+contact_search_keys\(owner_id, search_text\) @>> `).MatchString(plan) {
			t.Errorf("the keys' statement does not read tenant_contacts_search_keys:\n%s\n%s", keysQuery, plan)
		}
		t.Logf("%s\n%s", keysQuery, plan)
		var leakproof bool
		if err := env.OwnerDB.QueryRow(`SELECT proleakproof FROM pg_proc
			WHERE oid = 'pg_catalog.arraycontains(anyarray, anyarray)'::regprocedure`).Scan(&leakproof); err != nil {
			t.Fatal(err)
		}
		if leakproof {
			t.Error("pg_catalog.arraycontains is LEAKPROOF: @> and <@ of every array type skip the policies' order")
		}
	})
}
