package webhooks

import (
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// These tests move the server's clock, so they do not run in parallel (Go runs the parallel
// tests of the package after them).

// TestWebhooks_RotationOverlap: after a rotation both secrets sign (two v1 entries, each
// verifies with the Standard Webhooks library; a tampered body verifies with neither); 24 hours
// later only the new one does.
func TestWebhooks_RotationOverlap(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"*"}})
	ping := func() received {
		t.Helper()
		n := len(rcv.requests())
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints/" + ep.ID + "/test", Key: co.Secret})
		if r.Status != 200 {
			t.Fatalf("ping: %d %s", r.Status, r.Body)
		}
		return rcv.requests()[n]
	}
	before := ping()
	if err := verify(t, ep.Secret, before); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	var rot struct {
		Secret string `json:"secret"`
	}
	env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints/" + ep.ID + "/rotate-secret", Key: co.Secret}).Decode(t, &rot)

	during := ping()
	if n := len(strings.Fields(during.Header.Get("webhook-signature"))); n != 2 {
		t.Errorf("during the overlap %d signatures, want 2: %q", n, during.Header.Get("webhook-signature"))
	}
	for name, s := range map[string]string{"old": ep.Secret, "new": rot.Secret} {
		if err := verify(t, s, during); err != nil {
			t.Errorf("during the overlap the %s secret does not verify: %v", name, err)
		}
		tampered := received{Header: during.Header, Body: []byte(strings.Replace(string(during.Body), "ping", "pong", 1))}
		if err := verify(t, s, tampered); err == nil {
			t.Errorf("a tampered body verifies with the %s secret", name)
		}
	}

	clk.advance(t, 24*time.Hour+time.Minute)
	after := ping()
	if n := len(strings.Fields(after.Header.Get("webhook-signature"))); n != 1 {
		t.Errorf("after the overlap %d signatures, want 1", n)
	}
	if err := verifyAt(t, rot.Secret, after); err != nil {
		t.Errorf("after the overlap the new secret does not verify: %v", err)
	}
	if err := verifyAt(t, ep.Secret, after); err == nil {
		t.Error("after the overlap the old secret still verifies")
	}
	var got endpoint
	env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + ep.ID, Key: co.Secret}).Decode(t, &got)
	if got.PreviousSecretExpiresAt != nil {
		t.Errorf("previousSecretExpiresAt still shown after the overlap: %v", got.PreviousSecretExpiresAt)
	}
}

type feedEvent struct {
	Type string   `json:"type"`
	Data endpoint `json:"data"`
}

func disabledEvents(t *testing.T, env *apitest.Env, key string) []feedEvent {
	t.Helper()
	var feed apitest.Page[feedEvent]
	env.Do(t, apitest.Request{Path: "/events?types=webhook_endpoint.disabled", Key: key}).Decode(t, &feed)
	return feed.Data
}

// TestWebhooks_GoneDisables: a 410 answer disables the endpoint at once, with an event; nothing
// more is delivered to it.
func TestWebhooks_GoneDisables(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	rcv := newReceiver(t)
	rcv.always.Store(410)
	ep := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"user.created"}})
	env.NewUser(t, co, "agent")
	log := waitLog(t, env, co.Secret, ep.ID, func(d []delivery) bool { return len(d) == 1 })
	if log[0].Status != "failed" || *log[0].HTTPStatus != 410 || log[0].NextAttemptAt != nil {
		t.Errorf("410 attempt %+v", log[0])
	}
	var got endpoint
	env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + ep.ID, Key: co.Secret}).Decode(t, &got)
	if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != "endpoint_gone" {
		t.Fatalf("after 410: %+v", got)
	}
	evs := disabledEvents(t, env, co.Secret)
	if len(evs) != 1 || evs[0].Data.ID != ep.ID || *evs[0].Data.DisabledReason != "endpoint_gone" {
		t.Errorf("webhook_endpoint.disabled events %+v", evs)
	}
	env.NewUser(t, co, "agent")
	time.Sleep(1500 * time.Millisecond)
	if n := len(rcv.requests()); n != 1 {
		t.Errorf("a disabled endpoint got %d requests, want 1", n)
	}
}

// TestWebhooks_FailingFiveDaysDisables: an endpoint whose attempts fail for five days in a row
// is disabled with an event; a success in between would have reset the streak.
func TestWebhooks_FailingFiveDaysDisables(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	rcv := newReceiver(t)
	rcv.always.Store(500)
	ep := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"user.created"}})
	env.NewUser(t, co, "agent")
	waitLog(t, env, co.Secret, ep.ID, func(d []delivery) bool { return len(d) >= 1 })
	var got endpoint
	env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + ep.ID, Key: co.Secret}).Decode(t, &got)
	if got.FailingSince == nil || !got.Enabled {
		t.Fatalf("after a failure: %+v", got)
	}
	clk.advance(t, 5*24*time.Hour+time.Hour)
	deadline := time.Now().Add(30 * time.Second)
	for got.Enabled && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + ep.ID, Key: co.Secret}).Decode(t, &got)
	}
	if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != "failing" {
		t.Fatalf("after five days of failures: %+v", got)
	}
	if evs := disabledEvents(t, env, co.Secret); len(evs) != 1 || *evs[0].Data.DisabledReason != "failing" {
		t.Errorf("webhook_endpoint.disabled events %+v", evs)
	}
	// Enabling it again clears the streak and the reason.
	r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/webhook-endpoints/" + ep.ID, Key: co.Secret, Body: map[string]any{"enabled": true}})
	r.Decode(t, &got)
	if !got.Enabled || got.DisabledReason != nil || got.FailingSince != nil {
		t.Errorf("re-enabled: %+v", got)
	}
}
