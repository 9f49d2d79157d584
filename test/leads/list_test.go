package leads

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func ids(t *testing.T, r *apitest.Response) []string {
	t.Helper()
	var p apitest.Page[lead]
	r.Decode(t, &p)
	out := []string{}
	for _, l := range p.Data {
		out = append(out, l.ID)
	}
	return out
}

func TestLeads_ListFilters(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	portal := env.NewCompany(t, "customer_portal")
	agent := env.NewUser(t, a, "agent")
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/lead-stages", Key: a.Secret, Body: `{"name":"Angebot"}`})
	var angebot stage
	r.Decode(t, &angebot)

	anna := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Anna", "lastName": "Berger",
		"email": "anna.berger@example.com", "phone": "0170 1234567", "source": "website", "ownerId": agent.ID.String()})
	bernd := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Bernd", "lastName": "Müller",
		"email": "b.mueller@example.org", "source": "referral", "stageId": angebot.ID})
	percent := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "100%", "phone": "+43 1 234567"})
	time.Sleep(10 * time.Millisecond)
	since := time.Now().UTC()
	time.Sleep(10 * time.Millisecond)
	env.Do(t, apitest.Request{Method: "PATCH", Path: "/leads/" + bernd.ID, Key: a.Secret, Body: `{"notes":"later"}`})

	want := func(leads ...lead) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			t.Helper()
			exp := []string{}
			for _, l := range leads {
				exp = append(exp, l.ID)
			}
			if got := ids(t, r); fmt.Sprint(got) != fmt.Sprint(exp) {
				t.Errorf("got %v, want %v", got, exp)
			}
		}
	}
	q := url.QueryEscape
	env.Run(t, []apitest.Case{
		{Name: "oldest first", Key: a.Secret, Path: "/leads", Status: 200, Check: want(anna, bernd, percent)},
		{Name: "search by last name, any case", Key: a.Secret, Path: "/leads?search=berg", Status: 200, Check: want(anna)},
		{Name: "search by full name", Key: a.Secret, Path: "/leads?search=" + q("anna ber"), Status: 200, Check: want(anna)},
		{Name: "search by umlaut name", Key: a.Secret, Path: "/leads?search=" + q("MÜLLER"), Status: 200, Check: want(bernd)},
		{Name: "search by e-mail", Key: a.Secret, Path: "/leads?search=example.org", Status: 200, Check: want(bernd)},
		{Name: "search by phone in another format", Key: a.Secret, Path: "/leads?search=" + q("+49 170 1234567"), Status: 200, Check: want(anna)},
		{Name: "search by phone digits", Key: a.Secret, Path: "/leads?search=1234567", Status: 200, Check: want(anna, percent)},
		{Name: "a percent sign is no wildcard", Key: a.Secret, Path: "/leads?search=" + q("0%"), Status: 200, Check: want(percent)},
		{Name: "stage", Key: a.Secret, Path: "/leads?stageId=" + angebot.ID, Status: 200, Check: want(bernd)},
		{Name: "source", Key: a.Secret, Path: "/leads?source=website", Status: 200, Check: want(anna)},
		{Name: "owner", Key: a.Secret, Path: "/leads?ownerId=" + agent.ID.String(), Status: 200, Check: want(anna)},
		{Name: "not converted", Key: a.Secret, Path: "/leads?converted=false", Status: 200, Check: want(anna, bernd, percent)},
		{Name: "converted", Key: a.Secret, Path: "/leads?converted=true", Status: 200, Check: want()},
		{Name: "updated since (UTC)", Key: a.Secret, Path: "/leads?updatedSince=" + q(since.Format(time.RFC3339Nano)), Status: 200, Check: want(bernd)},
		{Name: "updated since (Berlin local time)", Key: a.Secret, Status: 200, Check: want(bernd),
			Path: "/leads?updatedSince=" + q(since.In(mustBerlin(t)).Format("2006-01-02T15:04:05.999999999"))},
		{Name: "filters combine", Key: a.Secret, Path: "/leads?source=website&stageId=" + angebot.ID, Status: 200, Check: want()},
		{Name: "search too short", Key: a.Secret, Path: "/leads?search=a", Status: 422, Check: apitest.FieldErrors("search:too_short")},
		{Name: "every bad parameter is listed", Key: a.Secret, Status: 422,
			Path: "/leads?updatedSince=yesterday&search=x&stageId=1&source=tv&ownerId=2&converted=yes&includeTest=1&limit=0&cursor=zz",
			Check: apitest.FieldErrors("updatedSince:invalid_datetime", "search:too_short", "stageId:invalid_uuid", "ownerId:invalid_uuid",
				"source:invalid_enum", "converted:invalid_boolean", "includeTest:invalid_boolean", "limit:out_of_range", "cursor:invalid_cursor")},
		{Name: "no key", Path: "/leads", Status: 401, Problem: "missing_credential"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "users:read"), Path: "/leads", Status: 403, Problem: "insufficient_scope"},
		{Name: "feature not licensed", Key: portal.Secret, Path: "/leads", Status: 403, Problem: "feature_not_licensed"},
	})
}

