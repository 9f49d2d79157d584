// Command bench measures endpoints of the real server beside a bare pgx program that makes the
// same SQL round trips, in one run, and prints (or writes into a note under docs/perf-notes/) the requests
// per second, p50 and p99 of both and their ratio:
//
//	go tool task bench -- [-suite me,intake] [-bodies json,form,dup] [-duration 10s]
//	                      [-concurrency 16] [-warmup 2s] [-rounds 2]
//	                      [-write docs/perf-notes/YYYY-MM-DD-me-vs-bare.md] [-cpuprofile server.pprof]
//
// Suite me is GET /api/public/v1/me with company-level secret keys (section "GET /me vs bare
// net/http + pgx"): its reference is issue 7's bare net/http + pgx program, this binary
// re-executed as a plain http.Server whose one handler makes the bare program's round trips
// (barehttp.go), driven by the same load over HTTP; the in-process pgx program runs too, as an
// extra row. Suite intake is POST /api/public/leads (the legacy intake) with publishable keys: a new
// person per request as JSON (json) and as an urlencoded HTML form (form), and JSON duplicates of
// open leads (dup) (section "Lead intake vs bare pgx").
//
// The database is BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (an owner or superuser URL). The
// run clones a fresh database from the migrated test template (test/pgtest), seeds one company,
// its user and its keys through operator.Service and the company's existing leads, and drops the
// database at the end. The server limits requests per credential (it announces the quota in
// RateLimit-* headers), so the load rotates over as many keys as keep each one under its quota;
// the bare program rotates over the same keys (keys.go).
//
// Before measuring, the run checks that the bare program sends exactly the statements the
// server sends: it serves one request of each kind on a server built with app.WithSQLTrace and
// compares the statement texts (trace.go).
//
// The server runs in a subprocess (this binary re-executed in server mode: app.NewServer and
// ServeListener on 127.0.0.1:0, exactly as `brokerdesk serve` builds it), so the load generator
// and the server do not share a Go scheduler or garbage collector. -inproc runs it in this
// process instead.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// benchSecret is the APP_SECRET of the benchmark server (no request here seals a cursor; it
// only keeps the server from warning about a generated secret).
const benchSecret = "bench-secret-bench-secret-0123456789abcdef"

// Suites and intake bodies.
const (
	suiteMe     = "me"
	suiteIntake = "intake"
	bodyJSON    = "json"
	bodyForm    = "form"
	bodyDup     = "dup"
)

type options struct {
	suites      []string
	bodies      []string
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	rounds      int
	write       string
	cpuprofile  string
	memprofile  string
	selfprofile string
	inproc      bool
	tokens      bool
	client      string
}

func (o options) has(suite string) bool { return slices.Contains(o.suites, suite) }

