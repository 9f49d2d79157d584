// Package apitest is the integration harness: one database per test package, cloned from the
// migrated template (test/pgtest); a server on it as the app role, so row-level security
// applies; companies with users and keys made through the operator service; and a Case runner
// that validates every response against the OpenAPI document.
package apitest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

// TestSecret is the APP_SECRET of test servers.
const TestSecret = "apitest-secret-apitest-secret-0123456789"

var (
	pkgOnce sync.Once
	pkgDB   struct {
		ownerURL string
		drop     func()
		err      error
	}
)

// Main runs a test package: it creates the package's database before the tests and drops it
// after. Use it from TestMain: os.Exit(apitest.Main(m)). With no PostgreSQL it fails (exit 2)
// and says what to set; it never skips.
func Main(m *testing.M) int {
	ctx := context.Background()
	admin, err := pgtest.Server(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apitest:", err)
		return 2
	}
	tpl, err := pgtest.Template(ctx, admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apitest: template:", err)
		return 2
	}
	pkgOnce.Do(func() {
		pkgDB.ownerURL, pkgDB.drop, pkgDB.err = pgtest.Clone(ctx, admin, tpl, "bd_t_")
	})
	if pkgDB.err != nil {
		fmt.Fprintln(os.Stderr, "apitest: database:", pkgDB.err)
		return 2
	}
	code := m.Run()
	for _, f := range beforeDrop {
		f()
	}
	pkgDB.drop()
	_ = os.RemoveAll(blobDir)
	return code
}

var beforeDrop []func()

// BeforeDrop registers f to run after the package's tests and before its database is dropped:
// background work that outlives one test (a server's job workers) stops there.
func BeforeDrop(f func()) { beforeDrop = append(beforeDrop, f) }

// Env is a test package's world.
type Env struct {
	OwnerURL string // owner of the package database (not subject to RLS only through operator role)
	AppURL   string // the app role: RLS always applies
	Config   app.Config
	Server   *app.Server
	Ops      *operator.Service
	AppDB    *sql.DB
	// OwnerDB connects as the owner; Operator takes the operator role on it for fixtures the
	// app role may not write (users, api_keys).
	OwnerDB *sql.DB
}

var (
	envOnce sync.Once
	shared  *Env
	envErr  error
)

// New returns the package's Env, building it on first use. Options apply to a private server:
// with options, New builds a separate server on the same database.
func New(t testing.TB, opts ...app.Option) *Env {
	t.Helper()
	if pkgDB.ownerURL == "" {
		t.Fatalf("apitest: no database: call apitest.Main from TestMain")
	}
	if len(opts) > 0 {
		e, err := build(pkgDB.ownerURL, nil, nil, opts...)
		if err != nil {
			t.Fatalf("apitest: %v", err)
		}
		t.Cleanup(e.Server.Close)
		return e
	}
	envOnce.Do(func() { shared, envErr = build(pkgDB.ownerURL, nil, nil) })
	if envErr != nil {
		t.Fatalf("apitest: %v", envErr)
	}
	return shared
}

// Setup says where Open builds an Env.
type Setup struct {
	OwnerURL string            // the database (its owner or a superuser)
	Env      map[string]string // more configuration variables (REDIS_URL, DB_RETRY_BUDGET …)
	Log      io.Writer         // the server's log (JSON lines, level warn); nil: stderr
}

// Open builds an Env on the database of s.OwnerURL, outside the package database of Main: tests
// that run their own PostgreSQL (test/faults restarts it) or read the server's log. The caller
// closes Server.
func Open(s Setup, opts ...app.Option) (*Env, error) {
	return build(s.OwnerURL, s.Env, s.Log, opts...)
}

// blobDir holds the blobs of the test binary's servers.
var blobDir = filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-blobs-%d", os.Getpid()))