func mustBerlin(t *testing.T) *time.Location {
	t.Helper()
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLeads_Walk pages through 230 leads while more are created: every lead that existed when
// the walk began comes back exactly once, in order; the cursor is bound to list, filters and
// company.
func TestLeads_Walk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	var before []string
	for _, id := range addLeads(t, env, a.ID, 230) {
		before = append(before, id)
	}
	seen := map[string]int{}
	var order []string
	path := "/leads?limit=50"
	var firstCursor string
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("walk does not end")
		}
		r := env.Do(t, apitest.Request{Path: path, Key: a.Secret})
		if r.Status != 200 {
			t.Fatalf("page %d: %d %s", pages, r.Status, r.Body)
		}
		var p apitest.Page[lead]
		r.Decode(t, &p)
		for _, l := range p.Data {
			seen[l.ID]++
			order = append(order, l.ID)
		}
		if pages == 0 {
			firstCursor = p.Pagination.NextCursor
			apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"email": "during@example.com"}) // lands at the end
		}
		if !p.Pagination.HasMore {
			break
		}
		path = "/leads?limit=50&cursor=" + url.QueryEscape(p.Pagination.NextCursor)
	}
	for i, id := range before {
		if seen[id] != 1 {
			t.Fatalf("lead %d seen %d times", i, seen[id])
		}
		if order[i] != id {
			t.Fatalf("position %d: got %s, want %s", i, order[i], id)
		}
	}
	if len(order) != 231 {
		t.Errorf("walked %d leads, want 231 (230 and the one created during the walk)", len(order))
	}
	c := url.QueryEscape(firstCursor)
	env.Run(t, []apitest.Case{
		{Name: "cursor with other filters", Key: a.Secret, Path: "/leads?source=website&cursor=" + c, Status: 422,
			Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "cursor of another company", Key: b.Secret, Path: "/leads?cursor=" + c, Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "cursor of another list", Key: a.Secret, Path: "/users?cursor=" + c, Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "the limit may change", Key: a.Secret, Path: "/leads?limit=200&cursor=" + c, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if got := ids(t, r); len(got) != 181 || got[0] != before[50] {
				t.Errorf("%d leads from the first cursor, want 181", len(got))
			}
		}},
	})
}

// addLeads stores n leads one after another (distinct createdAt) straight in the database.
func addLeads(t *testing.T, env *apitest.Env, companyID uuid.UUID, n int) []string {
	t.Helper()
	ctx := context.Background()
	tx, err := env.AppDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', $1, true)", companyID.String()); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, `INSERT INTO leads (id, company_id, first_name, last_name, email, email_key, notes,
			additional_fields, stage_id, converted, test, submissions, version, created_at, updated_at)
		SELECT gen_random_uuid(), $1, 'Walk', i::text, 'walk' || i || '@example.com', 'walk' || i || '@example.com', '',
			'{}', (SELECT id FROM lead_stages WHERE key = 'new'), false, false, 0, 1,
			now() - interval '1 hour' + i * interval '1 millisecond', now()
		FROM generate_series(1, $2) AS i RETURNING id, last_name::int`, companyID, n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, n)
	for rows.Next() {
		var id string
		var i int
		if err := rows.Scan(&id, &i); err != nil {
			t.Fatal(err)
		}
		out[i-1] = id // RETURNING promises no order
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return out
}
