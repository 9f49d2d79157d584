package appointments

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The calendar feed tokens of issue 20 §2: a write scope, only the user's own credential or an
// admin's manages a user's token, the token dies with the credential that issued it (key
// deactivated or deleted, OAuth grant revoked, its user or the feed's user inactive), an
// optional expiry, and the admins' list of active tokens.

type calToken struct {
	UserID    string     `json:"userId"`
	Token     string     `json:"token"`
	URL       string     `json:"url"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

type tokenInfo struct {
	UserID    string     `json:"userId"`
	Prefix    string     `json:"prefix"`
	ExpiresAt *time.Time `json:"expiresAt"`
	IssuedBy  struct {
		UserID        string  `json:"userId"`
		CredentialID  *string `json:"credentialId"`
		OAuthClientID *string `json:"oauthClientId"`
	} `json:"issuedBy"`
}

func tokenPath(u operator.User) string { return "/users/" + u.ID.String() + "/calendar-token" }

// issue creates u's token with key (body: nil or a TokenInput) and fails unless 201.
func issue(t *testing.T, env *apitest.Env, key string, u operator.User, body any) calToken {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: tokenPath(u), Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("issue %s's token: %d %s", u.Email, r.Status, r.Body)
	}
	var tok calToken
	r.Decode(t, &tok)
	return tok
}

// feedStatus is the status of GET /calendar/{token}.ics.
func feedStatus(t *testing.T, env *apitest.Env, token string) int {
	t.Helper()
	return env.Do(t, apitest.Request{Path: "/calendar/" + token + ".ics"}).Status
}

// listed returns the prefixes of GET /calendar-tokens as key sees them (all pages).
func listed(t *testing.T, env *apitest.Env, key string) map[string]tokenInfo {
	t.Helper()
	out := map[string]tokenInfo{}
	path := "/calendar-tokens?limit=2"
	for {
		r := env.Do(t, apitest.Request{Path: path, Key: key})
		if r.Status != 200 {
			t.Fatalf("list tokens: %d %s", r.Status, r.Body)
		}
		var page apitest.Page[tokenInfo]
		r.Decode(t, &page)
		for _, i := range page.Data {
			out[i.Prefix] = i
		}
		if !page.Pagination.HasMore {
			return out
		}
		path = "/calendar-tokens?limit=2&cursor=" + url.QueryEscape(page.Pagination.NextCursor)
	}
}

// userKey issues a live secret key bound to u with scopes (default all), returning the key row
// (for deactivation) and its secret.
func userKey(t *testing.T, co *apitest.Company, u operator.User, scopes ...string) operator.Key {
	t.Helper()
	return co.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, UserID: &u.ID, Scopes: scopes})
}

// TestCalendarTokens_IssueMatrix: POST /users/{userId}/calendar-token for every kind of
// credential. Catches the read scope sufficing and company-level keys and client-credentials
// tokens issuing tokens for every user.
func TestCalendarTokens_IssueMatrix(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent, other, boss := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "manager")
	grant := a.UserOAuthToken(t, agent)
	path := tokenPath(agent)
	env.Run(t, []apitest.Case{
		{Name: "own key", Key: a.UserKey(t, agent, "appointments:write"), Method: "POST", Path: path, Status: 201},
		{Name: "own OAuth grant", Key: grant.AccessToken, Method: "POST", Path: path, Status: 201},
		{Name: "admin's key", Key: a.UserKey(t, a.Admin), Method: "POST", Path: path, Status: 201},
		{Name: "own key with appointments:read only (the bug: read sufficed)", Key: a.UserKey(t, agent, "appointments:read"),
			Method: "POST", Path: path, Status: 403, Problem: "insufficient_scope"},
		{Name: "admin's key without admin:write", Key: a.UserKey(t, a.Admin, "appointments:write"), Method: "POST", Path: path,
			Status: 403, Problem: "forbidden"},
		{Name: "manager's key", Key: a.UserKey(t, boss), Method: "POST", Path: path, Status: 403, Problem: "forbidden"},
		{Name: "another agent's key", Key: a.UserKey(t, other), Method: "POST", Path: path, Status: 403, Problem: "forbidden"},
		{Name: "company key with every scope (the bug: acted for every user)", Key: a.Secret, Method: "POST", Path: path,
			Status: 403, Problem: "forbidden"},
		{Name: "client-credentials token", Key: a.OAuthToken(t, "live"), Method: "POST", Path: path,
			Status: 403, Problem: "forbidden"},
		{Name: "another company's admin key: 404", Key: b.UserKey(t, b.Admin), Method: "POST", Path: path,
			Status: 404, Problem: "not_found"},
		{Name: "unknown user", Key: a.UserKey(t, a.Admin), Method: "POST", Path: "/users/" + uuid.NewString() + "/calendar-token",
			Status: 404, Problem: "not_found"},
	})
}

// TestCalendarTokens_RevokeMatrix: DELETE /users/{userId}/calendar-token. The user's own
// credential and admin credentials (company-level ones included: revoking gives no access)
// revoke; others are 403 and the token keeps answering.
func TestCalendarTokens_RevokeMatrix(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent, other := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	own := a.UserKey(t, agent, "appointments:write")
	for _, c := range []struct {
		name, key string
		status    int
	}{
		{"own key", own, 204},
		{"admin's key", a.UserKey(t, a.Admin), 204},
		{"company admin key", a.Secret, 204},
		{"client-credentials token with admin:write", a.OAuthToken(t, "live"), 204},
		{"own key with appointments:read only", a.UserKey(t, agent, "appointments:read"), 403},
		{"company key without admin:write", a.KeyWithScopes(t, "appointments:write"), 403},
		{"another agent's key", a.UserKey(t, other), 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok := issue(t, env, own, agent, nil)
			r := env.Do(t, apitest.Request{Method: "DELETE", Path: tokenPath(agent), Key: c.key})
			if r.Status != c.status {
				t.Fatalf("revoke: %d %s, want %d", r.Status, r.Body, c.status)
			}
			want := 404
			if c.status != 204 {
				want = 200
			}
			if got := feedStatus(t, env, tok.Token); got != want {
				t.Errorf("feed after the revoke answered %d: %d, want %d", c.status, got, want)
			}
		})
	}
}

// refresh exchanges g's refresh token (RFC 6749 §6) and returns the new access token; the
// used refresh token and the grant's earlier access tokens are retired (rotation).
func refresh(t *testing.T, env *apitest.Env, g *apitest.OAuthGrant) {
	t.Helper()
	req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {g.RefreshToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(g.Client.ID.String(), g.Client.Secret)
	resp, err := env.Server.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 || out.AccessToken == "" {
		t.Fatalf("refresh: %d %s", resp.StatusCode, b)
	}
	g.AccessToken, g.RefreshToken = out.AccessToken, out.RefreshToken
}

// TestCalendarTokens_DieWithCredential: a token answers only while the credential that issued
// it is alive. Each case issues a token, checks the feed answers 200, ends the credential (or a
// user) and expects what an unknown token gets (404), and the token gone from the admins' list;
// a token of another, live credential of the company keeps answering (the control). Catches
// feeds of a deactivated key answering 200.
func TestCalendarTokens_DieWithCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	ctx := context.Background()
	admin := a.UserKey(t, a.Admin)
	control := env.NewUser(t, a, "agent")
	controlTok := issue(t, env, a.UserKey(t, control, "appointments:write"), control, nil)

	for _, c := range []struct {
		name string
		// setup issues the token and returns the function that ends its credential.
		setup func(t *testing.T, u operator.User) (calToken, func())
	}{
		{"own key deactivated", func(t *testing.T, u operator.User) (calToken, func()) {
			k := userKey(t, a, u, "appointments:write")
			return issue(t, env, k.Secret, u, nil), func() {
				if _, err := env.Ops.DeactivateKey(ctx, k.ID.String()); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"own key deleted", func(t *testing.T, u operator.User) (calToken, func()) {
			k := userKey(t, a, u, "appointments:write")
			return issue(t, env, k.Secret, u, nil), func() {
				if err := env.Ops.DeleteKey(ctx, k.ID.String()); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"admin's key that issued it deactivated", func(t *testing.T, u operator.User) (calToken, func()) {
			k := userKey(t, a, a.Admin)
			return issue(t, env, k.Secret, u, nil), func() {
				if _, err := env.Ops.DeactivateKey(ctx, k.ID.String()); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"the issuing admin set inactive", func(t *testing.T, u operator.User) (calToken, func()) {
			boss := env.NewUser(t, a, "admin")
			return issue(t, env, a.UserKey(t, boss), u, nil), func() {
				if _, err := env.AppDBSetUserStatus(ctx, a.ID, boss.ID, "inactive"); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"the feed's user set inactive", func(t *testing.T, u operator.User) (calToken, func()) {
			return issue(t, env, admin, u, nil), func() {
				if _, err := env.AppDBSetUserStatus(ctx, a.ID, u.ID, "inactive"); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"OAuth grant revoked", func(t *testing.T, u operator.User) (calToken, func()) {
			g := a.UserOAuthToken(t, u)
			return issue(t, env, g.AccessToken, u, nil), func() { env.RevokeOAuth(t, g, g.RefreshToken) }
		}},
		{"OAuth client disabled", func(t *testing.T, u operator.User) (calToken, func()) {
			g := a.UserOAuthToken(t, u)
			return issue(t, env, g.AccessToken, u, nil), func() {
				if _, err := env.Ops.DisableOAuthClient(ctx, g.Client.ID.String()); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := env.NewUser(t, a, "agent")
			tok, end := c.setup(t, u)
			if got := feedStatus(t, env, tok.Token); got != 200 {
				t.Fatalf("feed before: %d", got)
			}
			end()
			if got := feedStatus(t, env, tok.Token); got != 404 {
				t.Errorf("feed after its credential ended: %d, want 404 (as an unknown token)", got)
			}
			if got := feedStatus(t, env, controlTok.Token); got != 200 {
				t.Errorf("control token of a live credential: %d", got)
			}
			got := listed(t, env, a.Secret)
			if _, ok := got[tok.Token[:10]]; ok {
				t.Errorf("the dead token is still listed")
			}
			if _, ok := got[controlTok.Token[:10]]; !ok {
				t.Errorf("the control token is not listed")
			}
		})
	}

	// A grant lives on across refreshes (new access and refresh tokens, the old ones retired):
	// the token belongs to the grant, not to the hour-long access token that issued it.
	t.Run("OAuth grant refreshed keeps the token", func(t *testing.T) {
		u := env.NewUser(t, a, "agent")
		g := a.UserOAuthToken(t, u)
		tok := issue(t, env, g.AccessToken, u, nil)
		refresh(t, env, &g)
		refresh(t, env, &g)
		if got := feedStatus(t, env, tok.Token); got != 200 {
			t.Errorf("feed after two refreshes: %d, want 200", got)
		}
		info, ok := listed(t, env, a.Secret)[tok.Token[:10]]
		if !ok || info.IssuedBy.OAuthClientID == nil || *info.IssuedBy.OAuthClientID != g.Client.ID.String() ||
			info.IssuedBy.CredentialID != nil || info.IssuedBy.UserID != u.ID.String() {
			t.Errorf("listed %+v", info)
		}
		env.RevokeOAuth(t, g, g.RefreshToken)
		if got := feedStatus(t, env, tok.Token); got != 404 {
			t.Errorf("feed after the refreshed grant was revoked: %d, want 404", got)
		}
	})
}

// TestCalendarTokens_Expiry: expiresAt is optional, in the future and at most 366 days ahead;
// the feed answers until then and 404 after, and the list leaves the token out.
func TestCalendarTokens_Expiry(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	key := a.UserKey(t, agent, "appointments:write")
	path := tokenPath(agent)
	at := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }
	env.Run(t, []apitest.Case{
		{Name: "in the past", Key: key, Method: "POST", Path: path, Body: map[string]any{"expiresAt": at(-time.Minute)},
			Status: 422, Problem: "validation_failed", Check: fieldCode("expiresAt", "in_the_past")},
		{Name: "more than 366 days ahead", Key: key, Method: "POST", Path: path, Body: map[string]any{"expiresAt": at(367 * 24 * time.Hour)},
			Status: 422, Problem: "validation_failed", Check: fieldCode("expiresAt", "too_far_ahead")},
		{Name: "not a time", Key: key, Method: "POST", Path: path, Body: map[string]any{"expiresAt": "tomorrow"}, Status: 400},
		{Name: "unknown member", Key: key, Method: "POST", Path: path, Body: map[string]any{"expiresIn": 3600},
			Status: 422, Problem: "validation_failed", Check: fieldCode("expiresIn", "unknown_field")},
		{Name: "empty object: no expiry", Key: key, Method: "POST", Path: path, Body: map[string]any{}, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				var tok calToken
				r.Decode(t, &tok)
				if tok.ExpiresAt != nil || !strings.Contains(string(r.Body), `"expiresAt":null`) {
					t.Errorf("expiresAt %s", r.Body)
				}
			}},
		{Name: "366 days ahead", Key: key, Method: "POST", Path: path, Body: map[string]any{"expiresAt": at(366*24*time.Hour - time.Minute)}, Status: 201},
	})

	tok := issue(t, env, key, agent, map[string]any{"expiresAt": at(2 * time.Second)})
	if tok.ExpiresAt == nil || time.Until(*tok.ExpiresAt) > 2*time.Second {
		t.Fatalf("expiresAt %v", tok.ExpiresAt)
	}
	if got := feedStatus(t, env, tok.Token); got != 200 {
		t.Fatalf("feed before expiry: %d", got)
	}
	info, ok := listed(t, env, a.Secret)[tok.Token[:10]]
	if !ok || info.ExpiresAt == nil || !info.ExpiresAt.Equal(*tok.ExpiresAt) {
		t.Errorf("listed before expiry: %v %+v", ok, info)
	}
	time.Sleep(time.Until(*tok.ExpiresAt) + 200*time.Millisecond)
	if got := feedStatus(t, env, tok.Token); got != 404 {
		t.Errorf("feed after expiry: %d, want 404", got)
	}
	if _, ok := listed(t, env, a.Secret)[tok.Token[:10]]; ok {
		t.Errorf("the expired token is still listed")
	}
}

// fieldCode checks that a 422 names field with code.
func fieldCode(field, code string) func(t *testing.T, r *apitest.Response) {
	return func(t *testing.T, r *apitest.Response) {
		p := r.Problem(t)
		if !slices.ContainsFunc(p.Errors, func(e struct {
			Field  string `json:"field"`
			Code   string `json:"code"`
			Detail string `json:"detail"`
		}) bool {
			return e.Field == field && e.Code == code
		}) {
			t.Errorf("errors %+v, want %s %s", p.Errors, field, code)
		}
	}
}

// TestCalendarTokens_List: GET /calendar-tokens is for admin credentials: every live token of
// the company with its issuer, never the token, never another company's.
func TestCalendarTokens_List(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent, boss := env.NewUser(t, a, "agent"), env.NewUser(t, a, "manager")
	ownKey := userKey(t, a, agent, "appointments:write")
	adminKey := userKey(t, a, a.Admin)
	mine := issue(t, env, ownKey.Secret, agent, nil)
	theirs := issue(t, env, adminKey.Secret, boss, nil)
	bUser := env.NewUser(t, b, "agent")
	bTok := issue(t, env, b.UserKey(t, bUser), bUser, nil)

	got := listed(t, env, adminKey.Secret)
	if len(got) != 2 {
		t.Fatalf("listed %d tokens, want 2: %+v", len(got), got)
	}
	if i := got[mine.Token[:10]]; i.UserID != agent.ID.String() || i.IssuedBy.UserID != agent.ID.String() ||
		i.IssuedBy.CredentialID == nil || *i.IssuedBy.CredentialID != ownKey.ID.String() || i.IssuedBy.OAuthClientID != nil {
		t.Errorf("agent's token %+v", i)
	}
	if i := got[theirs.Token[:10]]; i.UserID != boss.ID.String() || i.IssuedBy.UserID != a.Admin.ID.String() ||
		i.IssuedBy.CredentialID == nil || *i.IssuedBy.CredentialID != adminKey.ID.String() {
		t.Errorf("manager's token %+v", i)
	}
	if _, ok := got[bTok.Token[:10]]; ok {
		t.Errorf("A's list shows B's token")
	}
	env.Run(t, []apitest.Case{
		{Name: "company admin key", Key: a.Secret, Path: "/calendar-tokens", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if strings.Contains(string(r.Body), mine.Token) || strings.Contains(string(r.Body), theirs.Token) {
				t.Errorf("the list shows a token: %s", r.Body)
			}
		}},
		{Name: "agent's key", Key: ownKey.Secret, Path: "/calendar-tokens", Status: 403},
		{Name: "manager's key", Key: a.UserKey(t, boss), Path: "/calendar-tokens", Status: 403, Problem: "role_forbidden"},
		{Name: "company key without admin:write", Key: a.KeyWithScopes(t, "appointments:write"), Path: "/calendar-tokens",
			Status: 403, Problem: "insufficient_scope"},
		{Name: "B's admin sees only B's", Key: b.Secret, Path: "/calendar-tokens", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if strings.Contains(string(r.Body), mine.Token[:10]) || !strings.Contains(string(r.Body), bTok.Token[:10]) {
				t.Errorf("B's list %s", r.Body)
			}
		}},
		{Name: "bad limit", Key: a.Secret, Path: "/calendar-tokens?limit=0", Status: 422},
	})
}
