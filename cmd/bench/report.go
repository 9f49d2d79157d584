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

const sectionTitle = "## GET /me vs bare pgx"

// intro heads docs/benchmarks.md when -write creates it.
const intro = `# Benchmarks

Run them with ` + "`go tool task bench`" + `; flags go after ` + "`--`" + `, e.g.
` + "`go tool task bench -- -duration 30s -concurrency 32`" + `. ` + "`-write docs/benchmarks.md`" + ` replaces
the section of this file that the run measured with its numbers (the sections below are such
output). ` + "`-cpuprofile server.pprof`" + ` also writes a CPU profile of the server process.

A run needs a PostgreSQL server: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (an owner or superuser URL). It clones
a fresh database from the migrated test template (test/pgtest), seeds one company and its
company-level secret keys through the operator service (as many as keep every key under the
server's per-credential rate limit), and drops the database at the end.

What each benchmark measures:

- **GET /me vs bare pgx**: requests per second and p50/p99 latency of ` + "`GET /api/public/v1/me`" + `
  on the real server (app.NewServer in a subprocess, LOG_LEVEL=warn), driven over N keep-alive
  connections, beside a bare pgx program that makes the same SQL round trips with the same
  concurrency and pool size: BEGIN, the credential lookup that pins the transaction
  (auth_credential + set_config), the company row as ent selects it, COMMIT. The ratio
  server/bare is what the server costs above its SQL. Target: at least 50%.

Absolute numbers depend on the machine, and on a small one the load generator, the server and
PostgreSQL share the cores; compare the ratios measured within one run.
`

