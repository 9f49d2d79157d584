// Package openapi_test calls every documented endpoint, happy paths and main error cases,
// through the harness, which validates each request and response against the OpenAPI document.
package openapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// me is GET /me as tests read it.
type me struct {
	Company struct {
		ID      uuid.UUID `json:"id"`
		Sandbox bool      `json:"sandbox"`
	} `json:"company"`
	User *struct {
		ID   uuid.UUID `json:"id"`
		Role string    `json:"role"`
	} `json:"user"`
	Credential struct {
		Prefix string `json:"prefix"`
		Kind   string `json:"kind"`
		Env    string `json:"env"`
	} `json:"credential"`
	Scopes []string `json:"scopes"`
}

type user struct {
	ID     uuid.UUID `json:"id"`
	Email  string    `json:"email"`
	Status string    `json:"status"`
}

func hasETag(t *testing.T, r *apitest.Response) {
	t.Helper()
	if r.Header.Get("ETag") == "" {
		t.Errorf("no ETag on a single resource")
	}
}

func TestOpenAPI_Meta(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	var etag string
	env.Run(t, []apitest.Case{
		{Name: "healthz answers without a key", Path: "//healthz", Status: 200},
		{Name: "readyz answers without a key", Path: "//readyz", Status: 200},
		{Name: "the document is public", Path: "/openapi.json", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var doc struct {
				OpenAPI string `json:"openapi"`
			}
			r.Decode(t, &doc)
			if doc.OpenAPI != "3.1.0" {
				t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
			}
			etag = r.Header.Get("ETag")
		}},
		{Name: "a wrong key does not matter for the document", Key: "sk_live_wrong", Path: "/openapi.json", Status: 200},
	})
	env.Run(t, []apitest.Case{
		{Name: "an unchanged document is 304", Path: "/openapi.json", Header: map[string]string{"If-None-Match": etag},
			Status: 304},
		{Name: "an unknown route is 404", Path: "/no-such-thing", Status: 404, Problem: "route_not_found"},
		{Name: "an unknown route is 404 whatever the key", Key: "sk_live_wrong", Path: "/no-such-thing", Status: 404,
			Problem: "route_not_found"},
		{Name: "a wrong method is 405", Method: "POST", Path: "/users", Body: `{}`, Status: 405,
			Problem: "method_not_allowed"},
		{Name: "a wrong method on the document is 405", Method: "DELETE", Path: "/openapi.json", Status: 405,
			Problem: "method_not_allowed"},
	})
}

func TestOpenAPI_Me(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")

	env.Run(t, []apitest.Case{
		{Name: "company key has no user and every scope", Key: co.Secret, Path: "/me", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var m me
				r.Decode(t, &m)
				if m.Company.ID != co.ID || m.User != nil || m.Credential.Kind != "secret" || m.Credential.Env != "live" {
					t.Errorf("got %+v", m)
				}
				if len(m.Scopes) < 10 {
					t.Errorf("scopes %v, want * spelled out", m.Scopes)
				}
			}},
		{Name: "user key names the user", Key: co.UserKey(t, agent, "contacts:read"), Path: "/me", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var m me
				r.Decode(t, &m)
				if m.User == nil || m.User.ID != agent.ID || m.User.Role != "agent" {
					t.Errorf("user %+v, want %s", m.User, agent.ID)
				}
				if len(m.Scopes) != 1 || m.Scopes[0] != "contacts:read" {
					t.Errorf("scopes %v", m.Scopes)
				}
			}},
		{Name: "test key acts on the sandbox twin", Key: co.TestSecret, Path: "/me", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var m me
				r.Decode(t, &m)
				if m.Company.ID != co.SandboxID || !m.Company.Sandbox || m.Credential.Env != "test" {
					t.Errorf("got %+v", m)
				}
			}},
		{Name: "no key is 401", Path: "/me", Status: 401, Problem: "missing_credential",
			Check: wwwAuthenticate},
		{Name: "not bearer is 401", Path: "/me", Header: map[string]string{"Authorization": "Basic dXNlcjpwYXNz"},
			Status: 401, Problem: "malformed_credential", Check: wwwAuthenticate},
		{Name: "unknown key is 401", Key: "sk_live_" + strings.Repeat("x", 43), Path: "/me", Status: 401,
			Problem: "invalid_credential", Check: wwwAuthenticate},
		{Name: "publishable key is 401", Key: co.Publishable, Path: "/me", Status: 401,
			Problem: "publishable_key_not_allowed", Check: wwwAuthenticate},
	})
}

