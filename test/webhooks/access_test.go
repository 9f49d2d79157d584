package webhooks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func eventTypes(t *testing.T, got []received) []string {
	t.Helper()
	var out []string
	for _, r := range got {
		var e struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Type)
	}
	return out
}

func createLead(t *testing.T, env *apitest.Env, key, last string) {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: key,
		Body: map[string]any{"firstName": "Anna", "lastName": last, "email": last + "@example.com"}})
	if r.Status != 201 {
		t.Fatalf("create lead: %d %s", r.Status, r.Body)
	}
}

// TestWebhooks_CredentialDecidesAtDelivery: an endpoint receives only the event types its
// credential's scopes allow ("*" included), and nothing once the credential is deactivated.
func TestWebhooks_CredentialDecidesAtDelivery(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	key := co.Key(t, apitestKey("webhooks:write", "leads:read", "leads:write"))
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, key.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"*"}})
	env.NewUser(t, co, "agent") // user.created: needs users:read, which the key lacks
	createLead(t, env, co.Secret, "Berger")
	got := rcv.waitFor(t, 30*time.Second, "the lead event", atLeast(1))
	time.Sleep(time.Second) // room for a wrong delivery to arrive
	if types := eventTypes(t, rcv.requests()); len(types) != 1 || types[0] != "lead.created" {
		t.Fatalf("delivered %v, want only lead.created", types)
	}
	_ = got

	if _, err := env.Ops.DeactivateKey(context.Background(), key.ID.String()); err != nil {
		t.Fatal(err)
	}
	createLead(t, env, co.Secret, "Meier")
	// A second endpoint of the same company, of an active key, proves the event was dispatched.
	other := newReceiver(t)
	apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": other.URL, "events": []string{"lead.created"}})
	createLead(t, env, co.Secret, "Schulz")
	other.waitFor(t, 30*time.Second, "the active endpoint's delivery", atLeast(1))
	time.Sleep(time.Second)
	if n := len(rcv.requests()); n != 1 {
		t.Errorf("the deactivated key's endpoint got %d deliveries, want still 1", n)
	}
	assertDisabled(t, env, co.Secret, ep.ID, "credential_inactive")
}

// assertDisabled checks that the server disabled the endpoint for reason, and recorded
// webhook_endpoint.disabled about it.
func assertDisabled(t *testing.T, env *apitest.Env, key, id, reason string) {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + id, Key: key})
	var ep endpoint
	r.Decode(t, &ep)
	if r.Status != 200 || ep.Enabled || ep.DisabledReason == nil || *ep.DisabledReason != reason {
		t.Errorf("endpoint %s: %d %s, want disabled for %s", id, r.Status, r.Body, reason)
	}
	ev := env.Do(t, apitest.Request{Path: "/events?types=webhook_endpoint.disabled", Key: key})
	if ev.Status != 200 || !strings.Contains(string(ev.Body), id) {
		t.Errorf("no webhook_endpoint.disabled event about %s: %d %s", id, ev.Status, ev.Body)
	}
}

// TestWebhooks_Sandbox: an endpoint registered with a sandbox key belongs to the sandbox twin
// and receives only the twin's events; the live endpoint only the live ones.
func TestWebhooks_Sandbox(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	live, sandbox := newReceiver(t), newReceiver(t)
	liveEP := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": live.URL, "events": []string{"user.created"}})
	sbEP := apitest.Create[endpoint](t, env, co.TestSecret, "/webhook-endpoints", map[string]any{"url": sandbox.URL, "events": []string{"user.created"}})
	u := env.NewUser(t, co, "agent") // created in both: the live company and its twin
	data := func(r received) string {
		var e struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(r.Body, &e)
		return e.Data.ID
	}
	if got := live.waitFor(t, 30*time.Second, "live", atLeast(1)); data(got[0]) != u.ID.String() {
		t.Errorf("live endpoint got %s", got[0].Body)
	}
	if got := sandbox.waitFor(t, 30*time.Second, "sandbox", atLeast(1)); data(got[0]) != u.SandboxID.String() {
		t.Errorf("sandbox endpoint got %s", got[0].Body)
	}
	env.Run(t, []apitest.Case{
		{Name: "live key cannot see the sandbox endpoint", Key: co.Secret, Path: "/webhook-endpoints/" + sbEP.ID, Status: 404},
		{Name: "sandbox key cannot see the live endpoint", Key: co.TestSecret, Path: "/webhook-endpoints/" + liveEP.ID, Status: 404},
		{Name: "sandbox list has only its own", Key: co.TestSecret, Path: "/webhook-endpoints", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var page apitest.Page[endpoint]
			r.Decode(t, &page)
			if len(page.Data) != 1 || page.Data[0].ID != sbEP.ID {
				t.Errorf("sandbox list %s", r.Body)
			}
		}},
	})
}

func apitestKey(scopes ...string) operator.NewKeyInput {
	return operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, Scopes: scopes}
}
