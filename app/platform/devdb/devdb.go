// Package devdb starts the PostgreSQL server a developer's machine runs BrokerDesk on: a
// private cluster made with the system's initdb/pg_ctl in a data directory of ours, or a
// testcontainers PostgreSQL where only a Docker engine exists. `brokerdesk dev` runs on it, and
// the test harness (test/testsvc) starts its own cluster with the same code when the
// environment names no server.
package devdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// ErrNoPostgres is what Start says when it finds neither PostgreSQL binaries nor a Docker engine.
var ErrNoPostgres = errors.New("no PostgreSQL: install postgresql (apt-get install postgresql) or start Docker, or set DATABASE_URL")

// DB is the PostgreSQL server dev runs on: a private cluster or a container.
type DB struct {
	// AdminURL logs in as the superuser "postgres" to database "postgres".
	AdminURL string
	// Describe says in one line what the server is and where its data lives.
	Describe string
	// Kept reports whether the data outlives this run (false for a container).
	Kept bool
	// Stop stops the server; it is a no-op for a cluster some other process started.
	Stop func() error
}

// Start starts the private cluster under dataDir, or a container when the PostgreSQL
// binaries are missing and a Docker engine answers.
func Start(ctx context.Context, dataDir string, log zerolog.Logger) (*DB, error) {
	c, err := Open(dataDir, log)
	if err == nil {
		return c.Start()
	}
	if !errors.Is(err, ErrNoBinaries) {
		return nil, err
	}
	if DockerRunning(ctx) {
		log.Info().Msg("no initdb/pg_ctl found: starting PostgreSQL in Docker (testcontainers); its data is not kept")
		return StartContainer(ctx)
	}
	return nil, ErrNoPostgres
}

// ErrNoBinaries is what Open says when it finds no initdb and pg_ctl.
var ErrNoBinaries = errors.New("initdb and pg_ctl not found")

// Open returns the private cluster of dataDir (data in dataDir/pg), running or not, with the
// binaries that can open it: those of its PG_VERSION when it exists, else the newest found. It
// starts nothing. The error is ErrNoBinaries when the machine has no PostgreSQL binaries.
func Open(dataDir string, log zerolog.Logger) (*Cluster, error) {
	pgVersion, _ := os.ReadFile(filepath.Join(dataDir, "pg", "PG_VERSION"))
	bin, err := FindPGBin(strings.TrimSpace(string(pgVersion)))
	if err != nil {
		return nil, err
	}
	return NewCluster(bin, dataDir, log)
}

