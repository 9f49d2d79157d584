package oauth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestOAuth_ClientCredentials(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	a, b := env.NewCompany(t), env.NewCompany(t)
	bound := newApp(t, env, base, operator.NewOAuthClientInput{CompanyID: &a.ID})
	partner := newApp(t, env, base, operator.NewOAuthClientInput{})
	sandbox := newApp(t, env, base, operator.NewOAuthClientInput{CompanyID: &a.ID, Env: "test"})

	tok := bound.token(t, url.Values{"grant_type": {"client_credentials"}})
	if tok.Status != 200 || tok.AccessToken == "" || tok.ExpiresIn < 3500 || tok.ExpiresIn > 3600 {
		t.Fatalf("client credentials: %+v", tok)
	}
	if tok.RefreshToken != "" {
		t.Errorf("client credentials issued a refresh token")
	}
	status, v := me(t, env, tok.AccessToken)
	if status != 200 || v.Company.ID != a.ID || v.User != nil || v.Client == nil || v.Client.ID != bound.client.ID ||
		v.Client.Name != bound.client.Name || v.Credential.Kind != "oauth" {
		t.Fatalf("/me with a company client's token: %d %+v", status, v)
	}
	if slices.Sort(v.Scopes); !slices.Equal(v.Scopes, []string{"company:read", "contacts:read", "leads:read", "users:read", "users:write"}) {
		t.Errorf("scopes %v, want every scope of the client", v.Scopes)
	}
	// a token acts like a key of its company: another company's ids are 404
	if r := env.Do(t, apitest.Request{Path: "/users/" + b.Admin.ID.String(), Key: tok.AccessToken}); r.Status != 404 {
		t.Errorf("company A's token on company B's user: %d, want 404", r.Status)
	}
	if r := env.Do(t, apitest.Request{Path: "/users/" + a.Admin.ID.String(), Key: tok.AccessToken}); r.Status != 200 {
		t.Errorf("company A's token on its own user: %d, want 200", r.Status)
	}
	// narrower scope on request; a scope outside the client's list is refused
	narrow := bound.token(t, url.Values{"grant_type": {"client_credentials"}, "scope": {"users:read"}})
	if _, nv := me(t, env, narrow.AccessToken); !slices.Equal(nv.Scopes, []string{"users:read"}) {
		t.Errorf("narrow token scopes %v", nv.Scopes)
	}
	if r := env.Do(t, apitest.Request{Path: "/company", Key: narrow.AccessToken}); r.Status != 403 {
		t.Errorf("scope missing: %d, want 403", r.Status)
	}
	if r := bound.token(t, url.Values{"grant_type": {"client_credentials"}, "scope": {"webhooks:write"}}); r.Status != 400 || r.Error != "invalid_scope" {
		t.Errorf("scope beyond the client: %+v", r)
	}
	// a partner client acts only through a user's consent
	if r := partner.token(t, url.Values{"grant_type": {"client_credentials"}}); r.Status == 200 {
		t.Errorf("partner client got a client-credentials token")
	}
	// wrong secret
	wrong := *bound
	wrong.conf = &oauth2.Config{ClientID: bound.conf.ClientID, ClientSecret: "bdcs_wrong", Endpoint: bound.conf.Endpoint}
	wrong.client.Secret = "x"
	if r := wrong.token(t, url.Values{"grant_type": {"client_credentials"}}); r.Status != 401 || r.Error != "invalid_client" {
		t.Errorf("wrong secret: %+v", r)
	}
	// a test client's tokens act on the sandbox twin
	st := sandbox.token(t, url.Values{"grant_type": {"client_credentials"}})
	if status, sv := me(t, env, st.AccessToken); status != 200 || sv.Company.ID != a.SandboxID || sv.Credential.Env != "test" {
		t.Errorf("test client /me: %d %+v, want the sandbox twin %s", status, sv, a.SandboxID)
	}
	// a disabled client's tokens are refused by the very next request
	if _, err := env.Ops.DisableOAuthClient(context.Background(), bound.client.ID.String()); err != nil {
		t.Fatal(err)
	}
	if status, _ := me(t, env, tok.AccessToken); status != 401 {
		t.Errorf("disabled client's token: %d, want 401", status)
	}
}