func wwwAuthenticate(t *testing.T, r *apitest.Response) {
	t.Helper()
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate %q, want Bearer", r.Header.Get("WWW-Authenticate"))
	}
}

func TestOpenAPI_Company(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t, "leads", "customer_portal")

	env.Run(t, []apitest.Case{
		{Name: "owner reads it", Key: co.Secret, Path: "/company", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			hasETag(t, r)
			var c struct {
				ID       uuid.UUID `json:"id"`
				Features []string  `json:"features"`
			}
			r.Decode(t, &c)
			if c.ID != co.ID || len(c.Features) != 2 {
				t.Errorf("got %+v", c)
			}
		}},
		{Name: "company scope is enough", Key: co.KeyWithScopes(t, "company:read"), Path: "/company", Status: 200,
			Check: hasETag},
		{Name: "no key is 401", Path: "/company", Status: 401, Problem: "missing_credential"},
		{Name: "read scope missing is 403", Key: co.KeyWithScopes(t, "users:read"), Path: "/company", Status: 403,
			Problem: "insufficient_scope"},
	})
}

func TestOpenAPI_Users(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	second := env.NewUser(t, a, "agent")

	page := func(path string) apitest.Page[user] {
		t.Helper()
		r := env.Do(t, apitest.Request{Key: a.Secret, Path: path})
		if r.Status != 200 {
			t.Fatalf("GET %s: status %d: %s", path, r.Status, r.Body)
		}
		var p apitest.Page[user]
		r.Decode(t, &p)
		return p
	}
	first := page("/users?limit=1")
	if len(first.Data) != 1 || first.Data[0].ID != a.Admin.ID || !first.Pagination.HasMore {
		t.Fatalf("first page %+v", first)
	}
	next := page("/users?limit=1&cursor=" + url.QueryEscape(first.Pagination.NextCursor))
	if len(next.Data) != 1 || next.Data[0].ID != second.ID || next.Pagination.HasMore {
		t.Fatalf("second page %+v", next)
	}
	cur := url.QueryEscape(first.Pagination.NextCursor)

	env.Run(t, []apitest.Case{
		{Name: "lists the company's users", Key: a.Secret, Path: "/users", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[user]
				r.Decode(t, &p)
				if len(p.Data) != 2 || p.Pagination.HasMore || p.Pagination.NextCursor == "" {
					t.Errorf("got %+v", p)
				}
			}},
		{Name: "filters by status", Key: a.Secret, Path: "/users?status=suspended", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[user]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("got %+v", p)
				}
			}},
		{Name: "filters by email", Key: a.Secret, Path: "/users?email=" + url.QueryEscape(second.Email), Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[user]
				r.Decode(t, &p)
				if len(p.Data) != 1 || p.Data[0].ID != second.ID {
					t.Errorf("got %+v", p)
				}
			}},
		{Name: "largest page", Key: a.Secret, Path: "/users?limit=200", Status: 200},
		{Name: "users scope is enough", Key: a.KeyWithScopes(t, "users:read"), Path: "/users", Status: 200},
		{Name: "no key is 401", Path: "/users", Status: 401, Problem: "missing_credential"},
		{Name: "read scope missing is 403", Key: a.KeyWithScopes(t, "company:read"), Path: "/users", Status: 403,
			Problem: "insufficient_scope"},
		{Name: "limit 0 is 422", Key: a.Secret, Path: "/users?limit=0", Status: 422, Problem: "validation_failed",
			Check: fieldError("limit", "out_of_range")},
		{Name: "limit 201 is 422", Key: a.Secret, Path: "/users?limit=201", Status: 422,
			Check: fieldError("limit", "out_of_range")},
		{Name: "limit not a number is 422", Key: a.Secret, Path: "/users?limit=ten", Status: 422,
			Check: fieldError("limit", "invalid_integer")},
		{Name: "unknown status is 422", Key: a.Secret, Path: "/users?status=retired", Status: 422,
			Check: fieldError("status", "invalid_enum")},
		{Name: "bad email is 422", Key: a.Secret, Path: "/users?email=not-an-address", Status: 422,
			Check: fieldError("email", "invalid_email")},
		{Name: "forged cursor is 422", Key: a.Secret, Path: "/users?cursor=AAAA", Status: 422,
			Check: fieldError("cursor", "invalid_cursor")},
		{Name: "cursor with other filters is 422", Key: a.Secret, Path: "/users?limit=1&status=active&cursor=" + cur,
			Status: 422, Check: fieldError("cursor", "cursor_mismatch")},
		{Name: "other company's cursor is 422", Key: b.Secret, Path: "/users?limit=1&cursor=" + cur, Status: 422,
			Check: fieldError("cursor", "cursor_mismatch")},
		{Name: "every bad parameter is listed", Key: a.Secret, Path: "/users?limit=0&status=x&email=y", Status: 422,
			Check: func(t *testing.T, r *apitest.Response) {
				if p := r.Problem(t); len(p.Errors) != 3 {
					t.Errorf("errors %+v, want 3", p.Errors)
				}
			}},
	})
}

