package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Section titles of the notes -write writes (docs/perf-notes/), by suite.
const (
	titleMe     = "## GET /me vs bare net/http + pgx"
	titleIntake = "## Lead intake vs bare pgx"
)

func sectionTitle(suite string) string {
	if suite == suiteIntake {
		return titleIntake
	}
	return titleMe
}

// section is one measured section of such a note.
type section struct{ title, md string }

// intro heads a note when -write creates it (docs/benchmarks.md has the index and method).
const intro = `# Benchmark run (cmd/bench)

Written by ` + "`go tool task bench -- -write <this file>`" + `. Method, targets and the table of the
latest figures: [../benchmarks.md](../benchmarks.md); copy this run's figures into that table.
`

// cpuUsage is CPU time spent during a measured window, by process group.
type cpuUsage struct {
	self, server, postgres time.Duration // this process; the server subprocess; the run's PostgreSQL backends
	redis                  time.Duration // redis-server processes
	busy, total            time.Duration // the whole machine (all cores), from /proc/stat
	requests               int
}

func (u cpuUsage) busyPercent() float64 {
	if u.total == 0 {
		return 0
	}
	return 100 * float64(u.busy) / float64(u.total)
}

// other is the machine's busy time outside this process, the server and PostgreSQL: the kernel's
// own work and whatever else runs (a busy neighbour shows here).
func (u cpuUsage) other() time.Duration {
	return max(u.busy-u.self-u.server-u.postgres-u.redis, 0)
}

// own is the CPU time of the processes a request goes through: server, bench process,
// PostgreSQL and Redis. On a machine other work shares, own per request is the steadier
// figure: requests per second drop with the neighbours' load, own CPU per request much less.
func (u cpuUsage) own() time.Duration { return u.self + u.server + u.postgres + u.redis }

// perRequest is d in µs per request.
func (u cpuUsage) perRequest(d time.Duration) string {
	if u.requests == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(u.requests))
}

type cpuSnapshot struct {
	self, server time.Duration
	postgres     map[int]time.Duration
	redis        map[int]time.Duration
	busy, total  time.Duration
}

// tick is USER_HZ, the unit of /proc/*/stat and /proc/stat: 100 on every Linux this runs on.
const tick = 10 * time.Millisecond

func snapshotCPU(serverPID int) cpuSnapshot {
	var s cpuSnapshot
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if serverPID > 0 {
		s.server, _, _ = procCPU(serverPID)
	}
	s.postgres, s.redis = map[int]time.Duration{}, map[int]time.Duration{}
	if ents, err := os.ReadDir("/proc"); err == nil {
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			d, comm, err := procCPU(pid)
			switch {
			case err != nil:
			case comm == "postgres" && benchPostgres(pid):
				s.postgres[pid] = d
			case comm == "redis-server":
				s.redis[pid] = d
			}
		}
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
		for i := 1; i < len(f) && i <= 8; i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			s.total += time.Duration(v) * tick
			if i != 4 && i != 5 { // idle, iowait
				s.busy += time.Duration(v) * tick
			}
		}
	}
	return s
}

// benchDB is the run's database. Only PostgreSQL's backends connected to it are counted: on a
// shared machine the server's other backends (and other clusters) serve other work.
var benchDB string

// benchPostgres reports whether a postgres process is a backend of benchDB. A backend's title
// is "postgres: [cluster_name:] user database host(port) state".
func benchPostgres(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	f := strings.Fields(strings.ReplaceAll(string(b), "\x00", " "))
	if len(f) < 2 || f[0] != "postgres:" {
		return false // the postmaster
	}
	f = f[1:]
	if strings.HasSuffix(f[0], ":") { // cluster_name
		f = f[1:]
	}
	return len(f) >= 3 && f[1] == benchDB && (strings.Contains(f[2], "(") || f[2] == "[local]")
}

// procCPU is a process's user+system time and its command name.
func procCPU(pid int) (time.Duration, string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return 0, "", errors.New("bad stat")
	}
	comm := s[open+1 : end]
	f := strings.Fields(s[end+1:]) // state ppid ... utime(12) stime(13)
	if len(f) < 13 {
		return 0, "", errors.New("bad stat")
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * tick, comm, nil
}

