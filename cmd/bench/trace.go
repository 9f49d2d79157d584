package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// traceServer serves one request of each kind the run measures on a server built in this
// process with app.WithSQLTrace, on the run's database, and returns the statements each sent
// inside its request transaction (BEGIN and COMMIT are not traced; both sides send them), keyed
// by variant name, and the body each answered.
func traceServer(ctx context.Context, o options, fx fixture) (map[string][]stmt, map[string][]byte, error) {
	var (
		mu  sync.Mutex
		got []stmt
	)
	log := zerolog.New(os.Stderr).Level(fx.cfg.LogLevel).With().Timestamp().Logger()
	s, err := app.NewServer(ctx, fx.cfg, log, app.WithSQLTrace(func(q string, args any) {
		n := 0
		if a, ok := args.([]any); ok {
			n = len(a)
		}
		mu.Lock()
		got = append(got, stmt{q, n})
		mu.Unlock()
	}))
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	type kind struct {
		name string
		spec reqSpec
		key  string
	}
	var kinds []kind
	if o.has(suiteMe) {
		kinds = append(kinds, kind{suiteMe, meSpec(), fx.secrets.keys[0].secret})
	}
	if o.has(suiteIntake) {
		for _, b := range o.bodies {
			kinds = append(kinds, kind{b, intakeSpec(b), fx.checkKey})
		}
	}
	out, bodies := map[string][]stmt{}, map[string][]byte{}
	for _, k := range kinds {
		bk := &benchKey{secret: k.key}
		var body io.Reader
		if k.spec.body != nil {
			body = bytes.NewReader(k.spec.body(nil, bk))
		}
		req, err := http.NewRequestWithContext(ctx, k.spec.method, k.spec.path, body)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range k.spec.headers(bk) {
			req.Header.Set(h[0], h[1])
		}
		mu.Lock()
		got = nil
		mu.Unlock()
		resp, err := s.App.Test(req, -1)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != k.spec.want {
			return nil, nil, fmt.Errorf("%s: %d %s, want %d", k.name, resp.StatusCode, b, k.spec.want)
		}
		mu.Lock()
		out[k.name] = append([]stmt(nil), got...)
		mu.Unlock()
		bodies[k.name] = b
	}
	return out, bodies, nil
}

// check runs one bare request of each kind the run measures, recording its statements, and
// compares them with the server's (traces): the same statements, verbatim, in the same order,
// with as many arguments. For GET /me it also compares the answers: the bare handler's JSON
// must be the server's body byte for byte (bodies).
func (b *bare) check(ctx context.Context, o options, fx fixture, traces map[string][]stmt, bodies map[string][]byte) error {
	if o.has(suiteMe) {
		var rec []stmt
		co, err := b.me(ctx, fx.secrets.keys[0].hash, &rec)
		if err != nil {
			return fmt.Errorf("bare GET /me: %w", err)
		}
		if co.companyID.String() != fx.companyID || co.companyName == "" {
			return fmt.Errorf("bare GET /me found company %s %q, want %s", co.companyID, co.companyName, fx.companyID)
		}
		if err := sameStatements("GET /me", traces[suiteMe], rec); err != nil {
			return err
		}
		body, err := meJSON(co)
		if err != nil {
			return err
		}
		if !bytes.Equal(body, bodies[suiteMe]) {
			return fmt.Errorf("GET /me: the bare program's answer differs from the server's; update barehttp.go\nserver: %s\nbare:   %s",
				bodies[suiteMe], body)
		}
	}
	if o.has(suiteIntake) {
		for _, body := range o.bodies {
			want := "created"
			if body == bodyDup {
				want = "updated"
			}
			var rec []stmt
			out, err := b.intake(ctx, tenancy.HashKey(fx.checkKey), nextPerson(body), &rec)
			if err != nil {
				return fmt.Errorf("bare intake (%s): %w", body, err)
			}
			if out != want {
				return fmt.Errorf("bare intake (%s): %s, want %s", body, out, want)
			}
			if err := sameStatements("intake, "+bodyLabel(body), traces[body], rec); err != nil {
				return err
			}
		}
	}
	progress("the bare program sends the server's statements verbatim (checked against app.WithSQLTrace) and answers GET /me with the server's body")
	return nil
}

func sameStatements(what string, server, bare []stmt) error {
	same := len(server) == len(bare) && len(server) > 0
	for i := 0; same && i < len(server); i++ {
		same = server[i] == bare[i]
	}
	if same {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the bare program's statements differ from the server's; update bare.go\n", what)
	for i := range max(len(server), len(bare)) {
		var s, r stmt
		if i < len(server) {
			s = server[i]
		}
		if i < len(bare) {
			r = bare[i]
		}
		mark := "  "
		if s != r {
			mark = "!="
		}
		fmt.Fprintf(&b, "%s %2d server (%d args): %s\n          bare   (%d args): %s\n", mark, i+1, s.args, s.sql, r.args, r.sql)
	}
	return fmt.Errorf("%s", b.String())
}
