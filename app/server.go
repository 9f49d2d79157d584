package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/commissions"
	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/extractions"
	"github.com/brokerdesk/brokerdesk/app/imports"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/maintenance"
	"github.com/brokerdesk/brokerdesk/app/platform/metrics"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/app/platform/tracing"
	"github.com/brokerdesk/brokerdesk/app/portal"
	"github.com/brokerdesk/brokerdesk/app/portfolio"
	"github.com/brokerdesk/brokerdesk/app/privacy"
	"github.com/brokerdesk/brokerdesk/app/signatures"
	"github.com/brokerdesk/brokerdesk/app/webhooks"
	"github.com/brokerdesk/brokerdesk/ent"
	_ "github.com/brokerdesk/brokerdesk/ent/runtime" // registers schema hooks and privacy policies
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Server is the HTTP server with its database pool.
type Server struct {
	App    *fiber.App
	pool   *pgxpool.Pool
	client *ent.Client
	drv    *tenancy.Driver // client's driver: the auth middleware begins request transactions on it
	// side is a small second pool for short transactions a request needs besides its own
	// (idempotency reservations). Taking them from the main pool could deadlock: every
	// connection held by a request transaction waiting for one more.
	sidePool *pgxpool.Pool
	side     *ent.Client
	limits   *ratelimit.Limits
	clients  ratelimit.Clients
	metrics  *metrics.Metrics
	tracing  *tracing.Tracing // nil: off
	log      zerolog.Logger
	// jobsPool serves the job queue (river), the webhook dispatcher and deliveries, apart from
	// requests so that slow receivers never hold a request's connection.
	jobsPool *pgxpool.Pool
	jobsDB   *ent.Client
	jobs     *jobs.Client
	jobsCfg  jobs.Config
	hooks    *webhooks.Module
	// oauthSecret (APP_SECRET) keys the OAuth tokens' HMAC and the login cookies.
	oauthSecret []byte
	stopRelay   func()
	portfolio   *portfolio.Module
	emails      *emails.Module
	signatures  *signatures.Module
	portal      *portal.Module
	commissions *commissions.Module
	imports     *imports.Module
	extractions *extractions.Module
	privacy     *privacy.Module
	// portfolioMaxUpload bounds POST /portfolio-transfers (PORTFOLIO_MAX_UPLOAD_MB).
	portfolioMaxUpload int64
	bucket             *blob.Bucket
	// dataKeys seal the sensitive contact groups (DATA_KEYS).
	dataKeys *datakeys.Keyring
}

// Option changes how NewServer builds the server.
type Option func(*options)

type options struct {
	testRoutes func(v1 fiber.Router, m Middleware)
	now        func() time.Time
	trace      func(query string, args any)
	schedule   []time.Duration
	config     func(*Config)
	tracing    *tracing.Tracing
	mail       mail.Config
}

// WithMail sets how the e-mail workers reach IMAP and SMTP servers (tests: the TLS roots of
// the loopback mail server).
func WithMail(c mail.Config) Option { return func(o *options) { o.mail = c } }

// WithConfig changes the configuration before the server is built (tests of limits).
func WithConfig(f func(*Config)) Option { return func(o *options) { o.config = f } }

// WithTracing traces requests and SQL statements through t (tests; serve configures tracing
// from the OTEL_* variables).
func WithTracing(t *tracing.Tracing) Option { return func(o *options) { o.tracing = t } }

// WithWebhookSchedule replaces the webhook retry schedule (tests that watch retries).
func WithWebhookSchedule(waits ...time.Duration) Option {
	return func(o *options) { o.schedule = waits }
}

// WithSQLTrace shows every SQL statement of request transactions to f (tests).
func WithSQLTrace(f func(query string, args any)) Option { return func(o *options) { o.trace = f } }

