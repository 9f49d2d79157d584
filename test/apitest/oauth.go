package apitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/policy"
)

// OAuthToken registers a client bound to c (env "live" or "test": the sandbox twin) and returns
// a client-credentials access token with scopes (default: every scope). Suites run their
// cases with it as with c.Secret: a token is accepted wherever a secret key is.
func (c *Company) OAuthToken(t testing.TB, env string, scopes ...string) string {
	t.Helper()
	if len(scopes) == 0 {
		scopes = policy.Scopes
	}
	cl, err := c.env.Ops.CreateOAuthClient(context.Background(), operator.NewOAuthClientInput{Name: "apitest client",
		RedirectURIs: []string{"https://partner.example/cb"}, Scopes: scopes, CompanyID: &c.ID, Env: env})
	if err != nil {
		t.Fatalf("create oauth client: %v", err)
	}
	req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(cl.ID.String(), cl.Secret)
	resp, err := c.env.Server.App.Test(req, -1)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("token: status %d, %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}

// OAuthGrant is a user's grant to a partner app, obtained through the real flow.
type OAuthGrant struct {
	Client       operator.OAuthClient
	AccessToken  string
	RefreshToken string
}

// UserOAuthToken registers a partner client (no company) with scopes (default: every scope),
// gives u a password and runs the authorization code flow with PKCE in process as a browser
// would (sign-in form, consent, code, token exchange). The token carries what u's role may hold
// of scopes and u's visibility, exactly as for a partner app in production.
func (c *Company) UserOAuthToken(t testing.TB, u operator.User, scopes ...string) OAuthGrant {
	t.Helper()
	if len(scopes) == 0 {
		scopes = policy.Scopes
	}
	ctx := context.Background()
	const redirect = "https://partner.example/cb"
	cl, err := c.env.Ops.CreateOAuthClient(ctx, operator.NewOAuthClientInput{Name: "apitest partner app",
		RedirectURIs: []string{redirect}, Scopes: scopes})
	if err != nil {
		t.Fatalf("create oauth client: %v", err)
	}
	pw := "apitest password " + cl.ID.String()[:8]
	if err := c.env.Ops.SetPassword(ctx, c.ID, u.Email, pw); err != nil {
		t.Fatalf("set password: %v", err)
	}
	verifier := oauth2.GenerateVerifier()
	authURL := "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {cl.ID.String()},
		"redirect_uri": {redirect}, "scope": {strings.Join(scopes, " ")}, "state": {"apitest-state"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}}.Encode()
	cookies := map[string]string{}
	do := func(method string, form url.Values) (*http.Response, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req := httptest.NewRequest(method, authURL, body)
		req.Host = "127.0.0.1"
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range cookies {
			req.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		resp, err := c.env.Server.App.Test(req, -1)
		if err != nil {
			t.Fatalf("authorize: %v", err)
		}
		defer resp.Body.Close()
		for _, ck := range resp.Cookies() {
			cookies[ck.Name] = ck.Value
		}
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	csrf := func(page string) string {
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("authorize: no form in\n%s", page)
		}
		return m[1]
	}
	_, page := do("GET", nil)
	resp, page := do("POST", url.Values{"action": {"login"}, "csrf": {csrf(page)}, "email": {u.Email}, "password": {pw}})
	if resp.StatusCode == 200 {
		resp, page = do("POST", url.Values{"action": {"allow"}, "csrf": {csrf(page)}})
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: status %d, Location %q\n%s", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	tok := c.env.oauthPost(t, "/oauth/token", cl, url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier}})
	var out struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(tok, &out); err != nil || out.AccessToken == "" || out.RefreshToken == "" {
		t.Fatalf("token exchange: %s", tok)
	}
	return OAuthGrant{Client: cl, AccessToken: out.AccessToken, RefreshToken: out.RefreshToken}
}

// RevokeOAuth revokes the grant of token (RFC 7009, as the grant's app).
func (e *Env) RevokeOAuth(t testing.TB, g OAuthGrant, token string) {
	t.Helper()
	e.oauthPost(t, "/oauth/revoke", g.Client, url.Values{"token": {token}})
}

// oauthPost posts form to the authorization server as client cl (HTTP Basic); non-2xx fails t.
func (e *Env) oauthPost(t testing.TB, path string, cl operator.OAuthClient, form url.Values) []byte {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(cl.ID.String(), cl.Secret)
	resp, err := e.Server.App.Test(req, -1)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}
