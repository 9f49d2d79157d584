// Package auth tests credentials, scopes, roles and features, and the problems every bad request
// gets: none of them may answer 500.
package auth

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// testRoutes are mounted only in this package's server: a JSON POST (no public POST exists
// yet), a feature-gated route and an admin route.
func testRoutes(v1 fiber.Router, m app.Middleware) {
	v1.Post("/_test/echo", m.Auth, func(c *fiber.Ctx) error {
		var in struct {
			Name string `json:"name"`
		}
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		return c.JSON(in)
	})
	v1.Get("/_test/leads", m.Auth, policy.Require("leads:read"), func(c *fiber.Ctx) error { return c.JSON(fiber.Map{}) })
	v1.Post("/_test/admin", m.Auth, policy.Require("admin:write"), func(c *fiber.Ctx) error { return c.JSON(fiber.Map{}) })
	v1.Get("/_test/panic", m.Auth, func(c *fiber.Ctx) error { panic("boom") })
}

func TestAuth_Credentials(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(testRoutes))
	ctx := context.Background()
	a := env.NewCompany(t)

	deactivated := a.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive})
	if _, err := env.Ops.DeactivateKey(ctx, deactivated.ID.String()); err != nil {
		t.Fatal(err)
	}
	deleted := a.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive})
	if err := env.Ops.DeleteKey(ctx, deleted.Prefix); err != nil {
		t.Fatal(err)
	}
	unknown, _, _ := tenancy.NewKey(tenancy.KindSecret, tenancy.EnvLive)

	env.Run(t, []apitest.Case{
		{Name: "valid key", Key: a.Secret, Path: "/me", Status: 200},
		{Name: "missing key", Path: "/me", Status: 401, Problem: "missing_credential",
			Check: func(t *testing.T, r *apitest.Response) {
				if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
				}
			}},
		{Name: "basic auth", Path: "/me", Header: map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, Status: 401, Problem: "malformed_credential"},
		{Name: "bearer without key", Path: "/me", Header: map[string]string{"Authorization": "Bearer "}, Status: 401, Problem: "malformed_credential"},
		{Name: "not a key", Key: "hello", Path: "/me", Status: 401, Problem: "invalid_credential"},
		{Name: "unknown key", Key: unknown, Path: "/me", Status: 401, Problem: "invalid_credential"},
		{Name: "truncated key", Key: a.Secret[:20], Path: "/me", Status: 401, Problem: "invalid_credential"},
		{Name: "deactivated key", Key: deactivated.Secret, Path: "/me", Status: 401, Problem: "invalid_credential"},
		{Name: "deleted key", Key: deleted.Secret, Path: "/me", Status: 401, Problem: "invalid_credential"},
		{Name: "publishable key on v1", Key: a.Publishable, Path: "/me", Status: 401, Problem: "publishable_key_not_allowed"},
		{Name: "publishable key as X-API-Key on v1", Path: "/me", Header: map[string]string{"X-API-Key": a.Publishable}, Status: 401, Problem: "missing_credential"},
		{Name: "missing scope names it", Key: a.KeyWithScopes(t, "company:read"), Path: "/users", Status: 403, Problem: "insufficient_scope",
			Check: func(t *testing.T, r *apitest.Response) {
				if p := r.Problem(t); !strings.Contains(p.Detail, "users:read") {
					t.Errorf("detail %q does not name users:read", p.Detail)
				}
			}},
		{Name: "write implies read", Key: a.KeyWithScopes(t, "users:write"), Path: "/users", Status: 200},
		{Name: "me needs no scope", Key: a.KeyWithScopes(t, "leads:read"), Path: "/me", Status: 200},
		{Name: "unknown route", Key: a.Secret, Path: "/nothing-here", Status: 404, Problem: "route_not_found"},
		{Name: "unknown route without key", Path: "/nothing-here", Status: 404, Problem: "route_not_found"},
		{Name: "wrong method", Key: a.Secret, Method: "DELETE", Path: "/me", Status: 405, Problem: "method_not_allowed",
			Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("Allow") != "GET" {
					t.Errorf("Allow %q, want GET", r.Header.Get("Allow"))
				}
			}},
		{Name: "malformed JSON", Key: a.Secret, Method: "POST", Path: "/_test/echo", Body: `{"name":`, Status: 400, Problem: "malformed_json"},
		{Name: "two JSON values", Key: a.Secret, Method: "POST", Path: "/_test/echo", Body: `{"name":"a"}{}`, Status: 400, Problem: "malformed_json"},
		{Name: "wrong field type", Key: a.Secret, Method: "POST", Path: "/_test/echo", Body: `{"name":1}`, Status: 422, Problem: "validation_failed",
			Check: func(t *testing.T, r *apitest.Response) {
				if p := r.Problem(t); len(p.Errors) != 1 || p.Errors[0].Field != "name" || p.Errors[0].Code != "invalid_type" {
					t.Errorf("errors %+v", p.Errors)
				}
			}},
		{Name: "unknown field", Key: a.Secret, Method: "POST", Path: "/_test/echo", Body: `{"nam":"x"}`, Status: 422, Problem: "validation_failed"},
		{Name: "not JSON content type", Key: a.Secret, Method: "POST", Path: "/_test/echo", Body: `name=x`,
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Status: 415, Problem: "unsupported_media_type"},
		{Name: "valid JSON", Key: a.Secret, Method: "POST", Path: "/_test/echo", Body: `{"name":"Jürgen Müller-Lüdenscheidt"}`, Status: 200},
		{Name: "panic becomes a 500 problem", Key: a.Secret, Path: "/_test/panic", Status: 500, Problem: "internal"},
		{Name: "health", Path: "//healthz", Status: 200},
		{Name: "ready", Path: "//readyz", Status: 200},
	})
}

