package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// lastNames are the leads' last names in the deliveries received.
func lastNames(t *testing.T, got []received) []string {
	t.Helper()
	var names []string
	for _, r := range got {
		var e struct {
			Data struct {
				LastName string `json:"lastName"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Data.LastName)
	}
	return names
}

// ownedLead creates a lead of owner with key.
func ownedLead(t *testing.T, env *apitest.Env, key, last, owner string) {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: key,
		Body: map[string]any{"firstName": "Anna", "lastName": last, "email": last + "@example.com", "ownerId": owner}})
	if r.Status != 201 {
		t.Fatalf("create lead: %d %s", r.Status, r.Body)
	}
}

// TestWebhooks_OAuthUserGrant: an endpoint created with a user's access token (authorization
// code flow) remembers the client and the user, delivers what that user may see (decided at
// delivery: demoted to agent, a colleague's lead is no longer delivered), long after the token
// expired as long as the grant lives; once the grant is revoked (RFC 7009 with the refresh
// token), nothing more is delivered and the endpoint is disabled (credential_inactive).
func TestWebhooks_OAuthUserGrant(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	u := env.NewUser(t, co, "manager") // agents may not write webhooks
	other := env.NewUser(t, co, "agent")
	g := co.UserOAuthToken(t, u, "webhooks:write", "leads:read")
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, g.AccessToken, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"lead.created"}})
	if ep.CredentialID != nil || ep.OAuthClientID == nil || *ep.OAuthClientID != g.Client.ID.String() {
		t.Fatalf("endpoint credential: key %v, client %v; want client %s", ep.CredentialID, ep.OAuthClientID, g.Client.ID)
	}
	all := newReceiver(t) // a company-level endpoint proves every event below was dispatched
	allEP := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": all.URL, "events": []string{"lead.created"}})
	if allEP.OAuthClientID != nil || allEP.CredentialID == nil {
		t.Fatalf("key endpoint credential: key %v, client %v", allEP.CredentialID, allEP.OAuthClientID)
	}
	lead := func(last, owner string) { t.Helper(); ownedLead(t, env, co.Secret, last, owner) }
	lead("Kollege", other.ID.String()) // a manager sees it
	rcv.waitFor(t, 30*time.Second, "the colleague's lead while a manager", atLeast(1))
	if err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET role = 'agent' WHERE id = $1`, u.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lead("Fremd", other.ID.String()) // no longer visible to the user
	lead("Eigen", u.ID.String())
	all.waitFor(t, 30*time.Second, "three leads at the company endpoint", atLeast(3))
	rcv.waitFor(t, 30*time.Second, "the user's own lead", atLeast(2))

	env.RevokeOAuth(t, g, g.RefreshToken)
	lead("Danach", u.ID.String()) // the user's own, after the revocation
	all.waitFor(t, 30*time.Second, "four leads at the company endpoint", atLeast(4))
	time.Sleep(time.Second) // room for a wrong delivery to arrive
	if names := lastNames(t, rcv.requests()); len(names) != 2 || names[0] != "Kollege" || names[1] != "Eigen" {
		t.Fatalf("the grant's endpoint got leads %v, want [Kollege Eigen]", names)
	}
	assertDisabled(t, env, co.Secret, ep.ID, "credential_inactive")
}

// TestWebhooks_OAuthClientCredentials: an endpoint created with a company-bound client's
// client-credentials token delivers company-wide events (every owner's leads), keeps delivering
// while the client is active, and stops (disabled) once the operator disables the client.
func TestWebhooks_OAuthClientCredentials(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	tok := co.OAuthToken(t, "live", "webhooks:write", "leads:read")
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, tok, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"lead.created"}})
	if ep.OAuthClientID == nil {
		t.Fatalf("endpoint without its client: %+v", ep)
	}
	lead := func(last string) { t.Helper(); ownedLead(t, env, co.Secret, last, agent.ID.String()) }
	lead("Agentur")
	rcv.waitFor(t, 30*time.Second, "the agent's lead", atLeast(1))

	if _, err := env.Ops.DisableOAuthClient(context.Background(), *ep.OAuthClientID); err != nil {
		t.Fatal(err)
	}
	all := newReceiver(t)
	apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": all.URL, "events": []string{"lead.created"}})
	lead("Danach")
	all.waitFor(t, 30*time.Second, "the company endpoint's delivery", atLeast(1))
	time.Sleep(time.Second)
	if names := lastNames(t, rcv.requests()); len(names) != 1 || names[0] != "Agentur" {
		t.Fatalf("the disabled client's endpoint got %v, want [Agentur]", names)
	}
	assertDisabled(t, env, co.Secret, ep.ID, "credential_inactive")
}

// TestWebhooks_OAuthInactiveUser: the endpoint of a user's grant stops (disabled) once the user
// is set inactive, although the grant's tokens were not revoked.
func TestWebhooks_OAuthInactiveUser(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	u := env.NewUser(t, co, "manager")
	g := co.UserOAuthToken(t, u, "webhooks:write", "leads:read")
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, g.AccessToken, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"lead.created"}})
	all := newReceiver(t)
	apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": all.URL, "events": []string{"lead.created"}})
	if err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET status = 'inactive' WHERE id = $1`, u.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ownedLead(t, env, co.Secret, "Inaktiv", co.Admin.ID.String()) // a manager would see it
	all.waitFor(t, 30*time.Second, "the company endpoint's delivery", atLeast(1))
	time.Sleep(time.Second)
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the inactive user's endpoint got %d deliveries", n)
	}
	assertDisabled(t, env, co.Secret, ep.ID, "credential_inactive")
}
