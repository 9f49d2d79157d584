package oauth

import (
	"context"
	"net/url"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestOAuth_DeactivationRevokesGrants: setting a user inactive revokes the grants they gave
// (issue 20 item 10). Before, the tokens were only refused while the user was inactive:
// re-activating the user revived the old access and refresh tokens.
func TestOAuth_DeactivationRevokesGrants(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	u := newPerson(t, env, co, "manager")
	a := newApp(t, env, base, operator.NewOAuthClientInput{})
	bound := newApp(t, env, base, operator.NewOAuthClientInput{CompanyID: &co.ID})
	code, verifier := a.code(t, newBrowserClient(t), u)
	tok := a.exchange(t, code, verifier)
	cc := bound.token(t, url.Values{"grant_type": {"client_credentials"}})
	if tok.Status != 200 || cc.Status != 200 {
		t.Fatalf("grants: %+v, %+v", tok, cc)
	}
	ctx := context.Background()
	for _, status := range []string{"inactive", "active"} {
		if n, err := env.AppDBSetUserStatus(ctx, co.ID, u.ID, status); err != nil || n != 1 {
			t.Fatalf("set %s: %d %v", status, n, err)
		}
	}
	if status, _ := me(t, env, tok.AccessToken); status != 401 {
		t.Errorf("the access token of before the deactivation, after re-activation: %d, want 401", status)
	}
	if r := a.refresh(t, tok.RefreshToken); r.Status != 400 || r.Error != "invalid_grant" {
		t.Errorf("the refresh token of before the deactivation, after re-activation: %+v, want invalid_grant", r)
	}
	// the company's client credentials are no grant of the user: untouched
	if status, _ := me(t, env, cc.AccessToken); status != 200 {
		t.Errorf("a client-credentials token of the company after a user's deactivation: %d, want 200", status)
	}
	// the re-activated user signs in and authorizes again
	code, verifier = a.code(t, newBrowserClient(t), u)
	if again := a.exchange(t, code, verifier); again.Status != 200 {
		t.Fatalf("a new grant after re-activation: %+v", again)
	} else if status, _ := me(t, env, again.AccessToken); status != 200 {
		t.Errorf("the new grant's access token: %d, want 200", status)
	}
}
