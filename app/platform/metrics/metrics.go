// Package metrics exposes the server's Prometheus metrics (docs/operations.md) on a listener of
// their own (METRICS_ADDR), never on the public port: requests by route pattern, method and
// status, latency, the pgx pools, rate-limit outcomes and the Redis fallback, idempotency
// replays, the events table and the webhook queue. river's own tables are the queue; nothing
// here reads tenant data.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of ours.
const Namespace = "brokerdesk"

// Metrics holds the collectors of one server. Its methods are safe for concurrent use.
type Metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	rateLimit     *prometheus.CounterVec
	redisDegraded prometheus.Gauge
	replays       prometheus.Counter
	reruns        prometheus.Counter
}

// New registers the collectors, with Go runtime and process metrics, in a registry of their own.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests answered, by route pattern (never the raw path), method and status."},
		[]string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "http_request_duration_seconds",
		Help:    "Time from receiving a request to its answer, by route pattern and method.",
		Buckets: []float64{.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
		[]string{"route", "method"})
	m.rateLimit = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "ratelimit_decisions_total",
		Help: "Rate-limit decisions by policy (default, intake, intake-sender, auth-failures, intake-attachments, login, oauth-token, oauth-client-auth-failures) and outcome (allowed, limited; _memory while Redis is unreachable)."},
		[]string{"policy", "outcome"})
	m.redisDegraded = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "ratelimit_redis_degraded",
		Help: "1 while Redis is unreachable and the limits are counted in memory per process, else 0."})
	m.replays = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "idempotency_replays_total",
		Help: "Requests answered from a stored Idempotency-Key response."})
	m.reruns = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "db_request_reruns_total",
		Help: "Requests run again after a passing database failure rolled them back."})
	m.reg.MustRegister(m.requests, m.latency, m.rateLimit, m.redisDegraded, m.replays, m.reruns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Unmatched is the route label of a request no route matched (404 route_not_found, 405): the
// raw path would let anyone create label values.
const Unmatched = "unmatched"

// Middleware counts and times every request. Mount it first, so the status it sees is the
// status sent (the request log writes errors before returning).
func (m *Metrics) Middleware(skip func(*fiber.Ctx) bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if skip(c) {
			return c.Next()
		}
		start := time.Now()
		err := c.Next()
		// With no route matched, Fiber's last route is a middleware's ("/" for App.Use).
		route := Unmatched
		if r := c.Route(); r != nil && (r.Path != "/" || c.Path() == "/") {
			route = r.Path
		}
		method := c.Method()
		m.requests.WithLabelValues(route, method, strconv.Itoa(c.Response().StatusCode())).Inc()
		m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		return err
	}
}

// RateLimit records one rate-limit decision (ratelimit.Config.Observe).
func (m *Metrics) RateLimit(policy, outcome string) {
	m.rateLimit.WithLabelValues(policy, outcome).Inc()
}

// RedisOutage records the start (true) and end of a Redis outage (ratelimit.Config.OnOutage).
func (m *Metrics) RedisOutage(down bool) {
	if down {
		m.redisDegraded.Set(1)
	} else {
		m.redisDegraded.Set(0)
	}
}

// Replay records a response replayed for an Idempotency-Key.
func (m *Metrics) Replay() { m.replays.Inc() }

// Rerun records a request run again after a passing database failure.
func (m *Metrics) Rerun() { m.reruns.Inc() }

// Pools exports the statistics of pgx pools, labelled by name (requests, side, jobs).
func (m *Metrics) Pools(pools map[string]*pgxpool.Pool) { m.reg.MustRegister(poolCollector(pools)) }

// Queue exports the event outbox and the webhook queue, read from pool at scrape time (at most
// one second): the events table's live rows (PostgreSQL's statistics: the outbox the purge
// keeps bounded) and river's webhook jobs not yet delivered with the age of the oldest.
func (m *Metrics) Queue(pool *pgxpool.Pool) { m.reg.MustRegister(&queueCollector{pool: pool}) }

