package apitest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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