// Middleware are the shared route middlewares, handed to test routes.
type Middleware struct {
	Auth       fiber.Handler // secret key, pinned request transaction
	RateLimit  fiber.Handler // the v1 quota per credential
	Idempotent fiber.Handler // Idempotency-Key
}

// WithTestRoutes mounts extra routes under /api/public/v1; only tests use it.
func WithTestRoutes(f func(v1 fiber.Router, m Middleware)) Option {
	return func(o *options) { o.testRoutes = f }
}

// WithClock replaces time.Now (tests of expiring cursors).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// NewServer connects to the database as the app role and builds the routes.
func NewServer(ctx context.Context, cfg Config, log zerolog.Logger, opts ...Option) (*Server, error) {
	o := options{now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if o.config != nil {
		o.config(&cfg)
	}
	if cfg.AppDatabaseURL == "" {
		return nil, errors.New("DATABASE_URL (or APP_DATABASE_URL) is not set")
	}
	pcfg, err := pgxpool.ParseConfig(cfg.AppDatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("APP_DATABASE_URL: %w", err)
	}
	pcfg.MaxConns = int32(cfg.DBMaxConns)
	tr := o.tracing
	if tr == nil && cfg.Ops.Tracing {
		if tr, err = tracing.NewOTLP(ctx); err != nil {
			return nil, err
		}
	}
	if tr != nil {
		pcfg.ConnConfig.Tracer = tr.PgxTracer() // copied into the side and jobs pools' configs
	}
	// Teach pgx google/uuid, so UUID arguments are encoded in binary directly instead of going
	// through driver.Valuer and a failed binary attempt (~10% of the intake's CPU in a profile).
	pcfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgxuuid.Register(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	keepIdle(db, pcfg)
	drv := tenancy.NewDriver(db)
	drv.Trace = o.trace
	client := ent.NewClient(ent.Driver(drv))
	scfg := pcfg.Copy()
	scfg.MaxConns = max(2, pcfg.MaxConns/4)
	sidePool, err := pgxpool.NewWithConfig(ctx, scfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	side := ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(sidePool))))
	// go-redis logs every failed dial on its own (global) logger; the limiter logs an outage
	// itself, a bounded number of lines (app/platform/ratelimit), so go-redis's are dropped.
	redis.SetLogger(quietRedis{})
	m := metrics.New()
	limits, err := ratelimit.New(cfg.RedisURL, limitsConfig(cfg, log, m))
	if err != nil {
		pool.Close()
		sidePool.Close()
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	s := &Server{clients: cfg.Clients, pool: pool, client: client, drv: drv, sidePool: sidePool, side: side, limits: limits, metrics: m, tracing: tr,
		log: log, jobsCfg: cfg.Jobs, dataKeys: cfg.DataKeys, portfolioMaxUpload: cfg.PortfolioMaxUpload}
	if err := s.newJobs(ctx, cfg, pcfg, o); err != nil {
		s.Close()
		return nil, err
	}
	m.Pools(map[string]*pgxpool.Pool{"requests": pool, "side": sidePool, "jobs": s.jobsPool})
	m.Queue(s.jobsPool)
	s.App = fiber.New(fiber.Config{
		ErrorHandler:          httpx.ErrorHandler,
		DisableStartupMessage: true,
		// Bodies are streamed: httpx.BodyLimit (below) enforces 10 MiB on every route but the
		// portfolio upload, which streams its file to blob storage (PORTFOLIO_MAX_UPLOAD_MB).
		// With streaming, BodyLimit is only what fasthttp reads before routing, and a body
		// larger than it is first read up to min(BodyLimit, 8 KiB)+1 bytes: 1 lets a request
		// whose Content-Length is too large be refused after its first bytes (docs/decisions/
		// api-conventions.md "Request body limits").
		StreamRequestBody: true,
		BodyLimit:         1,
		// Parse multipart bodies in the handler, so a broken one is answered in the shape of
		// the endpoint it was sent to (the legacy intake has its own), not before routing.
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  30 * time.Second,
		WriteTimeout:                 60 * time.Second,
		IdleTimeout:                  120 * time.Second,
		// Every string Fiber hands out (method, path, params, headers, query) is a copy, not a
		// view of fasthttp's buffers, which the connection's next request overwrites: a value
		// kept past the handler (a metric label, a trace attribute exported later, a cache key,
		// a job's argument) stayed correct only by luck (issue 20 D: GET counted as "POS",
		// duplicate series, /metrics 500). It costs GET /me 5 small allocations, and each
		// c.Body() call one copy of the body (docs/decisions/operations.md).
		Immutable: true,
	})
	if tr != nil {
		s.App.Use(tr.Middleware(httpx.RequestID, rerun))
	}
	s.App.Use(m.Middleware(rerun), requestLog(log), recover.New(), httpx.BodyLimit(httpx.MaxBody, streamedUpload),
		retryTransient(cfg.Ops.DBRetryBudget, m.Rerun))
	s.oauthSecret = cfg.Secret
	s.routes(httpx.NewPager(cfg.Secret, o.now), o)
	return s, nil
}

// keepIdle lets database/sql keep up to a quarter of the request pool's connections idle
// between requests (stdlib.OpenDBFromPool keeps none): every request transaction takes one
// through database/sql (tenancy), and one kept idle is taken again without stdlib's Connect and
// pgxpool's Acquire and Release, ~5% of GET /me's CPU in a profile. The other three quarters
// stay with pgxpool for its direct users (the readiness ping, the purger) whenever requests
// leave them. database/sql closes a kept connection on pgxpool's lifetimes, and stdlib checks
// one before reuse (open transaction: discarded; idle over a second: pinged).
func keepIdle(db *sql.DB, pcfg *pgxpool.Config) {
	db.SetMaxIdleConns(max(1, int(pcfg.MaxConns)/4))
	db.SetConnMaxLifetime(pcfg.MaxConnLifetime)
	db.SetConnMaxIdleTime(pcfg.MaxConnIdleTime)
}

// streamedUpload says which requests keep their body as a stream, past the 10 MiB of the
// others: POST /portfolio-transfers (a broker's portfolio file, hundreds of MB) and POST
// /commission-statements (a 50,000-entry GDV statement is 13 MB); both handlers bound the
// stream by PORTFOLIO_MAX_UPLOAD_MB. POST /imports (a contact file) bounds it by
// imports.MaxUpload.
func streamedUpload(c *fiber.Ctx) bool {
	if c.Method() != fiber.MethodPost {
		return false
	}
	p := strings.TrimSuffix(c.Path(), "/")
	return strings.EqualFold(p, V1Prefix+"/portfolio-transfers") || strings.EqualFold(p, V1Prefix+"/commission-statements") ||
		strings.EqualFold(p, V1Prefix+"/imports")
}

// quietRedis drops go-redis's internal log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// Close releases the database pools.
func (s *Server) Close() {
	_ = s.client.Close()
	_ = s.side.Close()
	s.pool.Close()
	s.sidePool.Close()
	_ = s.limits.Close()
	if s.jobsDB != nil {
		_ = s.jobsDB.Close()
	}
	if s.jobsPool != nil {
		s.jobsPool.Close()
	}
	if s.tracing != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.tracing.Shutdown(ctx) // flush the last spans
	}
	if s.bucket != nil {
		_ = s.bucket.Close()
	}
}

