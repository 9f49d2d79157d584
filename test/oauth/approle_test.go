package oauth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestOAuth_AppRoleAttacks replays issue 20 item 1 as the app role, the role request work runs
// as, with SQL of its own: any session may SET app.oauth = 'server' (custom settings need no
// privilege), which opened the oauth_server policies to every company's rows. Company B is the
// victim; the attacker knows nothing of B at the start and must fail at every step.
func TestOAuth_AppRoleAttacks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	b := env.NewCompany(t)
	victim := newPerson(t, env, b, "admin")
	bound := newApp(t, env, base, operator.NewOAuthClientInput{CompanyID: &b.ID})
	code, verifier := bound.code(t, newBrowserClient(t), victim) // a consent and a grant of B
	if tk := bound.exchange(t, code, verifier); tk.Status != 200 {
		t.Fatalf("B's grant: %+v", tk)
	}
	app, err := sql.Open("pgx", env.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	ctx := context.Background()
	// asApp runs fn in a transaction of the app role that claims to be the authorization
	// server, as the review did, and commits what fn did unless it failed.
	asApp := func(t *testing.T, fn func(tx *sql.Tx) error) error {
		t.Helper()
		tx, err := app.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec(`SELECT set_config('app.oauth', 'server', true)`); err != nil {
			t.Fatal(err)
		}
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	}

	t.Run("app.oauth = 'server' lists no company's OAuth clients, tokens or consents", func(t *testing.T) {
		for _, table := range []string{"oauth_clients", "oauth_tokens", "oauth_consents"} {
			var n int
			err := asApp(t, func(tx *sql.Tx) error {
				return tx.QueryRow(`SELECT count(*) FROM `+table+` WHERE company_id = $1`, b.ID).Scan(&n)
			})
			if err == nil && n > 0 {
				t.Errorf("%s: the app role read %d of company B's rows", table, n)
			}
		}
	})

	t.Run("no function gives the app role a password hash", func(t *testing.T) {
		var stored string
		if err := env.OwnerDB.QueryRow(`SELECT password_hash FROM users WHERE id = $1`, victim.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		key := stored[strings.LastIndex(stored, "$")+1:] // the argon2id output: the part worth cracking
		var got string
		err := asApp(t, func(tx *sql.Tx) error {
			return tx.QueryRow(`SELECT password_hash FROM oauth_login_users($1, NULL)`, victim.Email).Scan(&got)
		})
		if err == nil {
			t.Errorf("oauth_login_users gave the app role %s's password hash %.20q…", victim.Email, got)
		}
		// every function the app role may call, with every output column it returns: none is a
		// credential's hash
		rows, err := env.OwnerDB.Query(`SELECT p.oid::regprocedure::text, a.name
			FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,
			     unnest(p.proargnames, p.proargmodes) AS a(name, mode)
			WHERE n.nspname = 'public' AND a.mode IN ('o', 't', 'b')
			  AND has_function_privilege($1, p.oid, 'EXECUTE')
			  AND (a.name LIKE '%password%' OR a.name LIKE '%secret%')`, migrations.RoleApp)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var fn, col string
			if err := rows.Scan(&fn, &col); err != nil {
				t.Fatal(err)
			}
			t.Errorf("the app role may call %s, which returns %s", fn, col)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		// what the sign-in reads before the password is checked holds no more than the salt
		var params []string
		if err := asApp(t, func(tx *sql.Tx) error {
			rows, err := tx.Query(`SELECT oauth_server_login_params($1)`, victim.Email)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var p string
				if err := rows.Scan(&p); err != nil {
					return err
				}
				params = append(params, p)
			}
			return rows.Err()
		}); err != nil {
			t.Fatalf("oauth_server_login_params: %v", err)
		}
		if len(params) != 1 || strings.Contains(params[0], key) || !strings.HasPrefix(stored, params[0]+"$") {
			t.Errorf("sign-in parameters %q: want the stored hash's parameters and salt, without its key", params)
		}
	})

	t.Run("a forged access token for company B is refused", func(t *testing.T) {
		// the review's attack: B's client (read above), an access-token row with every scope and
		// a year to live, and a token whose signature hashes to it
		sig := "forged-" + uuid.NewString()
		h := sha256.Sum256([]byte(sig))
		forged := "ory_at_" + strings.ReplaceAll(uuid.NewString(), "-", "") + "." + sig
		insert := `INSERT INTO oauth_tokens (id, kind, signature_hash, request_id, client_id, company_id, requested_scopes,
			granted_scopes, form, session, requested_at, expires_at, active, created_at)
			VALUES (gen_random_uuid(), 'access_token', $1, $2, $3, $4, '["*"]', '["*"]', '{}', '\x7b7d', now(),
			now() + interval '1 year', true, now())`
		store := `SELECT oauth_server_token_store('access_token', $1, $2, $3, $4, NULL, $5, $5, '{}', '\x7b7d', now(), $6)`
		for _, a := range []struct {
			name string
			run  func(tx *sql.Tx) error
			// refused: the statement itself must fail; stored: it must succeed (a plausible row,
			// so that the token's own check is what refuses it); neither: either way, the token
			// must not work
			refused, stored bool
		}{
			{"INSERT INTO oauth_tokens", func(tx *sql.Tx) error {
				_, err := tx.Exec(insert, h[:], uuid.NewString(), bound.client.ID, b.ID)
				return err
			}, false, false},
			{"the store function with every scope", func(tx *sql.Tx) error {
				_, err := tx.Exec(store, h[:], uuid.NewString(), bound.client.ID, b.ID, `["*"]`, "2099-01-01T00:00:00Z")
				return err
			}, true, false},
			{"the store function with a year to live", func(tx *sql.Tx) error {
				_, err := tx.Exec(store, h[:], uuid.NewString(), bound.client.ID, b.ID, `["contacts:read"]`, "2099-01-01T00:00:00Z")
				return err
			}, true, false},
			{"the store function within the client's scopes and an hour", func(tx *sql.Tx) error {
				_, err := tx.Exec(strings.Replace(store, "$6", "now() + interval '50 minutes'", 1), h[:], uuid.NewString(),
					bound.client.ID, b.ID, `["contacts:read"]`)
				return err
			}, false, true},
		} {
			t.Run(a.name, func(t *testing.T) {
				err := asApp(t, a.run)
				if a.refused && err == nil {
					t.Errorf("the app role stored a forged token for company B")
				}
				if a.stored && err != nil {
					t.Fatalf("a row within the client's scopes and lifespan: %v, want it stored (the token check is under test)", err)
				}
				if err != nil {
					return
				}
				t.Cleanup(func() { _, _ = env.OwnerDB.Exec(`DELETE FROM oauth_tokens WHERE signature_hash = $1`, h[:]) })
				if status, v := me(t, env, forged); status != 401 {
					t.Errorf("GET /me with the forged token: %d %+v, want 401", status, v)
				}
			})
		}
	})

	t.Run("company ids are not listable from the job queue", func(t *testing.T) {
		// a job whose arguments carry B's id, as the webhook and portfolio jobs do
		if _, err := env.OwnerDB.Exec(`INSERT INTO river.river_job (args, kind, max_attempts, queue, state, scheduled_at)
			VALUES (jsonb_build_object('companyId', $1::text), 'approle_probe', 1, 'approle_probe', 'scheduled', now() + interval '1 year')`,
			b.ID); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`SELECT count(*) FROM river.river_job WHERE args->>'companyId' = $1`,
			`SELECT count(*) FROM webhook_pending_companies() c WHERE c::text = $1 OR true`,
		} {
			var n int
			err := asApp(t, func(tx *sql.Tx) error { return tx.QueryRow(q, b.ID.String()).Scan(&n) })
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42501" {
				t.Errorf("%s as the app role: %d rows, %v; want permission denied", q, n, err)
			}
		}
		// the job queue's own role works the queue (positive control: the job is there)
		jobs, err := sql.Open("pgx", env.Config.JobsDatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		defer jobs.Close()
		var n int
		if err := jobs.QueryRow(`SELECT count(*) FROM river.river_job WHERE args->>'companyId' = $1`, b.ID.String()).Scan(&n); err != nil || n != 1 {
			t.Errorf("the jobs role reads the job queue: %d jobs, %v; want 1", n, err)
		}
		if err := jobs.QueryRow(`SELECT count(*) FROM webhook_pending_companies()`).Scan(&n); err != nil {
			t.Errorf("the jobs role calls webhook_pending_companies: %v", err)
		}
	})
}
