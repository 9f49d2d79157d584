// Package pgtest finds a PostgreSQL server for tests and gives each test package a fresh
// database cloned from a migrated template. The server is the one TEST_DATABASE_URL names (an
// owner or superuser URL), else a testcontainers PostgreSQL where a Docker engine runs, else a
// private cluster under <module>/.data/test/ that the test binaries of a run share
// (test/testsvc, started with the code of `brokerdesk dev`); with none of them, Server fails
// and says what to install or set. Tests never skip for lack of a database.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/devdb"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
)

// errNoServer is what a machine with no way to a PostgreSQL gets.
var errNoServer = errors.New("no PostgreSQL for tests: install PostgreSQL's server binaries (initdb, pg_ctl: " +
	"apt-get install postgresql) for a private cluster, run a Docker engine for testcontainers, or set " +
	"TEST_DATABASE_URL to an owner or superuser URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)")

// Server returns an admin URL (database "postgres") of the test server. The first call in a
// process may start a container, which lives as long as the process, or start (or join) the
// private cluster, which outlives it.
func Server(ctx context.Context) (string, error) {
	serverOnce.Do(func() {
		if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
			serverURL = u
			return
		}
		if devdb.DockerRunning(ctx) {
			serverURL, serverErr = startContainer(ctx)
			return
		}
		o, err := testsvc.DefaultOptions()
		if err != nil {
			serverErr = err
			return
		}
		serverURL, serverErr = privateCluster(ctx, o)
	})
	return serverURL, serverErr
}

func startContainer(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db, err := devdb.StartContainer(ctx)
	if err != nil {
		return "", fmt.Errorf("no PostgreSQL for tests: a Docker engine answers, but: %w", err)
	}
	return db.AdminURL, nil
}

// privateCluster starts or joins the private cluster of o.Dir. A cluster this process starts
// is one no test can be using, so what killed test binaries left in it goes first.
func privateCluster(ctx context.Context, o testsvc.Options) (string, error) {
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Str("pid", fmt.Sprint(os.Getpid())).Logger()
	s, err := testsvc.Postgres(ctx, o, log, dropLeftovers)
	if errors.Is(err, testsvc.ErrNoBinaries) {
		return "", errNoServer
	}
	if err != nil {
		return "", fmt.Errorf("private test cluster under %s: %w", o.Dir, err)
	}
	return s.URL, nil
}

// dropLeftovers drops the package and dev databases (bd_t_*, bd_dev_*) of earlier runs that
// ended before they could drop their own. Templates stay.
func dropLeftovers(ctx context.Context, adminURL string) error {
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'bd\_t\_%' OR datname LIKE 'bd\_dev\_%'`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+n+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	return nil
}

// WithDatabase returns u pointing at database name.
func WithDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

// WithUser returns u logging in as user (no password: test servers trust loopback, or the
// role's password is set by the caller).
func WithUser(u, user, password string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	if password == "" {
		p.User = url.User(user)
	} else {
		p.User = url.UserPassword(user, password)
	}
	return p.String()
}

func exec(ctx context.Context, dsn string, stmts ...string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// EmptyDatabase creates a new empty database on the server of adminURL and returns its URL and
// a function that drops it.
func EmptyDatabase(ctx context.Context, adminURL string) (string, func(), error) {
	name := randomName("bd_dev_")
	if err := exec(ctx, adminURL, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	drop := func() { _ = exec(context.Background(), adminURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") }
	return WithDatabase(adminURL, name), drop, nil
}

// migrationsHash names the template after the migration files, so a changed migration builds a
// new template instead of reusing a stale one.
func migrationsHash() (string, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			return "", err
		}
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Template returns the name of a database with every migration applied, building it once per
// migration set. Test binaries run in parallel, so building is serialised by an advisory lock
// taken in the "postgres" database, which every binary shares.
func Template(ctx context.Context, adminURL string) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	prefix := "bd_tpl_" + checkoutTag() + "_"
	name := prefix + sum
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext('brokerdesk_test_template'))"); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock(hashtext('brokerdesk_test_template'))")
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	build := name + "_build"
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+build); err != nil {
		return "", err
	}
	mdb, err := sql.Open("pgx", WithDatabase(adminURL, build))
	if err != nil {
		return "", err
	}
	_, err = migrations.Up(ctx, mdb, AppPassword)
	mdb.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	for _, s := range []string{
		"ALTER DATABASE " + build + " RENAME TO " + name,
		"ALTER DATABASE " + name + " WITH is_template = true",
	} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return "", err
		}
	}
	dropStaleTemplates(ctx, conn, prefix, name)
	return name, nil
}

// Clone creates a database from template and returns its owner URL and a drop function.
func Clone(ctx context.Context, adminURL, template, prefix string) (string, func(), error) {
	name := randomName(prefix)
	if err := exec(ctx, adminURL, "CREATE DATABASE "+name+" TEMPLATE "+template); err != nil {
		return "", nil, err
	}
	drop := func() { _ = exec(context.Background(), adminURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") }
	u := WithDatabase(adminURL, name)
	// The clone has the default database ACL, not the template's: revoke TEMPORARY again, as
	// migrations.Up does on a real deployment.
	db, err := sql.Open("pgx", u)
	if err != nil {
		drop()
		return "", nil, err
	}
	defer db.Close()
	if err := migrations.SecureDatabase(ctx, db); err != nil {
		drop()
		return "", nil, err
	}
	return u, drop, nil
}

// AppPassword is the password tests give the app role, so password-authenticating servers
// (testcontainers) admit it as loopback-trusting ones do.
const AppPassword = "brokerdesk_app_test"

// AppURL returns the URL of database dbURL logging in as the app role.
func AppURL(dbURL string) string { return WithUser(dbURL, migrations.RoleApp, AppPassword) }

// checkoutTag names the checkout the tests run from (a hash of its module root), so two
// checkouts sharing one server (git worktrees, a fresh clone beside the work tree) keep their
// own templates and never drop each other's.
func checkoutTag() string {
	dir, err := testsvc.ModuleRoot()
	if err != nil {
		return "x"
	}
	h := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(h[:])[:6]
}

// dropStaleTemplates removes this checkout's templates of earlier migration sets, so a
// developer's server does not collect one per schema change. A template still being cloned is
// left alone (DROP fails).
func dropStaleTemplates(ctx context.Context, conn *sql.Conn, prefix, keep string) {
	like := strings.ReplaceAll(prefix, "_", "\\_") + "%"
	rows, err := conn.QueryContext(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2", like, keep)
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil && !strings.HasSuffix(n, "_build") {
			stale = append(stale, n)
		}
	}
	rows.Close()
	for _, n := range stale {
		if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+n+" WITH is_template = false"); err == nil {
			_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+n)
		}
	}
}
