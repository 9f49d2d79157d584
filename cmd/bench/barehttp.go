package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// bareCommand is the hidden first argument that makes this binary the bare reference of GET
// /me: a net/http server with one handler that makes the bare program's round trips (issue 7
// §5: "a bare net/http + pgx program making the same round trips").
const bareCommand = "__bare"

// bareMe is the JSON the bare /me handler writes: the shape of the server's answer for a
// company-level key (account.MeView), from the lookup's row.
type bareMe struct {
	Company struct {
		ID       pgtype.UUID     `json:"id"`
		Name     string          `json:"name"`
		Sandbox  bool            `json:"sandbox"`
		Features json.RawMessage `json:"features"`
	} `json:"company"`
	User       *struct{} `json:"user"`
	Client     *struct{} `json:"client"`
	Credential struct {
		ID     pgtype.UUID `json:"id"`
		Prefix string      `json:"prefix"`
		Kind   string      `json:"kind"`
		Env    string      `json:"env"`
	} `json:"credential"`
	Scopes json.RawMessage `json:"scopes"`
}

// serveBare is the bare subprocess: the server's configuration from the environment (its app
// role URL and DB_MAX_CONNS), a pgxpool of that size, and http.Server on 127.0.0.1:0 with GET
// /api/public/v1/me. It prints the address on stdout and serves until SIGTERM/SIGINT or until
// its stdin closes. No router, middleware, rate limiter, logging or ent: the floor that net/http
// and pgx set for the same round trips.
func serveBare(args []string) int {
	fs := flag.NewFlagSet(bareCommand, flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "bench bare server:", err)
		return 1
	}
	cfg, err := app.LoadConfig(os.Getenv)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	go func() { <-sigs; cancel() }()

	b, err := newBare(ctx, fixture{appURL: cfg.AppDatabaseURL, cfg: cfg})
	if err != nil {
		return fail(err)
	}
	defer b.close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+mePath, b.serveMe)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	srv := &http.Server{Handler: mux}
	fmt.Println(ln.Addr().String())
	go func() { <-ctx.Done(); _ = srv.Shutdown(context.Background()) }()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return fail(err)
	}
	return 0
}

// serveMe reads the key from Authorization, runs b.me (BEGIN + lookup in one batch, COMMIT)
// and writes the answer with encoding/json.
func (b *bare) serveMe(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || key == "" {
		http.Error(w, "missing credential", http.StatusUnauthorized)
		return
	}
	p, err := b.me(r.Context(), tenancy.HashKey(key), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	body, err := meJSON(p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// allScopes is the JSON of every scope: the server lists them all for a "*" key (account).
var allScopes, _ = json.Marshal(policy.Scopes)

// meJSON is the bare /me answer: the server's body for a company-level key (check compares
// them), from the lookup's row. A "*" key lists every scope, as the server's answer does; no
// valid scope but "*" contains a "*" (policy.ValidScope).
func meJSON(p principal) ([]byte, error) {
	var m bareMe
	m.Company.ID, m.Company.Name, m.Company.Sandbox, m.Company.Features = p.companyID, p.companyName, p.sandbox, p.features
	m.Credential.ID, m.Credential.Prefix, m.Credential.Kind, m.Credential.Env = p.keyID, p.prefix, p.kind, p.env
	m.Scopes = p.scopes
	if bytes.Contains(p.scopes, []byte(`"*"`)) {
		m.Scopes = allScopes
	}
	return json.Marshal(m)
}

// startBareServer starts the bare /me reference in its own subprocess, as the server runs in
// its own.
func startBareServer(ctx context.Context, fx fixture) (*server, error) {
	return startChild(ctx, fx, []string{bareCommand})
}
