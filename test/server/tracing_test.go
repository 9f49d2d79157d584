package server

import (
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/platform/tracing"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestTracing_RequestAndSQLSpans: a request is one server span named by its route pattern with
// the request id; its SQL statements are child spans; no attribute holds the key, an e-mail
// address or a raw path.
func TestTracing_RequestAndSQLSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	env := apitest.New(t, app.WithTracing(tracing.New(tp)))
	co := env.NewCompany(t)
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/me", Key: co.Secret,
		Header: map[string]string{"X-Request-Id": "trace-test-0001"}})
	if r.Status != 200 {
		t.Fatalf("GET /me: %d", r.Status)
	}
	var server sdktrace.ReadOnlySpan
	sql := 0
	for _, s := range exp.GetSpans().Snapshots() {
		for _, a := range s.Attributes() {
			v := a.Value.Emit()
			if strings.Contains(v, co.Secret) || strings.Contains(v, "@example.com") || strings.Contains(v, co.ID.String()) {
				t.Errorf("span %q attribute %s holds personal data or a secret: %s", s.Name(), a.Key, v)
			}
		}
		if s.Name() == "GET /api/public/v1/me" {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no span GET /api/public/v1/me among %d", len(exp.GetSpans()))
	}
	id := ""
	for _, a := range server.Attributes() {
		if a.Key == "brokerdesk.request_id" {
			id = a.Value.AsString()
		}
	}
	if id != "trace-test-0001" {
		t.Errorf("request id attribute %q, want trace-test-0001", id)
	}
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Parent().SpanID() == server.SpanContext().SpanID() && s.SpanContext().TraceID() == server.SpanContext().TraceID() {
			sql++
		}
	}
	if sql == 0 {
		t.Errorf("no SQL spans under the request's span")
	}
}
