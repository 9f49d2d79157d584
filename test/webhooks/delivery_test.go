package webhooks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestWebhooks_DeliveryRetriesAndRedelivery: a receiver that fails the first two attempts gets
// the event a third time and answers 200; every attempt is in the log; the body is the event as
// GET /events shows it, signed so the Standard Webhooks library verifies it; the retry
// operation delivers it once more with the same webhook-id.
func TestWebhooks_DeliveryRetriesAndRedelivery(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	rcv := newReceiver(t)
	rcv.failures.Store(2)
	ep := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL + "/hook", "events": []string{"user.created"}})
	if !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("secret %q", ep.Secret)
	}
	u := env.NewUser(t, co, "agent") // user.created

	got := rcv.waitFor(t, 30*time.Second, "three attempts", atLeast(3))
	id := got[0].Header.Get("webhook-id")
	for i, r := range got {
		if r.Header.Get("webhook-id") != id {
			t.Errorf("attempt %d has webhook-id %q, want %q", i+1, r.Header.Get("webhook-id"), id)
		}
		if err := verify(t, ep.Secret, r); err != nil {
			t.Errorf("attempt %d does not verify: %v", i+1, err)
		}
		if r.Header.Get("Service-Signature") != r.Header.Get("webhook-signature") {
			t.Errorf("Service-Signature %q differs from webhook-signature %q", r.Header.Get("Service-Signature"), r.Header.Get("webhook-signature"))
		}
	}
	var ev struct {
		ID   string         `json:"id"`
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(got[2].Body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.ID != id || ev.Type != "user.created" || ev.Data["id"] != u.ID.String() {
		t.Errorf("delivered %s", got[2].Body)
	}
	// The same envelope as the feed.
	var feed apitest.Page[json.RawMessage]
	env.Do(t, apitest.Request{Path: "/events?types=user.created", Key: co.Secret}).Decode(t, &feed)
	found := false
	for _, e := range feed.Data {
		found = found || string(e) == string(got[2].Body)
	}
	if !found {
		t.Errorf("the delivered body is not an item of GET /events:\n%s", got[2].Body)
	}

	log := waitLog(t, env, co.Secret, ep.ID, func(d []delivery) bool { return len(d) == 3 && d[0].Status == "succeeded" })
	for i, want := range []struct {
		attempt int
		status  string
		http    int
	}{{3, "succeeded", 200}, {2, "failed", 500}, {1, "failed", 500}} {
		d := log[i]
		if d.Attempt != want.attempt || d.Status != want.status || d.HTTPStatus == nil || *d.HTTPStatus != want.http ||
			d.EventID != id || d.DurationMs == nil {
			t.Errorf("log[%d] = %+v, want attempt %d %s %d", i, d, want.attempt, want.status, want.http)
		}
	}
	if log[1].ResponseBody == nil || *log[1].ResponseBody != "try again later" || log[1].Error == nil {
		t.Errorf("failed attempt lacks the answer or the error: %+v", log[1])
	}
	if n := len(deliveries(t, env, co.Secret, ep.ID, "?status=failed")); n != 2 {
		t.Errorf("status=failed lists %d, want 2", n)
	}

	// Redeliver the succeeded one: 202, a pending row, then a fourth request with the same id.
	r := env.Do(t, apitest.Request{Method: "POST", Key: co.Secret,
		Path: "/webhook-endpoints/" + ep.ID + "/deliveries/" + log[0].ID + "/retry"})
	if r.Status != 202 {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
	var pending delivery
	r.Decode(t, &pending)
	if pending.Status != "pending" || pending.Attempt != 4 || pending.EventID != id {
		t.Errorf("retry answered %+v", pending)
	}
	got = rcv.waitFor(t, 30*time.Second, "the redelivery", atLeast(4))
	if got[3].Header.Get("webhook-id") != id {
		t.Errorf("redelivery webhook-id %q, want %q", got[3].Header.Get("webhook-id"), id)
	}
	log = waitLog(t, env, co.Secret, ep.ID, func(d []delivery) bool { return len(d) == 4 && d[0].Status == "succeeded" })
	if log[0].ID != pending.ID || log[0].Attempt != 4 {
		t.Errorf("the redelivery did not fill its pending row: %+v", log[0])
	}
}

// TestWebhooks_Ping: the test operation sends a ping now and answers with its delivery, also
// when the receiver fails; pings are not part of the feed.
func TestWebhooks_Ping(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"*"}})
	path := "/webhook-endpoints/" + ep.ID + "/test"
	env.Run(t, []apitest.Case{
		{Name: "ping succeeds", Key: co.Secret, Method: "POST", Path: path, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var d delivery
			r.Decode(t, &d)
			if d.Status != "succeeded" || d.EventType != "ping" || d.Attempt != 1 || *d.HTTPStatus != 200 {
				t.Errorf("ping delivery %+v", d)
			}
			got := rcv.requests()
			if len(got) != 1 || got[0].Header.Get("webhook-id") != d.EventID {
				t.Fatalf("receiver got %d requests", len(got))
			}
			if err := verify(t, ep.Secret, got[0]); err != nil {
				t.Errorf("ping does not verify: %v", err)
			}
			var ev struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			_ = json.Unmarshal(got[0].Body, &ev)
			if ev.Type != "ping" || ev.Data["webhookEndpointId"] != ep.ID {
				t.Errorf("ping body %s", got[0].Body)
			}
		}},
		{Name: "failing receiver", Key: co.Secret, Method: "POST", Path: path, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			rcv.always.Store(503)
			defer rcv.always.Store(0)
			var d delivery
			env.Do(t, apitest.Request{Method: "POST", Path: path, Key: co.Secret}).Decode(t, &d)
			if d.Status != "failed" || d.HTTPStatus == nil || *d.HTTPStatus != 503 || d.ResponseBody == nil ||
				*d.ResponseBody != "always Service Unavailable" || d.NextAttemptAt != nil {
				t.Errorf("failed ping %+v", d)
			}
		}},
		{Name: "pings are not in the feed", Key: co.Secret, Path: "/events?types=ping", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var feed apitest.Page[any]
			r.Decode(t, &feed)
			if len(feed.Data) != 0 {
				t.Errorf("feed has pings: %s", r.Body)
			}
		}},
	})
}