func fieldError(field, code string) func(t *testing.T, r *apitest.Response) {
	return func(t *testing.T, r *apitest.Response) {
		t.Helper()
		p := r.Problem(t)
		for _, e := range p.Errors {
			if e.Field == field && e.Code == code {
				return
			}
		}
		t.Errorf("errors %+v, want %s %s", p.Errors, field, code)
	}
}

func TestOpenAPI_User(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	path := "/users/" + a.Admin.ID.String()

	env.Run(t, []apitest.Case{
		{Name: "owner reads it", Key: a.Secret, Path: path, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			hasETag(t, r)
			var u user
			r.Decode(t, &u)
			if u.ID != a.Admin.ID || u.Email != a.Admin.Email || u.Status != "active" {
				t.Errorf("got %+v", u)
			}
		}},
		{Name: "users scope is enough", Key: a.KeyWithScopes(t, "users:read"), Path: path, Status: 200, Check: hasETag},
		{Name: "other company gets 404", Key: b.Secret, Path: path, Status: 404, Problem: "not_found"},
		{Name: "unknown id is 404", Key: a.Secret, Path: "/users/" + uuid.NewString(), Status: 404, Problem: "not_found"},
		{Name: "not a uuid is 400", Key: a.Secret, Path: "/users/42", Status: 400, Problem: "invalid_id"},
		{Name: "no key is 401", Path: path, Status: 401, Problem: "missing_credential"},
		{Name: "read scope missing is 403", Key: a.KeyWithScopes(t, "company:read"), Path: path, Status: 403,
			Problem: "insufficient_scope"},
	})
}

// recorder is a testing.TB that keeps Errorf calls instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

// TestOpenAPI_Harness checks the harness itself: it reports a served route the document does not
// list (test routes under /_test/ aside, whose errors must still be problems), and lets through
// invalid requests that got their error answer.
func TestOpenAPI_Harness(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(func(v1 fiber.Router, m app.Middleware) {
		v1.Get("/undocumented", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ok": true}) })
		v1.Get("/_test/ok", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ok": true}) })
		v1.Get("/_test/not-a-problem", func(c *fiber.Ctx) error {
			return c.Status(fiber.StatusTeapot).JSON(fiber.Map{"oops": true})
		})
	}))
	co := env.NewCompany(t)

	rec := &recorder{TB: t}
	if r := env.Do(rec, apitest.Request{Path: "/undocumented"}); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "not in the OpenAPI document") {
		t.Errorf("undocumented route: harness said %q, want one error naming it", rec.errors)
	}

	rec = &recorder{TB: t}
	env.Do(rec, apitest.Request{Path: "/_test/ok"})
	if len(rec.errors) != 0 {
		t.Errorf("test route: harness said %q, want nothing", rec.errors)
	}
	rec = &recorder{TB: t}
	env.Do(rec, apitest.Request{Path: "/_test/not-a-problem"})
	if len(rec.errors) != 1 {
		t.Errorf("test route answering an error that is no problem: harness said %q, want one error", rec.errors)
	}

	for _, path := range []string{"/users?limit=0", "/users/42", "/users?email=x", "/no-such-thing"} {
		rec := &recorder{TB: t}
		r := env.Do(rec, apitest.Request{Key: co.Secret, Path: path})
		if r.Status < 400 || len(rec.errors) != 0 {
			t.Errorf("GET %s: status %d, harness said %q, want an error answer and no report", path, r.Status, rec.errors)
		}
	}

	rec = &recorder{TB: t}
	env.Do(rec, apitest.Request{Method: http.MethodHead, Key: co.Secret, Path: "/me"})
	if len(rec.errors) != 0 {
		t.Errorf("HEAD /me: harness said %q", rec.errors)
	}
}