func build(ownerURL string, extra map[string]string, logTo io.Writer, opts ...app.Option) (*Env, error) {
	ctx := context.Background()
	e := &Env{OwnerURL: ownerURL, AppURL: pgtest.AppURL(ownerURL)}
	cfg, err := app.LoadConfig(func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		switch k {
		case "DATABASE_URL":
			return e.OwnerURL
		case "APP_DATABASE_URL":
			return e.AppURL
		case "APP_SECRET":
			return TestSecret
		case "LOG_LEVEL":
			return "warn"
		case "WEBHOOK_ALLOW_INSECURE": // test receivers listen on loopback
			return "true"
		case "BLOB_URL": // a directory of the test binary, removed when it ends
			return blobstore.FileURL(blobDir)
		// Every test client is 127.0.0.1: per-sender limits at their defaults would couple the
		// tests of a package (one suite's 401s blocking another's). The tests of these limits
		// set them with app.WithConfig.
		case "INTAKE_SENDER_LIMIT", "AUTH_FAILURE_LIMIT":
			return "1000000"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	e.Config = cfg
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.WarnLevel)
	if logTo != nil {
		log = zerolog.New(logTo).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	}
	if e.Server, err = app.NewServer(ctx, cfg, log, opts...); err != nil {
		return nil, err
	}
	owner, err := sql.Open("pgx", e.OwnerURL)
	if err != nil {
		return nil, err
	}
	e.OwnerDB = owner
	e.Ops = operator.New(ent.NewClient(ent.Driver(tenancy.NewDriver(owner))))
	if e.AppDB, err = sql.Open("pgx", e.AppURL); err != nil {
		return nil, err
	}
	return e, nil
}

// Response is what a request got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v or fails the test.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Problem decodes an error body.
func (r *Response) Problem(t testing.TB) Problem {
	t.Helper()
	var p Problem
	r.Decode(t, &p)
	return p
}

// Problem is the problem body as tests read it.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	Code     string `json:"code"`
	Errors   []struct {
		Field  string `json:"field"`
		Code   string `json:"code"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

// Request is one API call. Path is relative to /api/public/v1 unless it starts with "//"
// (then it is taken from the server root, e.g. "//healthz").
type Request struct {
	Method string
	Path   string
	Key    string // sent as Authorization: Bearer
	Body   any    // string or []byte sent as is; anything else as JSON
	Header map[string]string
}

// Do sends r to the package's server and validates request and response against the OpenAPI
// document.
func (e *Env) Do(t testing.TB, r Request) *Response {
	t.Helper()
	path := app.V1Prefix + r.Path
	if strings.HasPrefix(r.Path, "//") {
		path = r.Path[1:]
	}
	var body []byte
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			t.Fatalf("marshal body: %v", err)
		}
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", fiber.MIMEApplicationJSON)
	}
	if r.Key != "" {
		req.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := e.Server.App.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: got}
	validateOpenAPI(t, method, path, req.Header, body, out)
	return out
}

// Case is one row of an endpoint's table test.
type Case struct {
	Name    string
	Key     string
	Method  string
	Path    string
	Body    any
	Header  map[string]string
	Status  int
	Problem string // the problem's code, for error statuses
	Check   func(t *testing.T, r *Response)
}

// Run runs cases as subtests.
func (e *Env) Run(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := e.Do(t, Request{Method: c.Method, Path: c.Path, Key: c.Key, Body: c.Body, Header: c.Header})
			if r.Status != c.Status {
				t.Fatalf("%s %s: status %d, want %d; body %s", c.Method, c.Path, r.Status, c.Status, r.Body)
			}
			if r.Status >= 400 {
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
					t.Errorf("content type %q, want application/problem+json", ct)
				}
				p := r.Problem(t)
				if p.Status != r.Status {
					t.Errorf("problem status %d, want %d", p.Status, r.Status)
				}
				if c.Problem != "" && p.Code != c.Problem {
					t.Errorf("problem code %q, want %q (%s)", p.Code, c.Problem, p.Detail)
				}
			}
			if c.Check != nil {
				c.Check(t, r)
			}
		})
	}
}
