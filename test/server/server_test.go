// Package server tests the server's lifecycle and the ent mixins every resource relies on.
package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/pgtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// TestServer_RefusesPrivilegedRole: the server will not serve as a role row-level security does
// not hold (a superuser: the owner URL of the tests; a member of the operator role).
func TestServer_RefusesPrivilegedRole(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	role := "bd_rolecheck_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	for _, s := range []string{
		"CREATE ROLE " + role + " LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '" + pgtest.AppPassword + "'",
		"GRANT " + migrations.RoleOperator + " TO " + role,
	} {
		if _, err := env.OwnerDB.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = env.OwnerDB.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+role) })
	for _, tc := range []struct{ name, url, want string }{
		{"superuser", env.OwnerURL, "is a superuser"},
		{"member of the operator role", pgtest.WithUser(env.OwnerURL, role, pgtest.AppPassword), "is a member of " + migrations.RoleOperator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := env.Config
			cfg.AppDatabaseURL = tc.url
			cfg.Jobs.Workers = 0
			s, err := app.NewServer(ctx, cfg, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			err = s.ServeListener(sctx, ln, time.Second)
			if err == nil {
				t.Fatalf("the server served as %s", tc.name)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refusal %q does not say %q", err, tc.want)
			}
		})
	}
	if err := tenancy.CheckRole(ctx, env.Server.Pool()); err != nil {
		t.Errorf("the app role is refused: %v", err)
	}
}

// TestDriver_RefusesStatementsOutsideTransaction: ent's client-level Exec/Query(Context) would
// reach the pool unpinned; the tenancy driver refuses them.
func TestDriver_RefusesStatementsOutsideTransaction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := tenancy.WithCompany(context.Background(), uuid.New())
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(env.AppDB)))
	if _, err := client.ExecContext(ctx, "SELECT 1"); !errors.Is(err, tenancy.ErrNoTx) {
		t.Errorf("ExecContext outside a transaction: %v, want ErrNoTx", err)
	}
	if _, err := client.QueryContext(ctx, "SELECT 1"); !errors.Is(err, tenancy.ErrNoTx) {
		t.Errorf("QueryContext outside a transaction: %v, want ErrNoTx", err)
	}
	if _, err := client.User.Query().Count(ctx); !errors.Is(err, tenancy.ErrNoTx) {
		t.Errorf("a query outside a transaction: %v, want ErrNoTx", err)
	}
}

// TestServer_GracefulShutdown cancels the server's context while a request is in flight: the
// request still gets its answer and Serve returns without error.
func TestServer_GracefulShutdown(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	env := apitest.New(t, app.WithTestRoutes(func(v1 fiber.Router, m app.Middleware) {
		v1.Get("/_test/slow", m.Auth, func(c *fiber.Ctx) error {
			close(started)
			time.Sleep(500 * time.Millisecond)
			return c.JSON(fiber.Map{"done": true})
		})
	}))
	co := env.NewCompany(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- env.Server.ServeListener(ctx, ln, 5*time.Second) }()

	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+app.V1Prefix+"/_test/slow", nil)
		req.Header.Set("Authorization", "Bearer "+co.Secret)
		resp, err := apitest.Client(t).Do(req) // a test route: its answer must still be a problem or succeed
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- result{status: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("request never reached the handler")
	}
	cancel() // SIGTERM
	r := <-got
	if r.err != nil || r.status != 200 {
		t.Fatalf("in-flight request: %d %s %v", r.status, r.body, r.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("listener still accepts after shutdown")
	}
}

// TestExternalRefs checks ExternalRefMixin: references are unique per company, resource,
// source and external id, follow updates and go with the record. Users carry them; the app role
// may not write users, so this runs as the operator role, pinned to one company.
func TestExternalRefs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(env.OwnerDB)))
	in := func(companyID uuid.UUID, f func(ctx context.Context, db *ent.Client) error) error {
		ctx := tenancy.WithCompany(tenancy.WithOperator(context.Background()), companyID)
		tx, err := client.Tx(ctx)
		if err != nil {
			return err
		}
		if err := f(ctx, tx.Client()); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	refs := []schematype.ExternalRef{{Source: "ams", ExternalID: "u-1"}}
	var userID string
	err := in(a.ID, func(ctx context.Context, db *ent.Client) error {
		u, err := db.User.Create().SetEmail("ref@example.com").SetExternalReferences(refs).Save(ctx)
		if err == nil {
			userID = u.ID.String()
		}
		return err
	})
	if err != nil {
		t.Fatalf("create with reference: %v", err)
	}
	err = in(a.ID, func(ctx context.Context, db *ent.Client) error {
		_, err := db.User.Create().SetEmail("ref2@example.com").SetExternalReferences(refs).Save(ctx)
		return err
	})
	if !ent.IsConstraintError(err) {
		t.Errorf("same reference twice in one company: %v, want a constraint error", err)
	}
	if err := in(b.ID, func(ctx context.Context, db *ent.Client) error {
		_, err := db.User.Create().SetEmail("ref@example.com").SetExternalReferences(refs).Save(ctx)
		return err
	}); err != nil {
		t.Errorf("same reference in another company: %v", err)
	}
	count := func(ctx context.Context, db *ent.Client, id string) int {
		n, err := db.ExternalRef.Query().Where(externalref.ExternalID(id)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := in(a.ID, func(ctx context.Context, db *ent.Client) error {
		users, err := db.User.Query().All(ctx)
		if err != nil {
			return err
		}
		for _, u := range users {
			if u.ID.String() != userID {
				continue
			}
			if _, err := u.Update().SetExternalReferences([]schematype.ExternalRef{{Source: "ams", ExternalID: "u-2"}}).Save(ctx); err != nil {
				return err
			}
			if count(ctx, db, "u-1") != 0 || count(ctx, db, "u-2") != 1 {
				t.Errorf("after update: u-1 %d, u-2 %d; want 0, 1", count(ctx, db, "u-1"), count(ctx, db, "u-2"))
			}
			if err := db.User.DeleteOne(u).Exec(ctx); err != nil {
				return err
			}
			if count(ctx, db, "u-2") != 0 {
				t.Error("reference outlived its user")
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