// FindPGBin returns the directory holding initdb and pg_ctl: PATH first, else the highest
// /usr/lib/postgresql/*/bin (Debian keeps them off PATH). want, when set, is the major
// version of an existing cluster, whose binaries win over newer ones that cannot open it.
func FindPGBin(want string) (string, error) {
	if want != "" {
		if d := filepath.Join("/usr/lib/postgresql", want, "bin"); hasPGBin(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if d := filepath.Dir(p); hasPGBin(d) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if hasPGBin(d) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

// pgMajor reads the version out of /usr/lib/postgresql/VERSION/bin.
func pgMajor(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func hasPGBin(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// Cluster is a private PostgreSQL cluster: data in pgDir, socket in sockDir, listening on
// 127.0.0.1:port only. As root it runs as the system user postgres (initdb refuses root).
type Cluster struct {
	// Label names the cluster in log messages ("dev cluster" unless the caller sets it).
	Label string

	bin, dataDir        string
	pgDir, sockDir, log string
	port                int
	cred                *syscall.Credential // nil: run as ourselves
	logger              zerolog.Logger
}

// maxSocketPath keeps sockDir/.s.PGSQL.NNNNN.lock within a Unix socket path (108 bytes).
const maxSocketPath = 107 - len("/.s.PGSQL.65535.lock")

// NewCluster describes the cluster of dataDir run with the binaries in bin; it starts nothing.
// As root it finds the user postgres and, when postgres cannot reach dataDir, a directory
// under the system temp dir that holds the cluster instead.
func NewCluster(bin, dataDir string, log zerolog.Logger) (*Cluster, error) {
	c := &Cluster{Label: "dev cluster", bin: bin, dataDir: dataDir, logger: log,
		pgDir: filepath.Join(dataDir, "pg"), sockDir: filepath.Join(dataDir, "pgsock"), log: filepath.Join(dataDir, "pg.log")}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errors.New("running as root, and initdb refuses root: there is no system user postgres to run " +
				"PostgreSQL as (create it with useradd --system postgres, or run as a normal user)")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		var gids []int
		if ids, err := u.GroupIds(); err == nil {
			for _, s := range ids {
				if n, err := strconv.Atoi(s); err == nil {
					gids = append(gids, n)
				}
			}
		}
		// dataDir is ours: let others through (what it holds is 0600 or owned by postgres).
		if fi, err := os.Stat(dataDir); err == nil {
			if err := os.Chmod(dataDir, fi.Mode().Perm()|0o011); err != nil {
				return nil, err
			}
		}
		if dir, ok := traversable(dataDir, uid, gid, gids); !ok {
			alt, err := fallbackDir(dataDir)
			if err != nil {
				return nil, err
			}
			c.pgDir, c.sockDir, c.log = filepath.Join(alt, "pg"), filepath.Join(alt, "pgsock"), filepath.Join(alt, "pg.log")
			log.Warn().Str("blocked_at", dir).Str("cluster_dir", alt).
				Msgf("user postgres cannot reach %s (%s is not traversable): the cluster lives in %s instead", dataDir, dir, alt)
		}
	}
	if len(c.sockDir) > maxSocketPath {
		alt, err := fallbackDir(dataDir)
		if err != nil {
			return nil, err
		}
		c.sockDir = filepath.Join(alt, "pgsock")
		log.Info().Str("socket_dir", c.sockDir).Msg("the data directory path is too long for a Unix socket: the socket lives in " + c.sockDir)
	}
	return c, nil
}

// traversable reports whether user uid (groups gid, gids) can reach dir: every directory from
// / down to dir must grant it search (x) permission. It returns the first that does not.
func traversable(dir string, uid, gid int, gids []int) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return d, false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return d, true
		}
		m := fi.Mode().Perm()
		var can bool
		switch {
		case int(st.Uid) == uid:
			can = m&0o100 != 0
		case int(st.Gid) == gid || containsInt(gids, int(st.Gid)):
			can = m&0o010 != 0
		default:
			can = m&0o001 != 0
		}
		if !can {
			return d, false
		}
		if d == filepath.Dir(d) {
			return "", true
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// fallbackDir is a directory under the system temp dir, named after dataDir so a second run
// finds the same cluster, for when dataDir cannot hold it.
func fallbackDir(dataDir string) (string, error) {
	sum := sha256.Sum256([]byte(dataDir))
	dir := filepath.Join(os.TempDir(), "brokerdesk-dev-"+hex.EncodeToString(sum[:])[:10])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s is not a directory of ours: remove it", dir)
	}
	return dir, os.Chmod(dir, 0o755)
}

// command builds a command of the PostgreSQL binaries, run as postgres when we are root.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = "/" // the working directory may not be reachable by postgres
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") { // PGDATA, PGPORT, PGHOST would override our flags
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

// runPG runs a PostgreSQL binary and returns its output in the error when it fails.
func (c *Cluster) runPG(name string, args ...string) error {
	cmd := c.command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// ownDir creates dir (mode perm) and, as root, gives it and what it holds to postgres.
func (c *Cluster) ownDir(dir string, perm fs.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	if err := os.Chmod(dir, perm); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if c.cred == nil {
		if st != nil && int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("%s belongs to uid %d (made by a run as root?): run as that user again, or remove %s to start over",
				dir, st.Uid, c.dataDir)
		}
		return nil
	}
	if st != nil && st.Uid == c.cred.Uid && st.Gid == c.cred.Gid {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(c.cred.Uid), int(c.cred.Gid))
	})
}

// Start initialises the cluster if needed, starts it and creates nothing else.
func (c *Cluster) Start() (*DB, error) {
	if err := c.ownDir(c.pgDir, 0o700); err != nil {
		return nil, err
	}
	if err := c.ownDir(c.sockDir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(c.pgDir, "PG_VERSION")); err != nil {
		if err := c.initdb(); err != nil {
			return nil, err
		}
	}
	if port, ok := c.Running(); ok {
		c.port = port
		c.logger.Warn().Int("port", port).Msg("the " + c.Label + " is running already (another brokerdesk dev?): using it and leaving it running")
		return c.db(func() error { return nil }), nil
	}
	var err error
	if c.port, err = c.pickPort(); err != nil {
		return nil, err
	}
	if err := c.prepareLog(); err != nil {
		return nil, err
	}
	c.logger.Info().Str("data", c.pgDir).Int("port", c.port).Str("bin", c.bin).Msg("starting PostgreSQL")
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s", c.port, shellQuote(c.sockDir))
	if err := c.runPG("pg_ctl", "start", "-D", c.pgDir, "-w", "-t", "60", "-l", c.log, "-o", opts); err != nil {
		return nil, fmt.Errorf("start PostgreSQL (log: %s): %w%s", c.log, err, tail(c.log, 15))
	}
	return c.db(c.Stop), nil
}

// Attach returns the cluster when a postmaster serves it already, as a DB whose Stop does
// nothing: whoever started it stops it.
func (c *Cluster) Attach() (*DB, bool) {
	port, ok := c.Running()
	if !ok {
		return nil, false
	}
	c.port = port
	return c.db(func() error { return nil }), true
}

// PGDir is where the cluster's data lives.
func (c *Cluster) PGDir() string { return c.pgDir }

// Log is the server's log file.
func (c *Cluster) Log() string { return c.log }

func (c *Cluster) db(stop func() error) *DB {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	return &DB{AdminURL: u.String(), Kept: true, Stop: stop,
		Describe: fmt.Sprintf("private cluster in %s on 127.0.0.1:%d (log %s)", c.pgDir, c.port, c.log)}
}

func (c *Cluster) initdb() error {
	entries, err := os.ReadDir(c.pgDir)
	if err != nil {
		return err
	}
	// No PG_VERSION: an initdb that did not finish. Nothing in it can be a cluster.
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(c.pgDir, e.Name())); err != nil {
			return err
		}
	}
	loc := utf8Locale()
	if loc == "" {
		loc = "C"
		c.logger.Warn().Msg("no UTF-8 locale (C.UTF-8, en_US.UTF-8) on this machine: the " + c.Label +
			" uses locale C, where upper/lower and ILIKE leave umlauts alone")
	}
	c.logger.Info().Str("data", c.pgDir).Str("locale", loc).Msg("initdb: creating the " + c.Label)
	return c.runPG("initdb", "-D", c.pgDir, "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--locale="+loc, "--no-sync")
}