func TestOAuth_AuthorizationCode(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	agent := newPerson(t, env, co, "agent")
	a := newApp(t, env, base, operator.NewOAuthClientInput{})
	a.conf.Scopes = []string{"contacts:read", "users:write"} // an agent may not hold users:write
	b := newBrowserClient(t)
	code, verifier := a.code(t, b, agent)

	tok, err := a.conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange with x/oauth2: %v", err)
	}
	if tok.RefreshToken == "" || tok.TokenType != "bearer" {
		t.Fatalf("token %+v", tok)
	}
	status, v := me(t, env, tok.AccessToken)
	if status != 200 || v.User == nil || v.User.ID != agent.ID || v.User.Email != agent.Email || v.Client == nil || v.Client.ID != a.client.ID ||
		v.Company.ID != co.ID || v.Company.Name == "" {
		t.Fatalf("/me with a user's token: %d %+v", status, v)
	}
	if !slices.Equal(v.Scopes, []string{"contacts:read"}) {
		t.Errorf("granted %v, want requested ∩ client ∩ role = [contacts:read]", v.Scopes)
	}

	t.Run("second authorization with the same scopes skips consent", func(t *testing.T) {
		verifier := oauth2.GenerateVerifier()
		u := a.conf.AuthCodeURL("state-0002", oauth2.S256ChallengeOption(verifier))
		p := b.get(u) // still signed in
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, redirect+"?") {
			t.Fatalf("want a redirect with a code at once, got %d %s", p.status, p.location)
		}
	})

	t.Run("refresh rotates and a reused refresh token revokes the grant", func(t *testing.T) {
		r1 := a.refresh(t, tok.RefreshToken)
		if r1.Status != 200 || r1.RefreshToken == "" || r1.RefreshToken == tok.RefreshToken {
			t.Fatalf("refresh: %+v", r1)
		}
		if status, _ := me(t, env, tok.AccessToken); status != 401 {
			t.Errorf("the old access token after refresh: %d, want 401", status)
		}
		if status, _ := me(t, env, r1.AccessToken); status != 200 {
			t.Errorf("the new access token: %d, want 200", status)
		}
		reuse := a.refresh(t, tok.RefreshToken)
		if reuse.Status != 400 || reuse.Error != "invalid_grant" {
			t.Errorf("reused refresh token: %+v, want invalid_grant", reuse)
		}
		if status, _ := me(t, env, r1.AccessToken); status != 401 {
			t.Errorf("access token of the grant after reuse: %d, want 401", status)
		}
		if r := a.refresh(t, r1.RefreshToken); r.Status != 400 {
			t.Errorf("refresh token of the grant after reuse: %+v, want refused", r)
		}
	})

	t.Run("revocation ends the grant at once", func(t *testing.T) {
		code, verifier := a.code(t, b, agent)
		tk := a.exchange(t, code, verifier)
		resp, err := http.PostForm(base+"/oauth/revoke", url.Values{"token": {tk.RefreshToken},
			"client_id": {a.conf.ClientID}, "client_secret": {a.conf.ClientSecret}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
		if status, _ := me(t, env, tk.AccessToken); status != 401 {
			t.Errorf("access token after revoking its grant: %d, want 401", status)
		}
	})

	t.Run("introspection for the confidential client", func(t *testing.T) {
		code, verifier := a.code(t, b, agent)
		tk := a.exchange(t, code, verifier)
		req, _ := http.NewRequest(http.MethodPost, base+"/oauth/introspect", strings.NewReader(url.Values{"token": {tk.AccessToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(a.conf.ClientID, a.conf.ClientSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ir struct {
			Active   bool   `json:"active"`
			Scope    string `json:"scope"`
			ClientID string `json:"client_id"`
			Sub      string `json:"sub"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&ir)
		if resp.StatusCode != 200 || !ir.Active || ir.Scope != "contacts:read" || ir.ClientID != a.conf.ClientID || ir.Sub != agent.ID.String() {
			t.Errorf("introspect: %d %+v", resp.StatusCode, ir)
		}
		anon, _ := http.PostForm(base+"/oauth/introspect", url.Values{"token": {tk.AccessToken}})
		anon.Body.Close()
		if anon.StatusCode != 401 {
			t.Errorf("introspection without client authentication: %d, want 401", anon.StatusCode)
		}
	})

	t.Run("an inactive user is refused by the very next request", func(t *testing.T) {
		code, verifier := a.code(t, b, agent)
		tk := a.exchange(t, code, verifier)
		if n, err := env.AppDBSetUserStatus(context.Background(), co.ID, agent.ID, "inactive"); err != nil || n != 1 {
			t.Fatalf("set inactive: %d %v", n, err)
		}
		t.Cleanup(func() { _, _ = env.AppDBSetUserStatus(context.Background(), co.ID, agent.ID, "active") })
		if status, _ := me(t, env, tk.AccessToken); status != 401 {
			t.Errorf("inactive user's token: %d, want 401", status)
		}
		if r := a.refresh(t, tk.RefreshToken); r.Status == 200 {
			t.Errorf("inactive user's refresh succeeded")
		}
		// and cannot sign in: the same answer as a wrong password
		nb := newBrowserClient(t)
		p := nb.signIn(a.conf.AuthCodeURL("state-0003", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), agent)
		if p.status != 401 || !strings.Contains(p.body, "E-mail address or password is wrong") {
			t.Errorf("inactive user's sign-in: %d\n%s", p.status, p.body)
		}
	})
}

func TestOAuth_Deny(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	u := newPerson(t, env, co, "manager")
	a := newApp(t, env, base, operator.NewOAuthClientInput{})
	loc := newBrowserClient(t).authorize(a.conf.AuthCodeURL("state-0001", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), u, "deny")
	if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "state-0001" || loc.Query().Get("code") != "" ||
		!strings.HasPrefix(loc.String(), redirect+"?") {
		t.Errorf("deny: %s, want %s?error=access_denied&state=st", loc, redirect)
	}
}

func TestOAuth_Metadata(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Do(t, apitest.Request{Path: "//.well-known/oauth-authorization-server"})
	var m struct {
		Issuer        string   `json:"issuer"`
		Token         string   `json:"token_endpoint"`
		Authorize     string   `json:"authorization_endpoint"`
		Revoke        string   `json:"revocation_endpoint"`
		Introspect    string   `json:"introspection_endpoint"`
		PKCE          []string `json:"code_challenge_methods_supported"`
		ScopesSupport []string `json:"scopes_supported"`
	}
	r.Decode(t, &m)
	if r.Status != 200 || !strings.HasSuffix(m.Token, "/oauth/token") || !strings.HasSuffix(m.Authorize, "/oauth/authorize") ||
		!strings.HasSuffix(m.Revoke, "/oauth/revoke") || !strings.HasSuffix(m.Introspect, "/oauth/introspect") ||
		!slices.Equal(m.PKCE, []string{"S256"}) || !slices.Contains(m.ScopesSupport, "contacts:read") {
		t.Errorf("metadata: %d %+v", r.Status, m)
	}
}

func readAll(r io.Reader) string { b, _ := io.ReadAll(r); return string(b) }

// A test client's token issued through a user's consent acts on the sandbox twin as the user's
// twin, whose e-mail is synthetic (operator.SandboxEmail) since issue 7 §4.
func TestOAuth_TestClientUserToken(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	agent := newPerson(t, env, co, "agent")
	a := newApp(t, env, base, operator.NewOAuthClientInput{Env: "test"})
	a.conf.Scopes = []string{"contacts:read"}
	code, verifier := a.code(t, newBrowserClient(t), agent)
	tok := a.exchange(t, code, verifier)
	if tok.Status != 200 || tok.AccessToken == "" {
		t.Fatalf("exchange: %+v", tok)
	}
	status, v := me(t, env, tok.AccessToken)
	if status != 200 || v.Company.ID != co.SandboxID || v.User == nil || v.User.ID != agent.SandboxID ||
		v.User.Email != operator.SandboxEmail(agent.ID) || v.Credential.Env != "test" {
		t.Fatalf("/me with a test client's user token: %d %+v, want the twin %s of %s", status, v, agent.SandboxID, agent.ID)
	}
}
