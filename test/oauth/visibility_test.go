package oauth

import (
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestOAuth_Visibility: a token issued through an agent's consent sees only the agent's own
// leads (the user's visibility, as a key bound to the user); a company client sees all.
func TestOAuth_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	agent := newPerson(t, env, co, "agent")
	other := env.NewUser(t, co, "agent")
	lead := func(owner string) string {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: co.Secret,
			Body: map[string]any{"firstName": "Vera", "lastName": "Sicht", "email": owner + "@example.com", "ownerId": owner}})
		if r.Status != 201 {
			t.Fatalf("create lead: %d %s", r.Status, r.Body)
		}
		var l struct{ ID string }
		r.Decode(t, &l)
		return l.ID
	}
	own, foreign := lead(agent.ID.String()), lead(other.ID.String())

	partner := newApp(t, env, base, operator.NewOAuthClientInput{})
	code, verifier := partner.code(t, newBrowserClient(t), agent, oauth2.SetAuthURLParam("scope", "leads:read"))
	userTok := partner.exchange(t, code, verifier).AccessToken
	company := newApp(t, env, base, operator.NewOAuthClientInput{CompanyID: &co.ID})
	companyTok := company.token(t, url.Values{"grant_type": {"client_credentials"}}).AccessToken

	env.Run(t, []apitest.Case{
		{Name: "agent token reads the agent's lead", Key: userTok, Path: "/leads/" + own, Status: 200},
		{Name: "agent token gets 404 for a colleague's lead", Key: userTok, Path: "/leads/" + foreign, Status: 404, Problem: "not_found"},
		{Name: "company client reads the agent's lead", Key: companyTok, Path: "/leads/" + own, Status: 200},
		{Name: "company client reads the colleague's lead", Key: companyTok, Path: "/leads/" + foreign, Status: 200},
		{Name: "agent token lists only its own", Key: userTok, Path: "/leads", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var page struct{ Data []struct{ ID string } }
				r.Decode(t, &page)
				if len(page.Data) != 1 || page.Data[0].ID != own {
					t.Errorf("agent token lists %s", r.Body)
				}
			}},
	})
}