// poolDescs describe the pool statistics, by short name.
var poolDescs = func() map[string]*prometheus.Desc {
	d := map[string]*prometheus.Desc{}
	for _, n := range []struct{ name, help string }{
		{"acquired_conns", "Connections in use."},
		{"idle_conns", "Idle connections."},
		{"total_conns", "Open connections."},
		{"max_conns", "Pool size."},
		{"acquire_total", "Connections acquired (counter)."},
		{"empty_acquire_total", "Acquires that had to wait for a connection (counter)."},
		{"canceled_acquire_total", "Acquires canceled while waiting (counter)."},
		{"acquire_wait_seconds_total", "Time spent in Acquire, waiting or not (counter)."},
	} {
		d[n.name] = prometheus.NewDesc(Namespace+"_pgxpool_"+n.name, n.help, []string{"pool"}, nil)
	}
	return d
}()

type poolCollector map[string]*pgxpool.Pool

func (p poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range poolDescs {
		ch <- d
	}
}

func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	for name, pool := range p {
		s := pool.Stat()
		g := func(k string, v float64) {
			ch <- prometheus.MustNewConstMetric(poolDescs[k], prometheus.GaugeValue, v, name)
		}
		c := func(k string, v float64) {
			ch <- prometheus.MustNewConstMetric(poolDescs[k], prometheus.CounterValue, v, name)
		}
		g("acquired_conns", float64(s.AcquiredConns()))
		g("idle_conns", float64(s.IdleConns()))
		g("total_conns", float64(s.TotalConns()))
		g("max_conns", float64(s.MaxConns()))
		c("acquire_total", float64(s.AcquireCount()))
		c("empty_acquire_total", float64(s.EmptyAcquireCount()))
		c("canceled_acquire_total", float64(s.CanceledAcquireCount()))
		c("acquire_wait_seconds_total", s.AcquireDuration().Seconds())
	}
}

var (
	eventsRows  = prometheus.NewDesc(Namespace+"_events_rows", "Rows in the events table (the outbox), from PostgreSQL's statistics.", nil, nil)
	webhookJobs = prometheus.NewDesc(Namespace+"_webhook_jobs_pending",
		"Webhook deliveries not yet done (river jobs available, scheduled, retryable or running).", nil, nil)
	webhookAge = prometheus.NewDesc(Namespace+"_webhook_oldest_pending_age_seconds",
		"Age of the oldest webhook delivery not yet done; 0 when none waits.", nil, nil)
	scrapeError = prometheus.NewDesc(Namespace+"_queue_scrape_error", "1 when the queue metrics could not be read.", nil, nil)
)

type queueCollector struct{ pool *pgxpool.Pool }

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- eventsRows
	ch <- webhookJobs
	ch <- webhookAge
	ch <- scrapeError
}

const queueQuery = `SELECT
  (SELECT coalesce(max(n_live_tup), 0) FROM pg_catalog.pg_stat_user_tables WHERE schemaname = 'public' AND relname = 'events'),
  count(*),
  coalesce(extract(epoch FROM now() - min(created_at)), 0)
FROM river.river_job
WHERE queue = 'webhooks' AND state IN ('available', 'scheduled', 'retryable', 'running')`

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var rows, jobs int64
	var age float64
	failed := 0.0
	if err := q.pool.QueryRow(ctx, queueQuery).Scan(&rows, &jobs, &age); err != nil {
		failed = 1
	} else {
		ch <- prometheus.MustNewConstMetric(eventsRows, prometheus.GaugeValue, float64(rows))
		ch <- prometheus.MustNewConstMetric(webhookJobs, prometheus.GaugeValue, float64(jobs))
		ch <- prometheus.MustNewConstMetric(webhookAge, prometheus.GaugeValue, age)
	}
	ch <- prometheus.MustNewConstMetric(scrapeError, prometheus.GaugeValue, failed)
}