// cpuUsage is CPU time spent during a measured window, by process group.
type cpuUsage struct {
	self, server, postgres time.Duration // this process; the server subprocess; every postgres process
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
	return max(u.busy-u.self-u.server-u.postgres, 0)
}

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
	s.postgres = map[int]time.Duration{}
	if ents, err := os.ReadDir("/proc"); err == nil {
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if d, comm, err := procCPU(pid); err == nil && comm == "postgres" {
				s.postgres[pid] = d
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
	return u
}

type machine struct {
	cpus     int
	cpuModel string
	kernel   string
	goVer    string
	pgVer    string
}

func machineInfo(pgVersion string) machine {
	m := machine{cpus: runtime.NumCPU(), goVer: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, pgVer: pgVersion}
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
	opts           options
	command        string
	machine        machine
	server, bare   result
	all            map[string][]result
	order          []string
	inproc         bool
	dbMaxConns     int
	quota          quota
	keys, lateKeys int
	limiter        string
	when           time.Time
}

func (r report) markdown() string {
	var b strings.Builder
	o := r.opts
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	ratio := r.server.rps() / r.bare.rps()
	where := "a subprocess (this binary re-executed in server mode), so the load generator and the server do not share a Go scheduler"
	if r.inproc {
		where = "the bench process itself (-inproc)"
	}
	w("%s\n\n", sectionTitle)
	w("`GET /api/public/v1/me` with a company-level secret key on the real server (app.NewServer + ServeListener on 127.0.0.1, LOG_LEVEL=warn) in %s, ", where)
	w("driven over %d concurrent keep-alive connections (%s load generator), beside a bare pgx program with %d workers on a pgxpool as the app role of the server's size (DB_MAX_CONNS=%d) that makes the same SQL round trips per request: ", o.concurrency, clientName(o.client), o.concurrency, r.dbMaxConns)
	w("BEGIN; the credential lookup that pins the transaction (`auth_credential` + `set_config`); the company row with the columns and predicates ent sends; COMMIT. ")
	if r.quota.limit > 0 {
		w("The server limits each credential to %d requests per %.0f s (RateLimit-Policy: %s; rate limiter in %s), so both sides rotate over one pool of company-level keys of the same company, at most %d requests per key and quota window: %d keys in all",
			r.quota.limit, r.quota.window.Seconds(), r.quota.policy, r.limiter, r.quota.perKey(), r.keys)
		if r.lateKeys > 0 {
			w(", %d of them created during a run when the pool ran dry", r.lateKeys)
		}
		w(". ")
	} else {
		w("The server announced no rate limit; each worker uses its own key (%d keys). ", r.keys)
	}
	w("Each run: %s warm-up, then %s measured. Each side ran %d times, in the order %s; the table shows the better run of each (by requests/s), all runs are listed below.\n\n",
		o.warmup, o.duration, o.rounds, strings.Join(r.order, ", "))

	w("| | requests/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	w("| server, GET /me | %s | %s | %s |\n", fmtRPS(r.server.rps()), fmtDur(r.server.quantile(.5)), fmtDur(r.server.quantile(.99)))
	w("| bare pgx, same round trips | %s | %s | %s |\n", fmtRPS(r.bare.rps()), fmtDur(r.bare.quantile(.5)), fmtDur(r.bare.quantile(.99)))
	w("| **server / bare** | **%.0f%%** | %.2f× | %.2f× |\n\n", 100*ratio,
		ratioDur(r.server.quantile(.5), r.bare.quantile(.5)), ratioDur(r.server.quantile(.99), r.bare.quantile(.99)))
	verdict := "met"
	if ratio < 0.5 {
		verdict = "**not met**"
	}
	non200, errs := 0, 0
	for _, rs := range r.all {
		for _, x := range rs {
			non200 += x.non200
			errs += x.errors
		}
	}
	w("Target (server at least 50%% of bare): %s. Non-200 answers: %d; transport or database errors: %d (all runs, warm-up included).\n\n", verdict, non200, errs)

	w("CPU time per request in the measured window of those two runs, from /proc (the machine has %d cores; PostgreSQL runs on it too):\n\n", r.machine.cpus)
	selfName := "bench process (load generator)"
	if r.inproc {
		selfName = "bench process (load generator + server)"
	}
	w("| | server process | %s | PostgreSQL (all its processes) | anything else | machine busy |\n|---|---:|---:|---:|---:|---:|\n", selfName)
	for _, x := range []result{r.server, r.bare} {
		label := "server, GET /me"
		if x.side == sideBare {
			label = "bare pgx (bench process = bare program)"
		}
		srv := x.cpu.perRequest(x.cpu.server)
		if r.inproc {
			srv = "–"
		}
		w("| %s | %s | %s | %s | %s | %.0f%% |\n", label, srv, x.cpu.perRequest(x.cpu.self), x.cpu.perRequest(x.cpu.postgres),
			x.cpu.perRequest(x.cpu.other()), x.cpu.busyPercent())
	}
	if !r.inproc && r.server.cpu.requests > 0 && r.bare.cpu.requests > 0 {
		perReq := func(u cpuUsage, d time.Duration) float64 { return float64(d.Microseconds()) / float64(u.requests) }
		srv, bare := perReq(r.server.cpu, r.server.cpu.server), perReq(r.bare.cpu, r.bare.cpu.self)
		w("\nPer request the server process spent %.0f µs of CPU where the bare program spent %.0f µs (%.1f×); PostgreSQL spent %.0f µs and %.0f µs, the same work on both sides, and with the cores saturated it bounds both.\n",
			srv, bare, srv/bare, perReq(r.server.cpu, r.server.cpu.postgres), perReq(r.bare.cpu, r.bare.cpu.postgres))
	}
	w("\nAll runs:\n\n| # | side | requests/s | p50 | p99 | mean | max |\n|---:|---|---:|---:|---:|---:|---:|\n")
	idx := map[string]int{}
	for i, side := range r.order {
		x := r.all[side][idx[side]]
		idx[side]++
		w("| %d | %s | %s | %s | %s | %s | %s |\n", i+1, side, fmtRPS(x.rps()), fmtDur(x.quantile(.5)), fmtDur(x.quantile(.99)),
			fmtDur(x.mean()), fmtDur(x.quantile(1)))
	}
	m := r.machine
	w("\nMachine: %s, nproc %d, %s; %s; %s (same machine, default settings).\n\n", m.cpuModel, m.cpus, m.kernel, m.goVer, m.pgVer)
	w("Command: `%s` (measured %s).\n", r.command, r.when.Format("2006-01-02 15:04 MST"))
	return b.String()
}

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

// writeSection replaces the section of path titled sectionTitle with md (which starts with the
// title), or appends it; a missing file is created with the intro.
func writeSection(path, md string) error {
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
		if start < 0 && t == sectionTitle {
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