func TestAuth_FeaturesAndRoles(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(testRoutes))
	ctx := context.Background()
	licensed := env.NewCompany(t, "leads")
	unlicensed := env.NewCompany(t, "customer_portal")
	agent := env.NewUser(t, licensed, "agent")
	manager := env.NewUser(t, licensed, "manager")
	suspended := env.NewUser(t, licensed, "agent")
	suspendedKey := licensed.UserKey(t, suspended)
	if _, err := env.AppDBSetUserStatus(ctx, licensed.ID, suspended.ID, "suspended"); err != nil {
		t.Fatal(err)
	}

	env.Run(t, []apitest.Case{
		{Name: "licensed feature", Key: licensed.Secret, Path: "/_test/leads", Status: 200},
		{Name: "unlicensed feature", Key: unlicensed.Secret, Path: "/_test/leads", Status: 403, Problem: "feature_not_licensed"},
		{Name: "sandbox shares the license", Key: licensed.TestSecret, Path: "/_test/leads", Status: 200},
		{Name: "admin user may administer", Key: licensed.UserKey(t, licensed.Admin), Method: "POST", Path: "/_test/admin", Status: 200},
		{Name: "agent may not administer", Key: licensed.UserKey(t, agent), Method: "POST", Path: "/_test/admin", Status: 403, Problem: "role_forbidden"},
		{Name: "manager may not administer", Key: licensed.UserKey(t, manager), Method: "POST", Path: "/_test/admin", Status: 403, Problem: "role_forbidden"},
		{Name: "role cannot widen scopes", Key: licensed.UserKey(t, licensed.Admin, "leads:read"), Method: "POST", Path: "/_test/admin", Status: 403, Problem: "insufficient_scope"},
		{Name: "company-level key administers", Key: licensed.Secret, Method: "POST", Path: "/_test/admin", Status: 200},
		{Name: "suspended user's key", Key: suspendedKey, Path: "/me", Status: 401, Problem: "invalid_credential"},
		{Name: "agent reads users", Key: licensed.UserKey(t, agent), Path: "/users", Status: 200},
		{Name: "me shows the acting user", Key: licensed.UserKey(t, agent), Path: "/me", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var me struct {
					Company struct {
						ID, Name string
					} `json:"company"`
					User *struct {
						ID                         string `json:"id"`
						Role                       string `json:"role"`
						Email, FirstName, LastName string
					} `json:"user"`
					Credential struct {
						Kind, Env, Prefix string
					} `json:"credential"`
				}
				r.Decode(t, &me)
				if me.User == nil || me.User.ID != agent.ID.String() || me.User.Role != "agent" ||
					me.User.Email != agent.Email || me.User.FirstName != "Test" || me.User.LastName != "agent" {
					t.Errorf("user %+v, want agent %s (%s, Test agent)", me.User, agent.ID, agent.Email)
				}
				// /me takes the company's name from the credential lookup; GET /company reads the row.
				var co struct{ ID, Name string }
				env.Do(t, apitest.Request{Path: "/company", Key: licensed.Secret}).Decode(t, &co)
				if me.Company.ID != licensed.ID.String() || co.Name == "" || me.Company.Name != co.Name {
					t.Errorf("company %+v, want %s named %q", me.Company, licensed.ID, co.Name)
				}
				if me.Credential.Kind != "secret" || me.Credential.Env != "live" || !strings.HasPrefix(me.Credential.Prefix, "sk_live_") {
					t.Errorf("credential %+v", me.Credential)
				}
			}},
		{Name: "sandbox user key acts on the sandbox twin", Key: licensed.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvTest, UserID: &agent.ID}).Secret,
			Path: "/me", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var me struct {
					Company struct {
						Name    string
						Sandbox bool `json:"sandbox"`
					} `json:"company"`
					User *struct {
						ID    string `json:"id"`
						Email string
					} `json:"user"`
				}
				r.Decode(t, &me)
				// The twin's user has a synthetic e-mail (issue 7 §4), not the live user's.
				if !me.Company.Sandbox || me.Company.Name == "" || me.User == nil || me.User.ID != agent.SandboxID.String() || me.User.Email == "" || me.User.Email == agent.Email {
					t.Errorf("sandbox /me %s", r.Body)
				}
			}},
	})
}
