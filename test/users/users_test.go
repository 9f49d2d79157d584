// Package users tests GET /users and GET /users/{userId}.
package users

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// listedUser is what the tests read of a User.
type listedUser struct {
	ID     uuid.UUID `json:"id"`
	Email  string    `json:"email"`
	Status string    `json:"status"`
}

func TestUsers_Get(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	env.Run(t, []apitest.Case{
		{Name: "own user", Key: a.Secret, Path: "/users/" + a.Admin.ID.String(), Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("ETag") != `"1"` {
					t.Errorf("ETag %q, want \"1\"", r.Header.Get("ETag"))
				}
			}},
		{Name: "other company's user is 404", Key: b.Secret, Path: "/users/" + a.Admin.ID.String(), Status: 404, Problem: "not_found"},
		{Name: "unknown id is 404", Key: a.Secret, Path: "/users/" + uuid.NewString(), Status: 404, Problem: "not_found"},
		{Name: "malformed id is 400", Key: a.Secret, Path: "/users/not-a-uuid", Status: 400, Problem: "invalid_id"},
		{Name: "no credential", Path: "/users/" + a.Admin.ID.String(), Status: 401, Problem: "missing_credential"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "company:read"), Path: "/users/" + a.Admin.ID.String(), Status: 403, Problem: "insufficient_scope"},
	})
}

func TestUsers_ListFilters(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	if _, err := env.AppDBSetUserStatus(ctx, a.ID, agent.ID, "inactive"); err != nil {
		t.Fatal(err)
	}
	count := func(want int) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[listedUser]
			r.Decode(t, &p)
			if len(p.Data) != want {
				t.Errorf("got %d users, want %d: %s", len(p.Data), want, r.Body)
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "all", Key: a.Secret, Path: "/users", Status: 200, Check: count(2)},
		{Name: "status inactive", Key: a.Secret, Path: "/users?status=inactive", Status: 200, Check: count(1)},
		{Name: "status suspended", Key: a.Secret, Path: "/users?status=suspended", Status: 200, Check: count(0)},
		{Name: "email exact, any case", Key: a.Secret, Path: "/users?email=" + url.QueryEscape(" "+upper(agent.Email)), Status: 200, Check: count(1)},
		{Name: "bad status", Key: a.Secret, Path: "/users?status=gone", Status: 422, Problem: "validation_failed",
			Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "bad email", Key: a.Secret, Path: "/users?email=nope", Status: 422, Problem: "validation_failed",
			Check: apitest.FieldErrors("email:invalid_email")},
		{Name: "every bad parameter listed", Key: a.Secret, Path: "/users?status=x&email=y&limit=0&cursor=zz", Status: 422,
			Check: apitest.FieldErrors("status:invalid_enum", "email:invalid_email", "limit:out_of_range", "cursor:invalid_cursor")},
		{Name: "limit 0", Key: a.Secret, Path: "/users?limit=0", Status: 422, Check: apitest.FieldErrors("limit:out_of_range")},
		{Name: "limit 201", Key: a.Secret, Path: "/users?limit=201", Status: 422, Check: apitest.FieldErrors("limit:out_of_range")},
		{Name: "limit abc", Key: a.Secret, Path: "/users?limit=abc", Status: 422, Check: apitest.FieldErrors("limit:invalid_integer")},
		{Name: "limit 200", Key: a.Secret, Path: "/users?limit=200", Status: 200},
		{Name: "limit 1", Key: a.Secret, Path: "/users?limit=1", Status: 200, Check: count(1)},
	})
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// TestUsers_WalkWhileInserting walks 10,000 users in pages of 200 while another goroutine
// inserts 1,000 more: each user that existed when the walk started comes back exactly once.
// Page 50's query is EXPLAINed: an index scan, no OFFSET.
func TestUsers_WalkWhileInserting(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lastList string
	var lastArgs []any
	env := apitest.New(t, app.WithSQLTrace(func(q string, args any) {
		if strings.Contains(q, `FROM "users"`) && strings.Contains(q, "ORDER BY") {
			mu.Lock()
			lastList, lastArgs = q, args.([]any)
			mu.Unlock()
		}
	}))
	ctx := context.Background()
	a := env.NewCompany(t)
	if err := env.InsertUsers(ctx, a.ID, "walk", 9999); err != nil {
		t.Fatal(err)
	}
	before := 10000 // plus the admin
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 50 {
			if err := env.InsertUsers(ctx, a.ID, fmt.Sprintf("during%d-", i), 20); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	seen := map[uuid.UUID]int{}
	cursor, pages := "", 0
	var page50 string
	var page50Args []any
	for {
		path := "/users?limit=200"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		var p apitest.Page[listedUser]
		r := env.Do(t, apitest.Request{Path: path, Key: a.Secret})
		if r.Status != 200 {
			t.Fatalf("page %d: %d %s", pages, r.Status, r.Body)
		}
		r.Decode(t, &p)
		for _, u := range p.Data {
			seen[u.ID]++
		}
		pages++
		if pages == 50 {
			mu.Lock()
			page50, page50Args = lastList, lastArgs
			mu.Unlock()
		}
		cursor = p.Pagination.NextCursor
		if !p.Pagination.HasMore {
			break
		}
	}
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("user %s returned %d times", id, n)
		}
	}
	if len(seen) < before {
		t.Errorf("walk saw %d users, want at least the %d that existed", len(seen), before)
	}
	if cursor == "" {
		t.Error("last page has no nextCursor")
	}
	if page50 == "" {
		t.Fatal("no list query traced for page 50")
	}
	if strings.Contains(strings.ToUpper(page50), "OFFSET") {
		t.Errorf("page 50 uses OFFSET: %s", page50)
	}
	plan := env.Explain(t, a.ID, uuid.Nil, "", page50, page50Args, "ANALYZE users") // fresh statistics, as autovacuum would have
	if !strings.Contains(plan, "Index") || strings.Contains(plan, "Seq Scan") {
		t.Errorf("page 50 is not an index scan:\n%s\n%s", page50, plan)
	}
	t.Logf("page 50: %s\n%s", page50, plan)
}