// newJobs builds the job queue and the webhook module on a pool of their own: two connections
// LISTEN (the relay, river's notifier), the rest serve river's fetches and completions and the
// deliveries' short transactions (a delivery holds none while it waits for the receiver, so
// half a connection per worker is plenty).
func (s *Server) newJobs(ctx context.Context, cfg Config, pcfg *pgxpool.Config, o options) error {
	// The jobs role (JOBS_DATABASE_URL): every job is inserted, fetched and worked here, so the
	// request pool's role needs no right on river's tables
	// (docs/decisions/tenancy-and-isolation.md).
	jcfg, err := pgxpool.ParseConfig(cfg.JobsDatabaseURL)
	if err != nil {
		return fmt.Errorf("JOBS_DATABASE_URL: %w", err)
	}
	jcfg.ConnConfig.Tracer, jcfg.AfterConnect = pcfg.ConnConfig.Tracer, pcfg.AfterConnect
	jcfg.MaxConns = int32(cfg.Jobs.Workers/2 + 4)
	if s.jobsPool, err = pgxpool.NewWithConfig(ctx, jcfg); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	sealer, err := webhooks.NewSealer(cfg.WebhookSecretKeys)
	if err != nil {
		return fmt.Errorf("WEBHOOK_SECRET_KEYS: %w", err)
	}
	s.jobsDB = ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(s.jobsPool))))
	s.hooks = webhooks.New(webhooks.Deps{Pool: s.jobsPool, DB: s.jobsDB, Sealer: sealer,
		Guard: webhooks.Guard{AllowLoopback: cfg.WebhookAllowInsecure}, Authz: policy.Default(),
		Events: events.NewService(), Now: o.now, Log: s.log, Schedule: o.schedule})
	workers := river.NewWorkers()
	s.hooks.AddWorkers(workers)
	if s.bucket, err = blobstore.Open(ctx, cfg.BlobURL); err != nil {
		return fmt.Errorf("BLOB_URL: %w", err)
	}
	s.portfolio = portfolio.New(portfolio.Deps{Pool: s.jobsPool, DB: s.jobsDB, Bucket: s.bucket, Events: events.NewService(),
		Contracts: contracts.NewService(events.NewService()), Now: o.now, Log: s.log,
		BatchSize: cfg.PortfolioBatchSize, MaxUnzipped: cfg.PortfolioMaxUnzipped, MaxZipRatio: cfg.PortfolioMaxZipRatio,
		ValidateTimeout: cfg.PortfolioValidateTimeout})
	s.portfolio.AddWorkers(workers)
	s.commissions = commissions.New(commissions.Deps{Pool: s.jobsPool, DB: s.jobsDB, Bucket: s.bucket,
		Events: events.NewService(), Now: o.now, Log: s.log, MaxUpload: cfg.PortfolioMaxUpload})
	s.commissions.AddWorkers(workers)
	// Contact imports (issue 25): analysed and committed on jobs pinned as their creator.
	s.imports = imports.New(imports.Deps{Pool: s.jobsPool, DB: s.jobsDB, Bucket: s.bucket,
		Contacts: contacts.NewService(events.NewService(), cfg.DataKeys, o.now), Now: o.now, Log: s.log})
	s.imports.AddWorkers(workers)
	// Contract extraction (issue 25): documents read on a job, paid with the e-mails' points.
	s.extractions = extractions.New(extractions.Deps{DB: s.jobsDB, Docs: documents.NewService(events.NewService(), s.bucket),
		Contracts: contracts.NewService(events.NewService()), Now: o.now, Log: s.log})
	s.extractions.AddWorkers(workers)
	s.privacy = privacy.New(privacy.Deps{Pool: s.jobsPool, DB: s.jobsDB, Bucket: s.bucket,
		Contacts: contacts.NewService(events.NewService(), s.dataKeys, o.now), PublicURL: cfg.Mail.PublicURL, Now: o.now, Log: s.log})
	s.privacy.AddWorkers(workers)
	s.emails = emails.New(emails.Deps{Pool: s.jobsPool, DB: s.jobsDB, Bucket: s.bucket, Events: events.NewService(),
		Keys: cfg.DataKeys, Secret: cfg.Secret, PublicURL: cfg.Mail.PublicURL, SyncEvery: cfg.Mail.SyncEvery,
		Mail: o.mail, Now: o.now, Log: s.log})
	s.emails.AddWorkers(workers)
	// An erasure first brings the company's mailboxes up to date (docs/decisions/privacy.md).
	s.privacy.UseMailboxes(s.emails)
	pdfSealer, err := cfg.Signing.Sealer(s.log)
	if err != nil {
		return err
	}
	s.signatures = signatures.New(signatures.Deps{Pool: s.jobsPool, DB: s.jobsDB, Bucket: s.bucket, Events: events.NewService(),
		Docs: documents.NewService(events.NewService(), s.bucket), Emails: s.emails.Service(), Sealer: pdfSealer, Clients: s.clients,
		Secret: cfg.Secret, PublicURL: cfg.Mail.PublicURL, Now: o.now, Log: s.log})
	s.signatures.AddWorkers(workers)
	s.portal = portal.New(portal.Deps{DB: s.jobsDB, Bucket: s.bucket, Events: events.NewService(),
		Docs: documents.NewService(events.NewService(), s.bucket), Emails: s.emails.Service(), Signing: s.signatures,
		Keys: cfg.DataKeys, Limits: s.limits, Clients: s.clients, Secret: cfg.Secret, PublicURL: cfg.Mail.PublicURL,
		Now: o.now, Log: s.log})
	maintenance.AddWorkers(workers, maintenance.NewPurger(s.pool, s.log))
	documents.AddWorkers(workers, documents.NewSweeper(s.jobsPool, s.bucket, o.now, s.log))
	periodic := append(s.hooks.PeriodicJobs(), maintenance.PeriodicJobs()...)
	periodic = append(periodic, documents.PeriodicJobs()...)
	periodic = append(periodic, s.emails.PeriodicJobs()...)
	periodic = append(periodic, s.signatures.PeriodicJobs()...)
	periodic = append(periodic, s.privacy.PeriodicJobs()...)
	if s.jobs, err = jobs.NewClient(s.jobsPool, workers, periodic, cfg.Jobs, s.log); err != nil {
		return fmt.Errorf("job queue: %w", err)
	}
	s.hooks.Bind(s.jobs)
	s.emails.Bind(s.jobs)
	s.signatures.Bind(s.jobs)
	s.commissions.Bind(s.jobs)
	s.extractions.Bind(s.jobs)
	s.privacy.Bind(s.jobs)
	return nil
}

