package oauth

import (
	"net/url"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestOAuth_Conformance: the error answers an independent client library expects (issue 20,
// "OAuth conformance"), each a subtest named for what was wrong before.
func TestOAuth_Conformance(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	newClient := func(in operator.NewOAuthClientInput) operator.OAuthClient {
		t.Helper()
		in.Name = "Conformance App"
		in.RedirectURIs = []string{redirect}
		in.Scopes = []string{"company:read"}
		cl, err := env.Ops.CreateOAuthClient(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	bound := newClient(operator.NewOAuthClientInput{CompanyID: &co.ID})
	other := newClient(operator.NewOAuthClientInput{CompanyID: &co.ID})
	public := newClient(operator.NewOAuthClientInput{Public: true})
	cc := url.Values{"grant_type": {"client_credentials"}}
	issue := func(cl operator.OAuthClient) string {
		t.Helper()
		resp, body := oauthPost(t, env, "/oauth/token", cl.ID.String(), cl.Secret, "", cc)
		if resp.StatusCode != 200 || body["access_token"] == "" {
			t.Fatalf("client credentials: %d %v", resp.StatusCode, body)
		}
		return body["access_token"]
	}

	t.Run("an unsupported grant_type is unsupported_grant_type, not invalid_request (RFC 6749 §5.2)", func(t *testing.T) {
		for _, gt := range []string{"password", "urn:ietf:params:oauth:grant-type:device_code", "client_credentials refresh_token"} {
			form := url.Values{"grant_type": {gt}, "username": {co.Admin.Email}, "password": {"whatever"}}
			resp, body := oauthPost(t, env, "/oauth/token", bound.ID.String(), bound.Secret, "", form)
			if resp.StatusCode != 400 || body["error"] != "unsupported_grant_type" {
				t.Errorf("grant_type %q: %d %v, want 400 unsupported_grant_type", gt, resp.StatusCode, body)
			}
		}
		// a missing grant_type stays invalid_request: the request is malformed, not unsupported
		resp, body := oauthPost(t, env, "/oauth/token", bound.ID.String(), bound.Secret, "", url.Values{"scope": {"company:read"}})
		if resp.StatusCode != 400 || body["error"] != "invalid_request" {
			t.Errorf("no grant_type: %d %v, want 400 invalid_request", resp.StatusCode, body)
		}
	})

	t.Run("401 invalid_client after HTTP Basic carries WWW-Authenticate: Basic (RFC 6749 §5.2)", func(t *testing.T) {
		tok := issue(bound)
		for _, f := range []struct {
			path, want string
			form       url.Values
		}{
			{"/oauth/token", "invalid_client", cc},
			{"/oauth/revoke", "invalid_client", url.Values{"token": {tok}}},
			{"/oauth/introspect", "request_unauthorized", url.Values{"token": {tok}}},
		} {
			resp, body := oauthPost(t, env, f.path, bound.ID.String(), "bdcs_wrong", "", f.form)
			if resp.StatusCode != 401 || body["error"] != f.want {
				t.Errorf("%s with a wrong secret: %d %v, want 401 %s", f.path, resp.StatusCode, body, f.want)
				continue
			}
			if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Basic") {
				t.Errorf("%s: 401 with WWW-Authenticate %q, want Basic", f.path, h)
			}
		}
	})

	t.Run("revoking another client's token is refused with unauthorized_client, not 200 and nothing (RFC 7009 §2.1)", func(t *testing.T) {
		tok := issue(bound)
		resp, body := oauthPost(t, env, "/oauth/revoke", other.ID.String(), other.Secret, "", url.Values{"token": {tok}})
		if resp.StatusCode != 400 || body["error"] != "unauthorized_client" {
			t.Errorf("revoking another client's token: %d %v, want 400 unauthorized_client", resp.StatusCode, body)
		}
		if r := env.Do(t, apitest.Request{Path: "/me", Key: tok}); r.Status != 200 {
			t.Errorf("the token after another client's refused revocation: %d, want 200", r.Status)
		}
		// its own client revokes it
		if resp, body := oauthPost(t, env, "/oauth/revoke", bound.ID.String(), bound.Secret, "", url.Values{"token": {tok}}); resp.StatusCode != 200 {
			t.Fatalf("revoking its own token: %d %v", resp.StatusCode, body)
		}
		if r := env.Do(t, apitest.Request{Path: "/me", Key: tok}); r.Status != 401 {
			t.Errorf("the token after its client revoked it: %d, want 401", r.Status)
		}
	})

	t.Run("a public client asking for client credentials is unauthorized_client, not invalid_grant", func(t *testing.T) {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {public.ID.String()}}
		resp, body := oauthPost(t, env, "/oauth/token", "", "", "", form)
		if resp.StatusCode != 400 || body["error"] != "unauthorized_client" {
			t.Errorf("public client, client credentials: %d %v, want 400 unauthorized_client", resp.StatusCode, body)
		}
	})

	t.Run("introspection does not take an access_token field as the caller's credential", func(t *testing.T) {
		// fosite reads a bearer token from the form field access_token before HTTP Basic: any
		// access token (here another client's) let a caller with a wrong secret introspect
		mine, theirs := issue(bound), issue(other)
		form := url.Values{"token": {mine}, "access_token": {theirs}}
		resp, body := oauthPost(t, env, "/oauth/introspect", bound.ID.String(), "bdcs_wrong", "", form)
		if resp.StatusCode != 400 || body["error"] != "invalid_request" {
			t.Errorf("introspection with an access_token field: %d %v, want 400 invalid_request", resp.StatusCode, body)
		}
		// the same without the field, with the right secret, still answers
		resp, _ = oauthPost(t, env, "/oauth/introspect", bound.ID.String(), bound.Secret, "", url.Values{"token": {mine}})
		if resp.StatusCode != 200 {
			t.Errorf("introspection with the client's secret: %d, want 200", resp.StatusCode)
		}
	})
}
