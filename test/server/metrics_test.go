package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestMetrics_Scrape: the route label is the pattern, never the raw path with ids; rate-limit
// outcomes, the pools and the queue are exported.
func TestMetrics_Scrape(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithClock(time.Now)) // a server of its own: counts start at 0
	co := env.NewCompany(t)
	id := uuid.NewString()
	env.Do(t, apitest.Request{Method: "GET", Path: "/me", Key: co.Secret})
	env.Do(t, apitest.Request{Method: "GET", Path: "/leads/" + id, Key: co.Secret}) // 404 not_found
	env.Do(t, apitest.Request{Method: "GET", Path: "/no-such-route/" + id})         // 404 route_not_found

	rec := httptest.NewRecorder()
	env.Server.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	for _, want := range []string{
		`brokerdesk_http_requests_total{method="GET",route="/api/public/v1/me",status="200"} 1`,
		`brokerdesk_http_requests_total{method="GET",route="/api/public/v1/leads/:leadId",status="404"} 1`,
		`brokerdesk_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`brokerdesk_http_request_duration_seconds_bucket{method="GET",route="/api/public/v1/me",le="+Inf"} 1`,
		`brokerdesk_ratelimit_decisions_total{outcome="allowed",policy="default"} 2`,
		`brokerdesk_ratelimit_redis_degraded 0`,
		`brokerdesk_pgxpool_max_conns{pool="requests"}`,
		`brokerdesk_pgxpool_acquire_total{pool="side"}`,
		`brokerdesk_webhook_jobs_pending 0`,
		`brokerdesk_webhook_oldest_pending_age_seconds 0`,
		`brokerdesk_queue_scrape_error 0`,
		`brokerdesk_events_rows`,
		`brokerdesk_idempotency_replays_total 0`,
		`go_goroutines`,
		`process_open_fds`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if testing.Verbose() {
		t.Log(text)
	}
	if strings.Contains(text, id) {
		t.Errorf("a raw path with an id reached a label")
	}
}