func (a cpuSnapshot) sub(b cpuSnapshot) cpuUsage {
	u := cpuUsage{self: a.self - b.self, server: a.server - b.server, busy: a.busy - b.busy, total: a.total - b.total}
	for pid, d := range a.postgres {
		u.postgres += d - b.postgres[pid]
	}
	for pid, d := range a.redis {
		u.redis += d - b.redis[pid]
	}
	return u
}

type machine struct {
	cpus     int
	cpuModel string
	kernel   string
	goVer    string
	pgVer    string
	pgSet    string
}

func machineInfo(pgVersion, pgSettings string) machine {
	m := machine{cpus: runtime.NumCPU(), goVer: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, pgVer: pgVersion, pgSet: pgSettings}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if m.cpuModel == "" {
		m.cpuModel = "unknown CPU"
	}
	return m
}

type report struct {
	opts       options
	command    string
	machine    machine
	load       string // load average (1, 5, 15 min) when the run started
	inproc     bool
	dbMaxConns int
	limiter    string
	when       time.Time
	suite      string
	outs       []outcome
	keys       *keyPool
}

func (r report) markdown() string {
	var b strings.Builder
	o := r.opts
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	where := "a subprocess (this binary re-executed in server mode), so the load generator and the server do not share a Go scheduler"
	if r.inproc {
		where = "the bench process itself (-inproc)"
	}
	w("%s\n\n", sectionTitle(r.suite))
	q := r.keys.q
	quotaText := func(what string) {
		if q.limit > 0 {
			w("The server limits each %s to %d requests per %s (RateLimit-Policy: %s; rate limiter in %s), so both sides rotate over one pool of keys, at most %d requests per key and quota window: %d keys in all",
				what, q.limit, fmtWindow(q), q.policy, r.limiter, q.perKey(), len(r.keys.keys))
			if r.keys.late > 0 {
				w(", %d of them created during a run when the pool ran dry", r.keys.late)
			}
			w(". ")
		} else {
			w("The server announced no rate limit; each worker uses its own key (%d keys). ", len(r.keys.keys))
		}
	}
	switch r.suite {
	case suiteMe:
		w("`GET /api/public/v1/me` with a company-level secret key on the real server (app.NewServer + ServeListener on 127.0.0.1, LOG_LEVEL=warn) in %s, ", where)
		w("driven over %d concurrent keep-alive connections (%s load generator), beside issue 7's reference, a bare net/http + pgx program: this binary re-executed as a plain `http.Server` with one `GET /api/public/v1/me` handler (no router, middleware, rate limiter or logging) in a subprocess of its own, driven by the same load over HTTP (same connections, same key rotation), whose handler reads the key from Authorization, makes the same SQL round trips on a pgxpool as the app role of the server's size (DB_MAX_CONNS=%d) and writes the answer's JSON shape with encoding/json: ", o.concurrency, clientName(o.client), r.dbMaxConns)
		w("BEGIN together with the credential lookup that pins the transaction (`auth_credential`, plpgsql, so each connection caches its plan, + `set_config`), sent as one pgx batch, one round trip, as the server sends them, whose row also carries what /me shows (company name, the user's e-mail and names), so neither side reads the company again; COMMIT (2 round trips). ")
		w("The server also runs the v1 rate limiter (app/platform/ratelimit) on every request, after authentication; with the memory store it costs CPU but no round trip, with REDIS_URL one Redis call. ")
		w("For reference only, the row \"bare pgx in the bench process, no HTTP\" runs the same round trips from %d workers calling pgx directly in the bench process (no HTTP, no JSON), a stricter floor than the issue's; the target compares the server with the net/http + pgx program. ", o.concurrency)
		quotaText("credential")
		if len(r.outs) > 0 && r.outs[0].v.tokens != nil {
			w("Between its runs with keys the server serves the same load with OAuth access tokens (client credentials, `auth_token` in place of `auth_credential`, one client per quota since the quota counts per grant: %d tokens); the token/key rows compare the better run of each. ", len(r.outs[0].v.tokens.keys))
		}
	case suiteIntake:
		w("`POST /api/public/leads` (the legacy intake; `POST /api/public/v1/leads/intake` runs the same chain and differs only in the shape of its answers) with live publishable keys of the company's user, on the real server (app.NewServer + ServeListener on 127.0.0.1, LOG_LEVEL=warn) in %s, ", where)
		w("driven over %d concurrent keep-alive connections (%s load generator), from a page of %s (Origin; the keys allow %s). ", o.concurrency, clientName(o.client), benchOrigin, benchDomain)
		w("Every submission carries firstName, lastName, email, phone, notes (with an umlaut), source, two additionalFields and _meta.url. ")
		w("**JSON, new person**: `application/json` with X-API-Key, as the JavaScript SDK sends it; **urlencoded form, new person**: `application/x-www-form-urlencoded` with the key in `_key` and `additionalFields[name]`, as a plain HTML form posts it; a new person has a unique e-mail and phone, so every request creates a lead (the common case). ")
		w("**JSON, duplicate of an open lead**: the JSON body for one of the company's first %s existing leads, round robin, so every request merges into that lead (its notes grow by one entry, and the old row version stays until vacuum removes it). ", fmtInt(dupPersons))
		w("The company starts with %s open leads; the leads each run creates stay. ", fmtInt(existingLeads))
		w("Beside it, a bare pgx program with %d workers on a pgxpool as the app role of the server's size (DB_MAX_CONNS=%d) makes the same SQL round trips per request, verbatim (checked statement by statement against a trace of the server before measuring): ", o.concurrency, r.dbMaxConns)
		w("BEGIN; `auth_credential` + `set_config`; the company row (its duplicate rules); `pg_advisory_xact_lock` for the e-mail key and for the phone key; the duplicate lookup (`FOR UPDATE`); for a new person the stage `new` and `INSERT INTO leads`, for a duplicate the merge `UPDATE` and ent's read-back of the row; the lead's attachments; `INSERT INTO lead_submissions`; `INSERT INTO events`; COMMIT, where the deferred trigger numbers the event under the company's `event_counters` row lock (12 round trips either way, counting BEGIN and COMMIT). ")
		w("It encodes the same JSON (submission payload, event data, actor) with encoding/json, but does no HTTP, no body parsing, no validation, no phone normalisation and no ent; JSON and form bodies differ only in what the server parses, so their bare runs do the same work. ")
		quotaText("publishable key")
	}
	w("Each run: %s warm-up, then %s measured. Each side ran %d times per load, alternating which side goes first; the table shows the better run of each (by requests/s), all runs are listed below.\n\n",
		o.warmup, o.duration, o.rounds)

	w("| | requests/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	allMet := true
	for _, x := range r.outs {
		srv, bare := x.server(), x.bare()
		ratio := srv.rps() / bare.rps()
		allMet = allMet && ratio >= target(r.suite)
		suffix := ""
		if len(r.outs) > 1 {
			suffix = " (" + x.v.label + ")"
		}
		w("| server, %s | %s | %s | %s |\n", x.v.label, fmtRPS(srv.rps()), fmtDur(srv.quantile(.5)), fmtDur(srv.quantile(.99)))
		w("| %s, same round trips | %s | %s | %s |\n", bareName(r.suite), fmtRPS(bare.rps()), fmtDur(bare.quantile(.5)), fmtDur(bare.quantile(.99)))
		w("| **server / bare**%s | **%.0f%%** | %.2f× | %.2f× |\n", suffix, 100*ratio,
			ratioDur(srv.quantile(.5), bare.quantile(.5)), ratioDur(srv.quantile(.99), bare.quantile(.99)))
		if len(x.runs[sidePGX]) > 0 {
			pg := x.pgx()
			w("| bare pgx in the bench process, no HTTP (reference only) | %s | %s | %s |\n", fmtRPS(pg.rps()), fmtDur(pg.quantile(.5)), fmtDur(pg.quantile(.99)))
			w("| server / in-process pgx (not the target) | %.0f%% | %.2f× | %.2f× |\n", 100*srv.rps()/pg.rps(),
				ratioDur(srv.quantile(.5), pg.quantile(.5)), ratioDur(srv.quantile(.99), pg.quantile(.99)))
		}
		if len(x.runs[sideToken]) > 0 {
			tok := x.token()
			w("| server, %s with an OAuth access token | %s | %s | %s |\n", x.v.label, fmtRPS(tok.rps()), fmtDur(tok.quantile(.5)), fmtDur(tok.quantile(.99)))
			w("| **token / key** | **%.0f%%** | %.2f× | %.2f× |\n", 100*tok.rps()/srv.rps(),
				ratioDur(tok.quantile(.5), srv.quantile(.5)), ratioDur(tok.quantile(.99), srv.quantile(.99)))
		}
	}
	w("\n")
	verdict := "met"
	if !allMet {
		verdict = "**not met**"
	}
	non200, errs := 0, 0
	for _, x := range r.outs {
		for _, rs := range x.runs {
			for _, y := range rs {
				non200 += y.non200
				errs += y.errors
			}
		}
	}
	want := "200"
	if r.suite == suiteIntake {
		want = "201"
	}
	w("Target (server at least %.0f%% of bare): %s. Answers other than %s: %d; transport or database errors: %d (all runs, warm-up included).\n\n", 100*target(r.suite), verdict, want, non200, errs)

	w("CPU time per request in the measured window of the runs in the table, from /proc (the machine has %d cores; PostgreSQL runs on it too):\n\n", r.machine.cpus)
	selfName := "bench process (load generator)"
	if r.inproc {
		selfName = "bench process (load generator + server)"
	}
	w("| | server process | %s | PostgreSQL (this run's backends) | Redis | anything else | machine busy |\n|---|---:|---:|---:|---:|---:|---:|\n", selfName)
	for _, x := range r.outs {
		ys := []result{x.server(), x.bare()}
		if len(x.runs[sideToken]) > 0 {
			ys = append(ys, x.token())
		}
		if len(x.runs[sidePGX]) > 0 {
			ys = append(ys, x.pgx())
		}
		for _, y := range ys {
			label := "server, " + x.v.label
			if y.side == sideToken {
				label = "server, " + x.v.label + " with an OAuth access token"
			}
			switch {
			case y.side == sideBare && x.v.bare == nil:
				label = "bare net/http + pgx (server process = bare server)"
			case y.side == sideBare:
				label = "bare pgx (bench process = bare program)"
				if len(r.outs) > 1 {
					label = "bare pgx, " + x.v.label
				}
			case y.side == sidePGX:
				label = "bare pgx in the bench process, no HTTP (bench process = bare program)"
			}
			srv := y.cpu.perRequest(y.cpu.server)
			if r.inproc {
				srv = "–"
			}
			w("| %s | %s | %s | %s | %s | %s | %.0f%% |\n", label, srv, y.cpu.perRequest(y.cpu.self), y.cpu.perRequest(y.cpu.postgres),
				y.cpu.perRequest(y.cpu.redis), y.cpu.perRequest(y.cpu.other()), y.cpu.busyPercent())
		}
	}
	if !r.inproc {
		perReq := func(u cpuUsage, d time.Duration) float64 { return float64(d.Microseconds()) / float64(u.requests) }
		for _, x := range r.outs {
			s, bb := x.server(), x.bare()
			if s.cpu.requests == 0 || bb.cpu.requests == 0 {
				continue
			}
			srv, bare := perReq(s.cpu, s.cpu.server), perReq(bb.cpu, bb.cpu.self)
			if x.v.bare == nil { // the bare net/http + pgx server is the "server process" of its runs
				bare = perReq(bb.cpu, bb.cpu.server)
			}
			lead := "Per request"
			if len(r.outs) > 1 {
				lead = "For " + x.v.label + ", per request"
			}
			w("\n%s the server process spent %.0f µs of CPU where the bare program spent %.0f µs (%.1f×); PostgreSQL spent %.0f µs and %.0f µs on the same statements. ",
				lead, srv, bare, srv/bare, perReq(s.cpu, s.cpu.postgres), perReq(bb.cpu, bb.cpu.postgres))
			ts, tb := perReq(s.cpu, s.cpu.busy), perReq(bb.cpu, bb.cpu.busy)
			w("With the cores busy (%.0f%% and %.0f%%), requests per second follow the machine's CPU time per request: %.0f µs on the server side (server, load generator, PostgreSQL, anything else) against %.0f µs on the bare side, which predicts a ratio of %.0f%% (measured: %.0f%%).\n",
				s.cpu.busyPercent(), bb.cpu.busyPercent(), ts, tb, 100*tb/ts, 100*s.rps()/bb.rps())
			ownS, ownB := perReq(s.cpu, s.cpu.own()), perReq(bb.cpu, bb.cpu.own())
			w("Counting only the processes the requests go through (server, load generator, this run's PostgreSQL, Redis; what other work on the machine disturbs least): %.0f µs against %.0f µs, a ratio of **%.0f%%**.\n",
				ownS, ownB, 100*ownB/ownS)
			if t := x.token(); len(x.runs[sideToken]) > 0 && t.cpu.requests > 0 {
				ownT := perReq(t.cpu, t.cpu.own())
				w("With OAuth access tokens the same processes spent %.0f µs per request against %.0f µs with keys: the token costs %+.0f%% (server process %.0f µs against %.0f µs).\n",
					ownT, ownS, 100*(ownT/ownS-1), perReq(t.cpu, t.cpu.server), srv)
			}
		}
	}
	w("\nAll runs, in the order they ran:\n\n| # | load | side | requests/s | p50 | p99 | mean | max |\n|---:|---|---|---:|---:|---:|---:|---:|\n")
	n := 0
	for _, x := range r.outs {
		idx := map[string]int{}
		for _, side := range x.order {
			y := x.runs[side][idx[side]]
			idx[side]++
			n++
			w("| %d | %s | %s | %s | %s | %s | %s | %s |\n", n, x.v.label, side, fmtRPS(y.rps()), fmtDur(y.quantile(.5)), fmtDur(y.quantile(.99)),
				fmtDur(y.mean()), fmtDur(y.quantile(1)))
		}
	}
	m := r.machine
	w("\nMachine: %s, nproc %d, %s; %s; %s on the same machine (%s).", m.cpuModel, m.cpus, m.kernel, m.goVer, m.pgVer, m.pgSet)
	if r.load != "" {
		w(" Load average (1 / 5 / 15 min) when the run started: %s; the \"anything else\" column above is what other processes took during the measured windows.", r.load)
	}
	w("\n\nCommand: `%s` (measured %s).\n", r.command, r.when.Format("2006-01-02 15:04 MST"))
	return b.String()
}

// bareName names the bare side of a suite's table: GET /me's is the net/http + pgx server.
func bareName(suite string) string {
	if suite == suiteMe {
		return "bare net/http + pgx"
	}
	return "bare pgx"
}

// target is the least server/bare ratio a suite must reach: GET /me 65% (issue 7 §5), the
// intake 50%.
func target(suite string) float64 {
	if suite == suiteMe {
		return 0.65
	}
	return 0.5
}

func fmtWindow(q quota) string {
	switch {
	case q.window == time.Hour:
		return "clock hour"
	case q.window%time.Hour == 0:
		return fmt.Sprintf("%d h", q.window/time.Hour)
	}
	return fmt.Sprintf("%.0f s", q.window.Seconds())
}

func fmtInt(n int) string { return fmtRPS(float64(n)) }

func clientName(c string) string {
	if c == "nethttp" {
		return "net/http"
	}
	return "a minimal HTTP/1.1"
}

func fmtRPS(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func ratioDur(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// commandLine is the command that reproduces this run.
func commandLine(args []string) string {
	s := "go tool task bench"
	if len(args) > 0 {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = shellQuote(a)
		}
		s += " -- " + strings.Join(q, " ")
	}
	return s
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeSection replaces the section of path titled title with md (which starts with the title),
// or appends it; a missing file is created with the intro.
func writeSection(path, title, md string) error {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(intro+"\n"+md), 0o644)
	}
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(old), "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		if start < 0 && t == title {
			start = i
		} else if start >= 0 && strings.HasPrefix(t, "## ") {
			end = i
			break
		}
	}
	var out string
	if start < 0 {
		out = strings.TrimRight(string(old), "\n") + "\n\n" + md
	} else {
		tail := strings.Join(lines[end:], "")
		if tail != "" {
			tail = "\n" + tail
		}
		out = strings.Join(lines[:start], "") + md + tail
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
