// Package tracing sends OpenTelemetry traces when the standard OTEL_* variables ask for it (off
// by default): a span per HTTP request (route pattern, method, status, request id) and, through
// github.com/exaring/otelpgx, a span per SQL statement. No attribute carries personal data or a
// secret: the path is recorded as its route pattern (never raw paths or query strings, which can
// hold e-mail addresses), and SQL arguments are never recorded (statements use placeholders).
package tracing

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Enabled reports whether getenv asks for traces: an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp,
// unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Tracing is the tracer provider of one server.
type Tracing struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
	stop   func(context.Context) error
}

// NewOTLP builds a provider exporting over OTLP/HTTP; the exporter, sampler and resource read
// the standard OTEL_* variables (endpoint, headers, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER …).
func NewOTLP(ctx context.Context) (*Tracing, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName("brokerdesk")),
		resource.Environment())
	if err != nil {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	return New(sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))), nil
}

// New wraps a provider (tests pass one with an in-memory exporter).
func New(tp *sdktrace.TracerProvider) *Tracing {
	return &Tracing{tp: tp, tracer: tp.Tracer("github.com/brokerdesk/brokerdesk"), stop: tp.Shutdown}
}

// Shutdown flushes the spans not yet sent.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.stop(ctx) }

// PgxTracer traces every statement of a pool (set it as pgx.ConnConfig.Tracer). Arguments are
// not recorded.
func (t *Tracing) PgxTracer() pgx.QueryTracer {
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(t.tp), otelpgx.WithDisableConnectionDetailsInAttributes())
}

var propagator = propagation.TraceContext{}

// headerCarrier reads W3C trace context from a Fiber request.
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(k string) string { return h.c.Get(k) }
func (h headerCarrier) Set(string, string)  {}
func (h headerCarrier) Keys() []string      { return []string{"traceparent", "tracestate"} }

// Middleware opens the request's span (continuing a traceparent the caller sent) and puts it in
// the user context, where the SQL spans find their parent. requestID reads the request id
// once the chain ran; skip passes reruns through (one span per request).
func (t *Tracing) Middleware(requestID func(*fiber.Ctx) string, skip func(*fiber.Ctx) bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if skip(c) {
			return c.Next()
		}
		ctx := propagator.Extract(c.UserContext(), headerCarrier{c})
		ctx, span := t.tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(c.Method())))
		defer span.End()
		c.SetUserContext(ctx)
		err := c.Next()
		route := "unmatched"
		if r := c.Route(); r != nil && (r.Path != "/" || c.Path() == "/") {
			route = r.Path
		}
		status := c.Response().StatusCode()
		span.SetName(c.Method() + " " + route)
		span.SetAttributes(semconv.HTTPRoute(route), semconv.HTTPResponseStatusCode(status),
			attribute.String("brokerdesk.request_id", requestID(c)))
		if status >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(status))
		}
		return err
	}
}