func main() {
	if len(os.Args) > 1 && os.Args[1] == childCommand {
		os.Exit(serveChild(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == bareCommand {
		os.Exit(serveBare(os.Args[2:]))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	var suites, bodies string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&suites, "suite", "me,intake", "suites to run: me (GET /me), intake (POST /api/public/leads)")
	fs.StringVar(&bodies, "bodies", "json,form,dup", "intake loads: json (new person, JSON), form (new person, urlencoded form), dup (JSON duplicate of an open lead)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each run")
	fs.IntVar(&o.concurrency, "concurrency", 16, "concurrent keep-alive connections (server) or workers (bare)")
	fs.IntVar(&o.rounds, "rounds", 2, "runs of each side, alternating the order; the better run of each is reported")
	fs.StringVar(&o.write, "write", "", "write the results into this markdown file (the sections of the suites run)")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the server process (all its runs) to this file")
	fs.StringVar(&o.memprofile, "memprofile", "", "write an allocation profile of the server process (subprocess only) to this file")
	fs.StringVar(&o.selfprofile, "benchcpuprofile", "", "write a CPU profile of the bench process (load generator and bare program) to this file")
	fs.BoolVar(&o.tokens, "tokens", true, "suite me: the server also serves GET /me with OAuth access tokens (client credentials), between its runs with keys")
	fs.BoolVar(&o.inproc, "inproc", false, "run the server in the bench process instead of a subprocess")
	fs.StringVar(&o.client, "client", "raw", "HTTP load generator: raw (minimal HTTP/1.1 keep-alive client) or nethttp (net/http)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.suites, err = list(suites, suiteMe, suiteIntake); err != nil {
		return fmt.Errorf("-suite: %w", err)
	}
	if o.bodies, err = list(bodies, bodyJSON, bodyForm, bodyDup); err != nil {
		return fmt.Errorf("-bodies: %w", err)
	}
	if o.concurrency < 1 || o.rounds < 1 || o.duration <= 0 || o.warmup < 0 {
		return errors.New("-concurrency and -rounds must be positive, -duration positive, -warmup not negative")
	}
	if o.client != "raw" && o.client != "nethttp" {
		return errors.New("-client must be raw or nethttp")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return bench(ctx, o, args)
}

// list splits a comma-separated flag value and checks every element against allowed.
func list(s string, allowed ...string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !slices.Contains(allowed, v) {
			return nil, fmt.Errorf("unknown %q (known: %s)", v, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("empty")
	}
	return out, nil
}

// fixture is the seeded database: one company, its user, its key pools and its existing leads.
type fixture struct {
	ownerURL, appURL string
	companyID        string
	userID           string
	secrets          *keyPool // company-level live secret keys (GET /me)
	tokens           *keyPool // OAuth access tokens of the company (GET /me with a token)
	serverAddr       *string  // the running server, once started (the token endpoint)
	publishables     *keyPool // live publishable keys of the user (intake)
	checkKey         string   // a publishable key outside the pool, for the checks
	cfg              app.Config
	pgVersion        string
	pgSettings       string // the settings that matter here, as the server reports them
	ops              *operator.Service
	close            func()
}

// variant is one measured load: the server side's request and the bare program's equivalent.
type variant struct {
	suite, name string
	label       string // in tables: "GET /me", "JSON, new person", ...
	keys        *keyPool
	tokens      *keyPool // suite me: the server also runs the load with OAuth access tokens (side token)
	spec        reqSpec
	bare        func(l *lease) doer // the bare side in this process; nil: spec against bareAddr
	bareAddr    string              // the bare net/http + pgx server (GET /me)
	pgx         func(l *lease) doer // GET /me: the in-process pgx program as an extra row (side pgx)
	est         float64             // requests/s the key pool is first sized for; then the fastest run so far
}

// Requests per second the key pools are first sized for: above what either side reaches here
// (the bare side is the faster), so that no key is created while a run is measured.
const (
	estMe     = 8000
	estIntake = 1500
)

// outcome is a variant's runs.
type outcome struct {
	v     *variant
	runs  map[string][]result
	order []string
}

func (x outcome) server() result { return best(x.runs[sideServer]) }
func (x outcome) bare() result   { return best(x.runs[sideBare]) }
func (x outcome) token() result  { return best(x.runs[sideToken]) }
func (x outcome) pgx() result    { return best(x.runs[sidePGX]) }

func bench(ctx context.Context, o options, args []string) error {
	load := readLoad()
	admin := firstNonEmpty(os.Getenv("BENCH_DATABASE_URL"), os.Getenv("TEST_DATABASE_URL"), defaultAdminURL)
	progress("preparing the database (template + clone)")
	tpl, err := pgtest.Template(ctx, admin)
	if err != nil {
		return fmt.Errorf("template: %w", err)
	}
	ownerURL, drop, err := pgtest.Clone(ctx, admin, tpl, "bd_bench_")
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	defer drop()
	if u, err := url.Parse(ownerURL); err == nil {
		benchDB = strings.TrimPrefix(u.Path, "/")
	}
	fx, err := seed(ctx, ownerURL, o)
	if err != nil {
		return err
	}
	defer fx.close()

	// The statements of one request of each kind, from a traced server in this process; the
	// bare program must send the same (checked once it runs).
	progress("tracing the server's SQL of one request of each kind")
	traces, bodies, err := traceServer(ctx, o, fx)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}

	if o.selfprofile != "" {
		stopProfile, err := startCPUProfile(o.selfprofile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}

	progress("starting the server")
	srv, err := startServer(ctx, o, fx)
	if err != nil {
		return err
	}
	defer srv.stop()
	if o.has(suiteMe) {
		if fx.secrets.q, err = checkMe(ctx, srv.addr, fx); err != nil {
			return err
		}
		*fx.serverAddr = srv.addr
		fx.tokens.q = fx.secrets.q // the same v1 limiter, one quota per grant
	}
	if o.has(suiteIntake) {
		if fx.publishables.q, err = checkIntake(ctx, srv.addr, fx); err != nil {
			return err
		}
	}
	bp, err := newBare(ctx, fx)
	if err != nil {
		return err
	}
	defer bp.close()
	if err := bp.check(ctx, o, fx, traces, bodies); err != nil {
		return err
	}
	// GET /me's reference is issue 7's "bare net/http + pgx program": bp.me behind net/http in a
	// subprocess of its own, driven over HTTP exactly as the server is.
	var bareSrv *server
	if o.has(suiteMe) {
		progress("starting the bare net/http + pgx server")
		if bareSrv, err = startBareServer(ctx, fx); err != nil {
			return err
		}
		defer bareSrv.stop()
		if _, err := checkMe(ctx, bareSrv.addr, fx); err != nil {
			return fmt.Errorf("bare server: %w", err)
		}
	}

	variants := buildVariants(o, fx, srv.addr, bp, bareSrv)
	var outs []outcome
	for _, v := range variants {
		x := outcome{v: v, runs: map[string][]result{}}
		for r := 0; r < o.rounds; r++ {
			sides := []string{sideServer, sideBare}
			if r%2 == 1 {
				sides = []string{sideBare, sideServer}
			}
			if v.tokens != nil { // the token between the two, in the same window as the key
				sides = []string{sides[0], sideToken, sides[1]}
			}
			if v.pgx != nil {
				sides = append(sides, sidePGX)
			}
			for _, side := range sides {
				if err := ctx.Err(); err != nil {
					return err
				}
				keys := v.keys
				if side == sideToken {
					keys = v.tokens
				}
				if err := keys.ensure(ctx, keys.needed(v.est, o.warmup+o.duration, o.concurrency)); err != nil {
					return err
				}
				progress(fmt.Sprintf("%s, round %d/%d: %s (%s warm-up + %s)", v.label, r+1, o.rounds, side, o.warmup, o.duration))
				var res result
				switch side {
				case sideServer:
					res, err = measure(ctx, o, srv.pid, func(int) (doer, error) {
						return newHTTPDoer(o.client, srv.addr, v.spec, &lease{pool: v.keys}), nil
					})
				case sideToken:
					res, err = measure(ctx, o, srv.pid, func(int) (doer, error) {
						return newHTTPDoer(o.client, srv.addr, v.spec, &lease{pool: v.tokens}), nil
					})
				case sideBare:
					if v.bare == nil {
						res, err = measure(ctx, o, bareSrv.pid, func(int) (doer, error) {
							return newHTTPDoer(o.client, v.bareAddr, v.spec, &lease{pool: v.keys}), nil
						})
					} else {
						res, err = measure(ctx, o, srv.pid, func(int) (doer, error) { return v.bare(&lease{pool: v.keys}), nil })
					}
				case sidePGX:
					res, err = measure(ctx, o, srv.pid, func(int) (doer, error) { return v.pgx(&lease{pool: v.keys}), nil })
				}
				if err != nil {
					return fmt.Errorf("%s, %s run: %w", v.label, side, err)
				}
				if side != sideToken {
					v.est = max(v.est, res.rps())
				}
				res.side, res.round = side, r+1
				x.runs[side] = append(x.runs[side], res)
				x.order = append(x.order, side)
				progress("  " + res.summary())
			}
		}
		outs = append(outs, x)
	}
	if err := srv.stop(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if bareSrv != nil {
		if err := bareSrv.stop(); err != nil {
			return fmt.Errorf("bare server: %w", err)
		}
	}

	common := report{
		opts:       o,
		command:    commandLine(args),
		machine:    machineInfo(fx.pgVersion, fx.pgSettings),
		load:       load,
		inproc:     o.inproc,
		dbMaxConns: fx.cfg.DBMaxConns,
		limiter:    limiterBackend(fx),
		when:       time.Now().UTC(),
	}
	var sections []section
	for _, suite := range []string{suiteMe, suiteIntake} {
		rep := common
		for _, x := range outs {
			if x.v.suite == suite {
				rep.outs = append(rep.outs, x)
			}
		}
		if len(rep.outs) == 0 {
			continue
		}
		rep.suite = suite
		rep.keys = rep.outs[0].v.keys
		sections = append(sections, section{title: sectionTitle(suite), md: rep.markdown()})
	}
	fmt.Println()
	for _, s := range sections {
		fmt.Print(s.md)
		fmt.Println()
	}

	bad := 0
	for _, x := range outs {
		for _, rs := range x.runs {
			for _, r := range rs {
				bad += r.non200 + r.errors
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d requests failed or answered other than expected: numbers not written", bad)
	}
	if o.write != "" {
		for _, s := range sections {
			if err := writeSection(o.write, s.title, s.md); err != nil {
				return err
			}
			progress("wrote section \"" + s.title + "\" of " + o.write)
		}
	}
	if o.cpuprofile != "" {
		progress("server CPU profile: " + o.cpuprofile + " (go tool pprof -top " + o.cpuprofile + ")")
	}
	return nil
}

// buildVariants lists the loads of the suites chosen, in the order they run.
func buildVariants(o options, fx fixture, addr string, bp *bare, bareSrv *server) []*variant {
	var vs []*variant
	if o.has(suiteMe) {
		vs = append(vs, &variant{suite: suiteMe, name: suiteMe, label: "GET /me", keys: fx.secrets, spec: meSpec(),
			bareAddr: bareSrv.addr, pgx: bp.meDoer, est: estMe})
		if o.tokens {
			vs[len(vs)-1].tokens = fx.tokens
		}
	}
	if o.has(suiteIntake) {
		for _, b := range o.bodies {
			vs = append(vs, &variant{suite: suiteIntake, name: b, label: bodyLabel(b), keys: fx.publishables,
				spec: intakeSpec(b), bare: bp.intakeDoer(b), est: estIntake})
		}
	}
	return vs
}

// seed creates the company, its user and keys through the operator service, as the CLI does,
// and the company's existing leads; then it analyses the database, so that the plans the
// connections cache are made with statistics (autovacuum may be off, as on CI).
func seed(ctx context.Context, ownerURL string, o options) (fixture, error) {
	fx := fixture{ownerURL: ownerURL, appURL: pgtest.AppURL(ownerURL), close: func() {}}
	owner, err := sql.Open("pgx", ownerURL)
	if err != nil {
		return fx, err
	}
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(owner)))
	fx.close = func() { _ = client.Close() }
	ops := operator.New(client)
	fx.ops = ops
	progress("seeding the company, its user and keys")
	co, err := ops.CreateCompany(ctx, "Bench Makler GmbH", []string{"leads"})
	if err != nil {
		return fx, fmt.Errorf("create company: %w", err)
	}
	u, err := ops.CreateUser(ctx, operator.NewUser{CompanyID: co.ID, Email: "makler@bench.example.org",
		FirstName: "Bench", LastName: "Makler", Role: "admin"})
	if err != nil {
		return fx, fmt.Errorf("create user: %w", err)
	}
	fx.companyID, fx.userID = co.ID.String(), u.ID.String()
	fx.secrets = newSecretPool(ops, co.ID)
	fx.serverAddr = new(string)
	addr := fx.serverAddr
	fx.tokens = tokenPool(ops, co.ID, func() string { return *addr })
	fx.publishables = newPublishablePool(ops, co.ID, u.ID, benchDomain)
	k, err := fx.secrets.create(ctx)
	if err != nil {
		return fx, err
	}
	fx.secrets.keys = append(fx.secrets.keys, k)
	ck, err := fx.publishables.create(ctx)
	if err != nil {
		return fx, err
	}
	fx.checkKey = ck.secret
	// The first run's keys, before ANALYZE (later runs add theirs between runs), for the
	// spec's quotas; the server's announced ones replace them before the first run.
	fx.secrets.q = quota{limit: ratelimit.APILimit, window: ratelimit.APIPeriod}
	fx.publishables.q = quota{limit: ratelimit.IntakeLimit, window: ratelimit.IntakePeriod}
	for _, p := range []struct {
		suite string
		pool  *keyPool
		est   float64
	}{{suiteMe, fx.secrets, estMe}, {suiteIntake, fx.publishables, estIntake}} {
		if o.has(p.suite) {
			if err := p.pool.ensure(ctx, p.pool.needed(p.est, o.warmup+o.duration, o.concurrency)); err != nil {
				return fx, err
			}
		}
	}
	progress(fmt.Sprintf("seeding %d existing leads", existingLeads))
	if err := seedLeads(ctx, owner, co.ID, u.ID); err != nil {
		return fx, fmt.Errorf("seed leads: %w", err)
	}
	if _, err := owner.ExecContext(ctx, "ANALYZE"); err != nil {
		return fx, fmt.Errorf("analyze: %w", err)
	}
	if err := owner.QueryRowContext(ctx, `SELECT version(), concat_ws(', ',
		'shared_buffers ' || current_setting('shared_buffers'), 'max_connections ' || current_setting('max_connections'),
		'synchronous_commit ' || current_setting('synchronous_commit'), 'fsync ' || current_setting('fsync'),
		'autovacuum ' || current_setting('autovacuum'))`).Scan(&fx.pgVersion, &fx.pgSettings); err != nil {
		return fx, err
	}
	// The server's configuration as LoadConfig reads it, with the database of this run; the
	// bare program uses the same pool size (DB_MAX_CONNS, default 20).
	fx.cfg, err = app.LoadConfig(func(k string) string { return serverEnv(fx)[k] })
	return fx, err
}

// serverEnv is the environment of the server: the process's own, with the database of this run,
// LOG_LEVEL=warn (one log line per request would dominate) and a fixed APP_SECRET.
func serverEnv(fx fixture) map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	env["DATABASE_URL"] = fx.ownerURL
	env["APP_DATABASE_URL"] = fx.appURL
	env["LOG_LEVEL"] = "warn"
	env["LOG_FORMAT"] = "json"
	env["APP_SECRET"] = benchSecret
	env["LISTEN_ADDR"] = "127.0.0.1:0"
	// Every benchmark request comes from 127.0.0.1, standing for a website's many visitors: the
	// per-sender bucket must not bind before the key's quota (the keys rotate at that quota).
	// It is still taken on every intake request, so its cost is measured.
	if env["INTAKE_SENDER_LIMIT"] == "" {
		env["INTAKE_SENDER_LIMIT"] = strconv.Itoa(ratelimit.IntakeLimit)
	}
	return env
}

// limiterBackend says where the server's rate limiter counts: Redis when REDIS_URL is set (it is
// passed through to the server), else the server's memory.
func limiterBackend(fx fixture) string {
	if fx.cfg.RedisURL != "" {
		return "Redis (REDIS_URL)"
	}
	return "memory (REDIS_URL unset)"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func progress(msg string) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), msg)
}

// readLoad is /proc/loadavg's first three fields (1, 5, 15 minutes), or "" if unreadable.
func readLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " / ")
}