func TestUsers_Cursors(t *testing.T) {
	t.Parallel()
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	env := apitest.New(t, app.WithClock(clock))
	a, b := env.NewCompany(t), env.NewCompany(t)
	if err := env.InsertUsers(context.Background(), a.ID, "c", 5); err != nil {
		t.Fatal(err)
	}
	first := func(path, key string) string {
		var p apitest.Page[listedUser]
		env.Do(t, apitest.Request{Path: path, Key: key}).Decode(t, &p)
		return p.Pagination.NextCursor
	}
	cur := first("/users?limit=2", a.Secret)
	activeCur := first("/users?limit=2&status=active", a.Secret)
	tampered := []byte(cur)
	tampered[10] ^= 1
	env.Run(t, []apitest.Case{
		{Name: "cursor continues", Key: a.Secret, Path: "/users?limit=2&cursor=" + cur, Status: 200},
		{Name: "cursor with another limit continues", Key: a.Secret, Path: "/users?limit=3&cursor=" + cur, Status: 200},
		{Name: "tampered cursor", Key: a.Secret, Path: "/users?cursor=" + string(tampered), Status: 422, Check: apitest.FieldErrors("cursor:invalid_cursor")},
		{Name: "garbage cursor", Key: a.Secret, Path: "/users?cursor=%21%21", Status: 422, Check: apitest.FieldErrors("cursor:invalid_cursor")},
		{Name: "cursor of other filters", Key: a.Secret, Path: "/users?cursor=" + activeCur, Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "cursor of another company", Key: b.Secret, Path: "/users?cursor=" + cur, Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "cursor of the sandbox twin", Key: a.TestSecret, Path: "/users?cursor=" + cur, Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
	})
	mu.Lock()
	now = now.Add(24*time.Hour + time.Second)
	mu.Unlock()
	env.Run(t, []apitest.Case{
		{Name: "expired cursor", Key: a.Secret, Path: "/users?cursor=" + cur, Status: 422, Check: apitest.FieldErrors("cursor:cursor_expired")},
	})
}

func TestUsers_Labels(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	for _, tc := range []struct{ accept, lang, status, role string }{
		{"", "de", "Aktiv", "Administrator"},
		{"en-GB,en;q=0.9", "en", "Active", "Administrator"},
		{"fr", "de", "Aktiv", "Administrator"},
		{"de-DE", "de", "Aktiv", "Administrator"},
	} {
		r := env.Do(t, apitest.Request{Path: "/users/" + a.Admin.ID.String(), Key: a.Secret,
			Header: map[string]string{"Accept-Language": tc.accept}})
		var u struct{ StatusLabel, RoleLabel string }
		r.Decode(t, &u)
		if r.Header.Get("Content-Language") != tc.lang || u.StatusLabel != tc.status || u.RoleLabel != tc.role {
			t.Errorf("Accept-Language %q: %s %+v", tc.accept, r.Header.Get("Content-Language"), u)
		}
	}
}

// TestUsers_SandboxTwinsAreSynthetic: a user's sandbox twin has a synthetic name and address,
// never the real person's (sandbox data reaches integrators' test systems).
func TestUsers_SandboxTwinsAreSynthetic(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	u := env.NewUser(t, co, "agent")
	var live, twin struct {
		Email     string `json:"email"`
		FirstName string `json:"firstName"`
		LastName  string `json:"lastName"`
		Role      string `json:"role"`
	}
	env.Do(t, apitest.Request{Path: "/users/" + u.ID.String(), Key: co.Secret}).Decode(t, &live)
	env.Do(t, apitest.Request{Path: "/users/" + u.SandboxID.String(), Key: co.TestSecret}).Decode(t, &twin)
	if twin.Email != "sandbox+"+u.ID.String()+"@example.invalid" || twin.FirstName != "Sandbox" ||
		twin.LastName == live.LastName || twin.Role != live.Role {
		t.Errorf("sandbox twin %+v of %+v", twin, live)
	}
}