// StartJobs starts this process's share of the background work: river's workers and periodic
// jobs, and the webhook relay. It returns at once; StopJobs ends them. A process configured
// with WEBHOOK_WORKERS=0 works no jobs.
func (s *Server) StartJobs(ctx context.Context) error {
	// Started already (a test harness and ServeListener both start them): a second relay would
	// outlive StopJobs and hang Close on the pool.
	if s.jobsCfg.Workers == 0 || s.stopRelay != nil {
		return nil
	}
	if err := s.jobs.Start(ctx); err != nil {
		return fmt.Errorf("start job queue: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { s.hooks.Relay().Run(rctx); close(done) }()
	s.stopRelay = func() { cancel(); <-done }
	return nil
}

// StopJobs stops fetching jobs and waits for the running ones (deliveries take at most about
// 10 s) until ctx ends; then it cancels them, and river returns them to the queue for another
// process: nothing is lost either way.
func (s *Server) StopJobs(ctx context.Context) error {
	if s.stopRelay == nil {
		return nil
	}
	s.stopRelay()
	s.stopRelay = nil
	if err := s.jobs.Stop(ctx); err != nil {
		hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return errors.Join(err, s.jobs.StopAndCancel(hard))
	}
	return nil
}

// Metrics serves the Prometheus metrics (on METRICS_ADDR; tests scrape it directly).
func (s *Server) Metrics() http.Handler { return s.metrics.Handler() }

// Purger returns the background purge job on the server's pool (tests run it directly).
func (s *Server) Purger() *maintenance.Purger { return maintenance.NewPurger(s.pool, s.log) }

// Pool is the request pool (connections as the app role); tests check its role.
func (s *Server) Pool() *pgxpool.Pool { return s.pool }

// JobsPool is the job queue's pool (the jobs role): what inserts a job, as a benchmark that
// queues work directly does, connects here; the request pool's role may not reach river.
func (s *Server) JobsPool() *pgxpool.Pool { return s.jobsPool }

// Ready reports whether the database answers.
func (s *Server) Ready(ctx context.Context) error { return s.pool.Ping(ctx) }

// readyz answers GET /readyz: 503 when the database does not answer; 200 otherwise, with
// Redis "degraded" while it does not answer (the limits are counted in memory meanwhile: the
// server still serves, so a load balancer must keep sending traffic).
func (s *Server) readyz(c *fiber.Ctx) error {
	if err := s.Ready(c.UserContext()); err != nil {
		return fiber.NewError(fiber.StatusServiceUnavailable, "database unavailable")
	}
	redis := "ok"
	switch {
	case s.limits.Backend() == "memory":
		redis = "not_configured"
	case s.limits.Degraded():
		redis = "degraded"
	default:
		ctx, cancel := context.WithTimeout(c.UserContext(), 200*time.Millisecond)
		defer cancel()
		if s.limits.Ping(ctx) != nil {
			redis = "degraded"
		}
	}
	return c.JSON(fiber.Map{"status": "ok", "checks": fiber.Map{"database": "ok", "redis": redis}})
}

// Serve runs the server on cfg.ListenAddr until ctx ends, then lets in-flight requests finish
// (up to cfg.ShutdownTimeout) before it returns.
func Serve(ctx context.Context, cfg Config, log zerolog.Logger, opts ...Option) error {
	s, err := NewServer(ctx, cfg, log, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if cfg.Ops.MetricsAddr != "" {
		stop, err := s.serveMetrics(cfg.Ops.MetricsAddr)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stop()
	}
	return s.ServeListener(ctx, ln, cfg.ShutdownTimeout)
}

// serveMetrics serves GET /metrics on addr, a listener of its own (never the public port), and
// returns its stop.
func (s *Server) serveMetrics(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.log.Info().Str("addr", ln.Addr().String()).Msg("serving metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// ServeListener serves on ln until ctx ends, then shuts down gracefully. It refuses to start
// when the request or the jobs pool's role is one row-level security would not hold
// (tenancy.CheckRole):
// a superuser, BYPASSRLS, a table owner, a member of the owner, auth or operator role. Serving
// sets the GC target to defaultGCPercent unless GOGC is set (gc.go).
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, grace time.Duration) error {
	setDefaultGC(os.Getenv)
	for _, p := range []*pgxpool.Pool{s.pool, s.jobsPool} {
		if err := tenancy.CheckRole(ctx, p); err != nil {
			ln.Close()
			return err
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- s.App.Listener(ln) }()
	if err := s.StartJobs(context.WithoutCancel(ctx)); err != nil {
		_ = s.App.Shutdown()
		return err
	}
	s.log.Info().Str("addr", ln.Addr().String()).Msg("serving")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info().Msg("shutting down: finishing in-flight requests and running jobs")
	deadline := time.Now().Add(grace)
	if err := s.App.ShutdownWithTimeout(grace); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	jctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := s.StopJobs(jctx); err != nil {
		s.log.Warn().Err(err).Msg("jobs did not finish in time; river hands them to another process")
	}
	return <-errc
}

// limitsConfig is the limiters' configuration: the quotas from the environment (cfg.Limits),
// the outage behaviour (REPLICAS) and the metrics that watch them.
func limitsConfig(cfg Config, log zerolog.Logger, m *metrics.Metrics) ratelimit.Config {
	lc := cfg.Limits
	lc.Replicas, lc.Log, lc.Observe, lc.OnOutage = cfg.Ops.Replicas, log, m.RateLimit, m.RedisOutage
	return lc
}
