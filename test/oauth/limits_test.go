package oauth

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/ulule/limiter/v3"

	bdapp "github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// grantEvents reads the company's oauth_grant.revoked events.
func grantEvents(t *testing.T, env *apitest.Env, key string) []map[string]any {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/events?types=oauth_grant.revoked", Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	var page struct {
		Data []struct {
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	r.Decode(t, &page)
	var out []map[string]any
	for _, e := range page.Data {
		out = append(out, e.Data)
	}
	return out
}

// TestOAuth_GrantRevokedEvent: revoking a grant (RFC 7009) and refresh-token reuse each record
// one oauth_grant.revoked in the company's feed, with the grant, its client and the reason;
// a rotation (a normal refresh) records none. /event-types lists it with its scope.
func TestOAuth_GrantRevokedEvent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	p := newPerson(t, env, co, "manager")
	a := newApp(t, env, base, operator.NewOAuthClientInput{})

	code, verifier := a.code(t, newBrowserClient(t), p)
	tok := a.exchange(t, code, verifier)
	rot := a.refresh(t, tok.RefreshToken) // a rotation: the grant lives on
	if rot.Status != 200 {
		t.Fatalf("refresh: %+v", rot)
	}
	if ev := grantEvents(t, env, co.Secret); len(ev) != 0 {
		t.Fatalf("events after a rotation: %v", ev)
	}
	if reuse := a.refresh(t, tok.RefreshToken); reuse.Status != 400 {
		t.Fatalf("reused refresh token: %+v", reuse)
	}
	ev := grantEvents(t, env, co.Secret)
	if len(ev) != 1 || ev[0]["reason"] != "token_reuse" || ev[0]["clientId"] != a.client.ID.String() ||
		ev[0]["userId"] != p.ID.String() {
		t.Fatalf("after reuse: %v", ev)
	}

	code, verifier = a.code(t, newBrowserClient(t), p)
	tok = a.exchange(t, code, verifier)
	req, _ := http.NewRequest(http.MethodPost, base+"/oauth/revoke", strings.NewReader(url.Values{"token": {tok.RefreshToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(a.conf.ClientID, a.conf.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", resp, err)
	}
	resp.Body.Close()
	ev = grantEvents(t, env, co.Secret)
	if len(ev) != 2 || ev[1]["reason"] != "revocation_request" || ev[0]["id"] == ev[1]["id"] { // oldest first
		t.Fatalf("after revocation: %v", ev)
	}

	r := env.Do(t, apitest.Request{Path: "/event-types", Key: co.Secret})
	if !strings.Contains(string(r.Body), `{"type":"oauth_grant.revoked"`) || !strings.Contains(string(r.Body), `"scope":"company:read"}`) {
		t.Errorf("/event-types without oauth_grant.revoked: %s", r.Body)
	}
}

// tokenPost posts a token request in process with basic auth (id, secret) and X-Request-Id.
func tokenPost(t *testing.T, env *apitest.Env, id, secret, requestID string, form url.Values) (*http.Response, map[string]string) {
	t.Helper()
	return oauthPost(t, env, "/oauth/token", id, secret, requestID, form)
}

// TestOAuth_TokenRateLimits: the token endpoint counts authenticated requests per client and
// failed client authentications per client IP; over either it answers 429 in the OAuth error
// shape with Retry-After, and a refused address is refused even with the right secret.
// (A server of its own with small quotas: the package's server is shared.)
func TestOAuth_TokenRateLimits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, bdapp.WithConfig(func(c *bdapp.Config) {
		c.Limits.TokenClient = limiter.Rate{Limit: 3, Period: time.Hour}
		c.Limits.TokenAuthFailures = limiter.Rate{Limit: 2, Period: time.Hour}
	}))
	co := env.NewCompany(t)
	cc := url.Values{"grant_type": {"client_credentials"}}
	newClient := func() operator.OAuthClient {
		cl, err := env.Ops.CreateOAuthClient(t.Context(), operator.NewOAuthClientInput{Name: "Rate App",
			RedirectURIs: []string{redirect}, Scopes: []string{"company:read"}, CompanyID: &co.ID})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	tooMany := func(what string, resp *http.Response, body map[string]string) {
		t.Helper()
		if resp.StatusCode != 429 || body["error"] != "too_many_requests" || resp.Header.Get("Retry-After") == "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %v Retry-After %q, want 429 too_many_requests", what, resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
	}

	cl := newClient()
	for i := range 3 {
		if resp, body := tokenPost(t, env, cl.ID.String(), cl.Secret, "", cc); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %v", i+1, resp.StatusCode, body)
		}
	}
	resp, body := tokenPost(t, env, cl.ID.String(), cl.Secret, "", cc)
	tooMany("4th request of the client", resp, body)

	other := newClient()
	for i := range 2 {
		if resp, body := tokenPost(t, env, other.ID.String(), "wrong", "", cc); resp.StatusCode != 401 || body["error"] != "invalid_client" {
			t.Fatalf("wrong secret %d: %d %v", i+1, resp.StatusCode, body)
		}
	}
	resp, body = tokenPost(t, env, other.ID.String(), other.Secret, "", cc)
	tooMany("the right secret from an address that failed twice", resp, body)
}

// TestOAuth_LogCarriesRequestID: the authorization server's own log lines carry the request id
// like the API's (here the warning of a refresh-token reuse).
func TestOAuth_LogCarriesRequestID(t *testing.T) {
	t.Parallel()
	shared := apitest.New(t)
	var log apitest.LogBuffer
	env, err := apitest.Open(apitest.Setup{OwnerURL: shared.OwnerURL, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Server.Close)
	co := env.NewCompany(t)
	u := env.NewUser(t, co, "manager")
	g := co.UserOAuthToken(t, u, "company:read")
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.RefreshToken}}
	if resp, body := tokenPost(t, env, g.Client.ID.String(), g.Client.Secret, "", refresh); resp.StatusCode != 200 {
		t.Fatalf("refresh: %d %v", resp.StatusCode, body)
	}
	const id = "oauth-reuse-4711"
	if resp, body := tokenPost(t, env, g.Client.ID.String(), g.Client.Secret, id, refresh); resp.StatusCode != 400 {
		t.Fatalf("reuse: %d %v", resp.StatusCode, body)
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, `"oauth grant revoked"`) && strings.Contains(line, `"request_id":"`+id+`"`) &&
			strings.Contains(line, `"reason":"token_reuse"`) {
			return
		}
	}
	t.Fatalf("no oauth grant revoked line with request_id %s in the log:\n%s", id, log.String())
}