// utf8Locale names a UTF-8 locale of this machine for the cluster, C.UTF-8 first, or "" when
// there is none. Under locale C PostgreSQL's upper/lower and ILIKE fold ASCII only, so a
// search for "MÜLLER" would miss "Müller" here but not on the servers BrokerDesk runs on
// (Debian's and the postgres images' clusters are UTF-8).
func utf8Locale() string {
	out, err := exec.Command("locale", "-a").Output()
	if err != nil {
		return ""
	}
	have := map[string]string{}
	for _, l := range strings.Fields(string(out)) {
		have[strings.ToLower(strings.ReplaceAll(l, "-", ""))] = l
	}
	for _, want := range []string{"c.utf8", "en_us.utf8"} {
		if l, ok := have[want]; ok {
			return l
		}
	}
	return ""
}

// Running reports whether a postmaster serves pgDir already and on which port.
func (c *Cluster) Running() (int, bool) {
	if c.command("pg_ctl", "status", "-D", c.pgDir).Run() != nil {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(c.pgDir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, false
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	return port, err == nil
}

// pickPort reuses the port of the last run when it is free, else takes a free one, and
// remembers it in DATA/pg.port.
func (c *Cluster) pickPort() (int, error) {
	file := filepath.Join(c.dataDir, "pg.port")
	if b, err := os.ReadFile(file); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 && portFree(p) {
			return p, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	p := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return p, os.WriteFile(file, []byte(strconv.Itoa(p)+"\n"), 0o644)
}

func portFree(p int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// prepareLog creates the server log so that postgres (not root) can append to it.
func (c *Cluster) prepareLog() error {
	f, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_ = f.Close()
	if c.cred != nil {
		return os.Chown(c.log, int(c.cred.Uid), int(c.cred.Gid))
	}
	return nil
}

// Stop stops the postmaster (fast shutdown) and waits for it.
func (c *Cluster) Stop() error {
	c.logger.Info().Str("data", c.pgDir).Msg("stopping PostgreSQL")
	if err := c.runPG("pg_ctl", "stop", "-D", c.pgDir, "-m", "fast", "-w", "-t", "60"); err != nil {
		return fmt.Errorf("stop PostgreSQL: %w", err)
	}
	return nil
}

// tail returns the last n lines of file, indented, for an error message.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\n  " + strings.Join(lines, "\n  ")
}

// shellQuote quotes s for the shell pg_ctl runs postgres through.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// DockerRunning reports whether a Docker engine answers, quietly: testcontainers may panic or
// log while it looks for one.
func DockerRunning(ctx context.Context) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(tclog.NewNoopLogger()))
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return p.Health(ctx) == nil
}

// StartContainer runs PostgreSQL 15 in a container that lives as long as this process.
func StartContainer(ctx context.Context) (db *DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker: %v", r)
		}
	}()
	ctr, err := tcpostgres.Run(ctx, "postgres:15-alpine",
		tcpostgres.WithDatabase("postgres"), tcpostgres.WithUsername("postgres"), tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies())
	if err != nil {
		return nil, fmt.Errorf("start PostgreSQL container: %w", err)
	}
	u, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = ctr.Terminate(context.Background())
		return nil, err
	}
	return &DB{AdminURL: u, Describe: "Docker container " + ctr.GetContainerID()[:12] + " (data is dropped on exit)",
		Stop: func() error { return ctr.Terminate(context.Background()) }}, nil
}
