package contacts

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// searchRow is a contact of TestContacts_RestrictedSearch as the test inserted it.
type searchRow struct {
	id               uuid.UUID
	owner            uuid.UUID
	last, sort       string
	created, updated int // seconds after 2026-01-01
	vip              bool
}

// TestContacts_RestrictedSearch: q for user-bound keys that see their own and delegated
// contacts only (issue 8): agent A with a valid delegation from B, an expired one from C and
// one from D that expires during the test; agent Z with no delegation; agent M deputising for
// 150 colleagues; the company key for comparison. In every sort, walked a few contacts per
// page, each visible match comes exactly once and in order, and no other contact ever comes.
func TestContacts_RestrictedSearch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	a := env.NewCompany(t)
	agentA, agentB, agentC := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	agentD, agentZ, agentM := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	if err := env.InsertUsers(ctx, a.ID, "deputy", 150); err != nil {
		t.Fatal(err)
	}
	deputies, err := env.UserIDs(ctx, a.ID, "deputy")
	if err != nil || len(deputies) != 150 {
		t.Fatalf("deputies: %d, %v", len(deputies), err)
	}
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	a.Delegate(t, agentB.ID, agentA.ID, nil)
	a.Delegate(t, agentC.ID, agentA.ID, &past)
	fromD := a.Delegate(t, agentD.ID, agentA.ID, &future)
	for _, d := range deputies {
		a.Delegate(t, d, agentM.ID, nil)
	}

	// 600 contacts of A, B, C, D, Z and M in turn, 600 of the deputies; a third Müllers, spread over the owners;
	// five share each created_at, forty sort names: the id decides between equals.
	main := []uuid.UUID{agentA.ID, agentB.ID, agentC.ID, agentD.ID, agentZ.ID, agentM.ID}
	var all []searchRow
	for i := range 1200 {
		r := searchRow{id: uuid.New(), last: []string{"Müller", "Schmidt", "Meier"}[(i/7)%3], sort: fmt.Sprintf("n%03d", i%40),
			created: i / 5, updated: (i * 37) % 1200, vip: i%4 == 0}
		if i < 600 {
			r.owner = main[i%len(main)]
		} else {
			r.owner = deputies[i%len(deputies)]
		}
		all = append(all, r)
	}
	ids, owners, lasts, sorts, created, updated, vips := make([]string, len(all)), make([]string, len(all)),
		make([]string, len(all)), make([]string, len(all)), make([]string, len(all)), make([]string, len(all)), make([]string, len(all))
	for i, r := range all {
		ids[i], owners[i], lasts[i], sorts[i] = r.id.String(), r.owner.String(), r.last, r.sort
		created[i], updated[i], vips[i] = fmt.Sprint(r.created), fmt.Sprint(r.updated), fmt.Sprint(r.vip)
	}
	arr := func(s []string) string { return "{" + strings.Join(s, ",") + "}" }
	err = env.Pinned(ctx, a.ID, func(tx *sql.Tx) error {
		// The first name is the sort key: sort_name is "last first" (the database derives it and
		// search_text from the row), and only the Müllers are compared.
		_, err := tx.ExecContext(ctx, `INSERT INTO contacts (id, company_id, type, first_name, last_name, owner_id,
			created_at, updated_at, version, tags, labels, custom_fields, groups, sensitive)
			SELECT u.id, $1, 'private', u.sort, u.last, u.owner,
			       timestamptz '2026-01-01' + u.created * interval '1 second', timestamptz '2026-01-01' + u.updated * interval '1 second',
			       1, CASE WHEN u.vip THEN '["vip"]'::jsonb ELSE '[]'::jsonb END, '[]', '{}', '{}', '{}'
			FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::int[], $7::int[], $8::bool[]) AS u(id, owner, last, sort, created, updated, vip)`,
			a.ID, arr(ids), arr(owners), arr(lasts), arr(sorts), arr(created), arr(updated), arr(vips))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// expect: the Müllers of owners (all when nil) that pass keep, in the order of sort.
	expect := func(owners []uuid.UUID, sort string, keep func(searchRow) bool) []string {
		var rows []searchRow
		for _, r := range all {
			if r.last == "Müller" && (owners == nil || slices.Contains(owners, r.owner)) && (keep == nil || keep(r)) {
				rows = append(rows, r)
			}
		}
		desc := strings.HasPrefix(sort, "-")
		slices.SortFunc(rows, func(x, y searchRow) int {
			c := 0
			switch strings.TrimPrefix(sort, "-") {
			case "createdAt":
				c = cmp.Compare(x.created, y.created)
			case "updatedAt":
				c = cmp.Compare(x.updated, y.updated)
			case "name":
				c = cmp.Compare(x.sort, y.sort)
			}
			if c == 0 {
				c = cmp.Compare(x.id.String(), y.id.String())
			}
			if desc {
				return -c
			}
			return c
		})
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.id.String()
		}
		return out
	}
	// walk follows the cursor of path with key from cursor (empty: the first page) and
	// returns the ids in the order they came.
	walk := func(t *testing.T, key, cursor, path string) []string {
		t.Helper()
		var got []string
		for pages := 0; ; pages++ {
			p := path
			if cursor != "" {
				p += "&cursor=" + cursor
			}
			r := env.Do(t, apitest.Request{Method: "GET", Path: p, Key: key})
			if r.Status != 200 {
				t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
			}
			var pg apitest.Page[contact]
			r.Decode(t, &pg)
			for _, c := range pg.Data {
				got = append(got, c.ID)
			}
			if !pg.Pagination.HasMore || pages > 200 {
				return got
			}
			cursor = pg.Pagination.NextCursor
		}
	}
	same := func(t *testing.T, got, want []string) {
		t.Helper()
		seen := map[string]int{}
		for _, id := range got {
			if seen[id]++; seen[id] == 2 {
				t.Errorf("contact %s came twice", id)
			}
			if !slices.Contains(want, id) {
				t.Errorf("contact %s came but must not", id)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %d contacts, want %d in order", len(got), len(want))
		}
	}

	keyA, keyZ, keyM := a.UserKey(t, agentA), a.UserKey(t, agentZ), a.UserKey(t, agentM)
	visibleA := []uuid.UUID{agentA.ID, agentB.ID, agentD.ID}
	visibleM := append([]uuid.UUID{agentM.ID}, deputies...)
	for _, sort := range sortValues {
		t.Run(sort, func(t *testing.T) {
			path := "/contacts?q=m%C3%BCll&limit=7&sort=" + sort
			same(t, walk(t, keyA, "", path), expect(visibleA, sort, nil))
			same(t, walk(t, keyZ, "", path), expect([]uuid.UUID{agentZ.ID}, sort, nil))
			same(t, walk(t, keyM, "", strings.Replace(path, "limit=7", "limit=40", 1)), expect(visibleM, sort, nil))
			same(t, walk(t, a.Secret, "", strings.Replace(path, "limit=7", "limit=50", 1)), expect(nil, sort, nil))
		})
	}
	t.Run("with other filters", func(t *testing.T) {
		same(t, walk(t, keyA, "", "/contacts?q=m%C3%BCll&tag=vip&limit=5"), expect(visibleA, "-createdAt", func(r searchRow) bool { return r.vip }))
		same(t, walk(t, keyA, "", "/contacts?q=m%C3%BCll&limit=5&ownerId="+agentB.ID.String()), expect([]uuid.UUID{agentB.ID}, "-createdAt", nil))
		same(t, walk(t, keyA, "", "/contacts?q=m%C3%BCll&limit=5&ownerId="+agentC.ID.String()), nil)
		// updatedSince without offset is Europe/Berlin: 01:10 there is 600 s after 2026-01-01 UTC
		same(t, walk(t, keyA, "", "/contacts?q=m%C3%BCll&limit=5&sort=updatedAt&updatedSince=2026-01-01T01:10:00"),
			expect(visibleA, "updatedAt", func(r searchRow) bool { return r.updated >= 600 }))
		// The statement with LIKE goes out unnamed, its parameters untyped (tenancy.CustomPlans):
		// every filter's value must still reach PostgreSQL as its column's type.
		for _, key := range []string{keyA, a.Secret} {
			var owners []uuid.UUID
			if key == keyA {
				owners = visibleA
			}
			same(t, walk(t, key, "", "/contacts?q=m%C3%BCll&limit=50&type=private"), expect(owners, "-createdAt", nil))
			for _, filter := range []string{"type=business", "label=red", "email=nobody%40example.com", "phone=%2B4930123456"} {
				same(t, walk(t, key, "", "/contacts?q=m%C3%BCll&limit=50&"+filter), nil)
			}
		}
	})
	t.Run("a cursor of the agent's search continues for the company key", func(t *testing.T) {
		// the first page as A, the rest as the company key: A's cursor is a position in the
		// list, valid for every key of the company
		first := walkOne(t, env, keyA, "/contacts?q=m%C3%BCll&limit=5")
		wantA := expect(visibleA, "-createdAt", nil)
		if !slices.Equal(first.ids, wantA[:5]) {
			t.Fatalf("first page %v, want %v", first.ids, wantA[:5])
		}
		rest := walk(t, a.Secret, first.next, "/contacts?q=m%C3%BCll&limit=50")
		every := expect(nil, "-createdAt", nil)
		at := slices.Index(every, first.ids[4])
		same(t, rest, every[at+1:])
	})
	t.Run("after the delegation from D expires", func(t *testing.T) {
		err := env.Operator(ctx, a.ID, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE delegations SET valid_until = now() - interval '1 second' WHERE id = $1`, fromD)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		same(t, walk(t, keyA, "", "/contacts?q=m%C3%BCll&limit=7"), expect([]uuid.UUID{agentA.ID, agentB.ID}, "-createdAt", nil))
	})
}

// sortValues are the sort values of GET /contacts.
var sortValues = []string{"name", "-name", "createdAt", "-createdAt", "updatedAt", "-updatedAt"}

type onePage struct {
	ids  []string
	next string
}

func walkOne(t *testing.T, env *apitest.Env, key, path string) onePage {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "GET", Path: path, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var pg apitest.Page[contact]
	r.Decode(t, &pg)
	var out onePage
	for _, c := range pg.Data {
		out.ids = append(out.ids, c.ID)
	}
	out.next = pg.Pagination.NextCursor
	return out
}