// oauthPost posts form to path of srv in process, with basic auth (id, secret) when id is set
// and X-Request-Id when requestID is.
func oauthPost(t *testing.T, srv *apitest.Env, path, id, secret, requestID string, form url.Values) (*http.Response, map[string]string) {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id != "" {
		req.SetBasicAuth(id, secret)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	resp, err := srv.Server.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]string
	_ = json.Unmarshal(b, &out)
	return resp, out
}

// TestOAuth_RevokeIntrospectAuthFailuresLimited: failed client authentications at
// /oauth/revoke and /oauth/introspect count into the token endpoint's per-address budget (one
// budget, in Redis, shared by two servers as by two replicas); once it is spent, all three
// endpoints answer 429 too_many_requests with Retry-After, even with the right secret, and
// revoke nothing.
func TestOAuth_RevokeIntrospectAuthFailuresLimited(t *testing.T) {
	t.Parallel()
	shared := apitest.New(t)
	setup := apitest.Setup{OwnerURL: shared.OwnerURL, Env: map[string]string{"REDIS_URL": apitest.RedisURL(t)}}
	prefix := "test:oauth-failures:" + uuid.NewString() // the test's own Redis keys (the address is the same each run)
	limits := bdapp.WithConfig(func(c *bdapp.Config) {
		c.Limits.TokenAuthFailures = limiter.Rate{Limit: 4, Period: time.Hour}
		c.Limits.Prefix = prefix
	})
	servers := make([]*apitest.Env, 2)
	for i := range servers {
		env, err := apitest.Open(setup, limits)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(env.Server.Close)
		servers[i] = env
	}
	a, b := servers[0], servers[1]
	co := a.NewCompany(t)
	cl, err := a.Ops.CreateOAuthClient(t.Context(), operator.NewOAuthClientInput{Name: "Guessed App",
		RedirectURIs: []string{redirect}, Scopes: []string{"company:read"}, CompanyID: &co.ID})
	if err != nil {
		t.Fatal(err)
	}
	id := cl.ID.String()
	resp, tok := oauthPost(t, a, "/oauth/token", id, cl.Secret, "", url.Values{"grant_type": {"client_credentials"}})
	if resp.StatusCode != 200 || tok["access_token"] == "" {
		t.Fatalf("client credentials: %d %v", resp.StatusCode, tok)
	}
	token := url.Values{"token": {tok["access_token"]}}

	// the right secret is not counted
	if resp, body := oauthPost(t, a, "/oauth/introspect", id, cl.Secret, "", token); resp.StatusCode != 200 {
		t.Fatalf("introspect with the right secret: %d %v", resp.StatusCode, body)
	}
	// four failures, alternating servers and endpoints
	for i, f := range []struct {
		srv            *apitest.Env
		path, id, want string
		status         int
	}{
		{a, "/oauth/revoke", id, "invalid_client", 401},
		{b, "/oauth/introspect", id, "request_unauthorized", 401},
		{a, "/oauth/introspect", "", "request_unauthorized", 401}, // no Basic credentials
		{b, "/oauth/revoke", uuid.NewString(), "invalid_client", 401},
	} {
		resp, body := oauthPost(t, f.srv, f.path, f.id, "wrong", "", token)
		if resp.StatusCode != f.status || body["error"] != f.want {
			t.Fatalf("failure %d at %s: %d %v, want %d %s", i+1, f.path, resp.StatusCode, body, f.status, f.want)
		}
	}
	for _, f := range []struct {
		srv  *apitest.Env
		path string
		form url.Values
	}{
		{a, "/oauth/revoke", token},
		{b, "/oauth/introspect", token},
		{a, "/oauth/introspect", token},
		{b, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}},
	} {
		resp, body := oauthPost(t, f.srv, f.path, id, cl.Secret, "", f.form)
		if resp.StatusCode != 429 || body["error"] != "too_many_requests" || body["error_description"] == "" ||
			resp.Header.Get("Retry-After") == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s with the right secret after four failures: %d %v Retry-After %q, want 429 too_many_requests",
				f.path, resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
	}
	// the refused revocation revoked nothing: the token still reads the API
	if r := a.Do(t, apitest.Request{Path: "/me", Key: tok["access_token"]}); r.Status != 200 {
		t.Errorf("GET /me with the token after the refused revocation: %d %s", r.Status, r.Body)
	}
}
