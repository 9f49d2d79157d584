// Command bench measures GET /api/public/v1/me on the real server beside a bare pgx program that
// makes the same SQL round trips, in one run, and prints (or writes into docs/benchmarks.md) the
// requests per second, p50 and p99 of both and their ratio.
//
//	go tool task bench -- [-duration 10s] [-concurrency 16] [-warmup 2s] [-rounds 2]
//	                      [-write docs/benchmarks.md] [-cpuprofile server.pprof]
//
// The database is BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (an owner or superuser URL). The
// run clones a fresh database from the migrated test template (test/pgtest), seeds one company
// and company-level secret keys through operator.Service, and drops the database at the end.
// The server limits requests per credential (it announces the quota in RateLimit-* headers), so
// the load rotates over as many keys as keep each one under its quota; the bare program rotates
// over the same keys (keys.go).
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
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// benchSecret is the APP_SECRET of the benchmark server (GET /me seals no cursor; it only keeps
// the server from warning about a generated secret).
const benchSecret = "bench-secret-bench-secret-0123456789abcdef"

type options struct {
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	rounds      int
	write       string
	cpuprofile  string
	selfprofile string
	inproc      bool
	client      string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == childCommand {
		os.Exit(serveChild(os.Args[2:]))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each run")
	fs.IntVar(&o.concurrency, "concurrency", 16, "concurrent keep-alive connections (server) or workers (bare)")
	fs.IntVar(&o.rounds, "rounds", 2, "runs of each side, alternating the order; the better run of each is reported")
	fs.StringVar(&o.write, "write", "", "write the results into this markdown file (section \""+sectionTitle+"\")")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the server process (all its runs) to this file")
	fs.StringVar(&o.selfprofile, "benchcpuprofile", "", "write a CPU profile of the bench process (load generator and bare program) to this file")
	fs.BoolVar(&o.inproc, "inproc", false, "run the server in the bench process instead of a subprocess")
	fs.StringVar(&o.client, "client", "raw", "HTTP load generator: raw (minimal HTTP/1.1 keep-alive client) or nethttp (net/http)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
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

// fixture is the seeded database: one company and its company-level live secret keys.
type fixture struct {
	ownerURL, appURL string
	companyID        string
	key              string // the first key, for the checks
	keys             *keyPool
	cfg              app.Config
	pgVersion        string
	close            func()
}

func bench(ctx context.Context, o options, args []string) error {
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
	fx, err := seed(ctx, ownerURL)
	if err != nil {
		return err
	}
	defer fx.close()

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
	if fx.keys.q, err = checkServer(ctx, srv.addr, fx); err != nil {
		return err
	}
	bare, err := newBare(ctx, fx)
	if err != nil {
		return err
	}
	defer bare.close()
	if err := bare.check(ctx, fx.companyID); err != nil {
		return err
	}

	runs := map[string][]result{}
	var order []string
	est := 3000.0 // requests/s the key pool is first sized for; then the fastest run so far
	for r := 0; r < o.rounds; r++ {
		sides := []string{sideServer, sideBare}
		if r%2 == 1 {
			sides = []string{sideBare, sideServer}
		}
		for _, side := range sides {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fx.keys.ensure(ctx, fx.keys.needed(est, o.warmup+o.duration, o.concurrency)); err != nil {
				return err
			}
			progress(fmt.Sprintf("round %d/%d: %s (%s warm-up + %s)", r+1, o.rounds, side, o.warmup, o.duration))
			var res result
			switch side {
			case sideServer:
				res, err = measure(ctx, o, srv.pid, func(int) (doer, error) {
					return newHTTPDoer(o.client, srv.addr, &lease{pool: fx.keys}), nil
				})
			case sideBare:
				res, err = measure(ctx, o, srv.pid, func(int) (doer, error) { return bare.doer(&lease{pool: fx.keys}), nil })
			}
			if err != nil {
				return fmt.Errorf("%s run: %w", side, err)
			}
			est = max(est, res.rps())
			res.side, res.round = side, r+1
			runs[side] = append(runs[side], res)
			order = append(order, side)
			progress("  " + res.summary())
		}
	}
	if err := srv.stop(); err != nil {
		return fmt.Errorf("server: %w", err)
	}

	rep := report{
		opts:       o,
		command:    commandLine(args),
		machine:    machineInfo(fx.pgVersion),
		server:     best(runs[sideServer]),
		bare:       best(runs[sideBare]),
		all:        runs,
		order:      order,
		inproc:     o.inproc,
		dbMaxConns: fx.cfg.DBMaxConns,
		quota:      fx.keys.q,
		keys:       len(fx.keys.keys),
		lateKeys:   fx.keys.late,
		limiter:    limiterBackend(fx),
		when:       time.Now().UTC(),
	}
	md := rep.markdown()
	fmt.Println()
	fmt.Print(md)

	bad := 0
	for _, rs := range runs {
		for _, r := range rs {
			bad += r.non200 + r.errors
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d requests failed or answered other than 200: numbers not written", bad)
	}
	if o.write != "" {
		if err := writeSection(o.write, md); err != nil {
			return err
		}
		progress("wrote section \"" + sectionTitle + "\" of " + o.write)
	}
	if o.cpuprofile != "" {
		progress("server CPU profile: " + o.cpuprofile + " (go tool pprof -top " + o.cpuprofile + ")")
	}
	return nil
}

// seed creates the company and its key through the operator service, as the CLI does.
func seed(ctx context.Context, ownerURL string) (fixture, error) {
	fx := fixture{ownerURL: ownerURL, appURL: pgtest.AppURL(ownerURL), close: func() {}}
	owner, err := sql.Open("pgx", ownerURL)
	if err != nil {
		return fx, err
	}
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(owner)))
	fx.close = func() { _ = client.Close() }
	ops := operator.New(client)
	co, err := ops.CreateCompany(ctx, "Bench Makler GmbH", []string{"leads"})
	if err != nil {
		return fx, fmt.Errorf("create company: %w", err)
	}
	fx.keys = &keyPool{ops: ops, company: co.ID}
	k, err := fx.keys.create(ctx)
	if err != nil {
		return fx, err
	}
	fx.keys.keys = append(fx.keys.keys, k)
	fx.companyID, fx.key = co.ID.String(), k.secret
	if err := owner.QueryRowContext(ctx, "SELECT version()").Scan(&fx.pgVersion); err != nil {
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
