package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// appPrivileges is everything the app role may do to a table, and why. A grant not listed here
// (or a listed one gone) fails TestSchema_AppPrivileges: request work keeps only what it uses.
// Column grants are written "UPDATE(col)".
var appPrivileges = map[string]string{
	// the e-mail area (issue 21): mailboxes are the operator's, the sync may only record its
	// state (and the Sent folder it found); threads and messages are created and updated by
	// sends, their status changes and the sync, never deleted by the API (they go with their
	// mailbox by cascade); attachments and links are written once; templates are the
	// operator's; opt-outs are created and deleted (renewed consent) by the API; a send takes
	// points with one conditional UPDATE of the balance (the operator grants them) and writes a
	// ledger line; correspondence cases are created, edited and deleted (drafts) by the API
	"public.mailboxes":            "SELECT,UPDATE(sent_folder),UPDATE(sync_error),UPDATE(sync_state),UPDATE(synced_at),UPDATE(updated_at)",
	"public.mailbox_folders":      "INSERT,SELECT,UPDATE",
	"public.email_threads":        "INSERT,SELECT,UPDATE",
	"public.emails":               "INSERT,SELECT,UPDATE",
	"public.email_attachments":    "INSERT,SELECT",
	"public.email_links":          "INSERT,SELECT",
	"public.email_templates":      "SELECT",
	"public.email_opt_outs":       "DELETE,INSERT,SELECT",
	"public.company_points":       "SELECT,UPDATE(balance),UPDATE(updated_at)",
	"public.point_entries":        "INSERT,SELECT",
	"public.correspondence_cases": "DELETE,INSERT,SELECT,UPDATE",
	// documents that brokers sign (issue 22): templates and standard documents are the
	// product's defaults and the operator's; signature requests and their signers are created
	// and moved on (signed, cancelled, expired, reminded) by the API and the signing page, and
	// go only with their contact; advice records are created and edited until locked, never
	// deleted by the API (IDD documentation goes only with its contact)
	"public.document_templates": "SELECT",
	"public.standard_documents": "SELECT",
	"public.signature_requests": "INSERT,SELECT,UPDATE",
	"public.signature_signers":  "INSERT,SELECT,UPDATE",
	"public.advice_records":     "INSERT,SELECT,UPDATE",
	// the customer portal (issue 23): accesses are invited, activated and revoked (a status) by
	// the API and the portal, never deleted (they go with their contact); the mailed tokens are
	// written once and marked used; sessions are created, touched and ended (sign-out,
	// revocation); change requests are created and withdrawn in the portal and decided by the
	// API, never deleted (the record of what the customer asked)
	"public.portal_accesses":        "INSERT,SELECT,UPDATE",
	"public.portal_tokens":          "INSERT,SELECT,UPDATE",
	"public.portal_sessions":        "DELETE,INSERT,SELECT,UPDATE",
	"public.portal_change_requests": "INSERT,SELECT,UPDATE",
	// commissions (issue 24): a statement is uploaded, parsed and moved on (status, note) by the
	// API and its job, never deleted (the record of income received); its entries are written
	// by the parse and linked by PATCH, going only with their statement; liability rules are
	// the operator's
	"public.commission_statements":      "INSERT,SELECT,UPDATE",
	"public.commission_entries":         "INSERT,SELECT,UPDATE",
	"public.commission_liability_rules": "SELECT",
	// the cross-selling counts (issue 24): written by the triggers of contacts and contracts in
	// the writer's own statement (INSERT with a contact, UPDATE with its contracts), never
	// deleted but with their contact
	"public.contact_covers": "INSERT,SELECT,UPDATE",
	// data in and out (issue 25): an import, its rows, a privacy request and an extraction are
	// created by the API, moved on by their jobs (status, counts, outcomes, blanked cells after an
	// erasure), never deleted by request work (the record of what was imported, asked, read);
	// retained_records is not the app role's at all (blocked data: only the job role writes
	// and sweeps it)
	"public.contact_imports":      "INSERT,SELECT,UPDATE",
	"public.contact_import_rows":  "INSERT,SELECT,UPDATE",
	"public.privacy_requests":     "INSERT,SELECT,UPDATE",
	"public.contract_extractions": "INSERT,SELECT,UPDATE",
	// operator-only: activated and changed by the operator CLI
	"public.companies": "SELECT",
	// no endpoint writes users (the operator does)
	"public.users": "SELECT",
	// ExternalRefMixin (ent/schema) replaces a resource's references by delete + insert on every
	// create, update and delete of a resource with references; none is updated in place
	"public.external_refs": "DELETE,INSERT,SELECT",
	// the outbox: inserted in the change's transaction, numbered at commit, purged by
	// maintenance_purge (SECURITY DEFINER) only
	"public.events":         "INSERT,SELECT,UPDATE(seq)",
	"public.event_counters": "INSERT,SELECT,UPDATE",
	// app/platform/idempotency: reserved (insert, FOR UPDATE), completed (update); a failed reservation
	// is deleted so the client may retry
	"public.idempotency_keys": "DELETE,INSERT,SELECT,UPDATE",
	// DELETE /leads/{id} and DELETE /leads (test leads); PATCH, convert and intake merges update;
	// attachments are moved to the contact on convert (update) and go with their lead by the
	// lead_attachments_drop_unheld trigger, which runs as the app role (delete)
	"public.leads":            "DELETE,INSERT,SELECT,UPDATE",
	"public.lead_attachments": "DELETE,INSERT,SELECT,UPDATE",
	// the intake inserts one per submission, none is changed; they go with their lead by
	// foreign-key cascade (runs as the owner)
	"public.lead_submissions": "INSERT,SELECT",
	// POST /lead-stages; the spec changes and deletes none
	"public.lead_stages": "INSERT,SELECT",
	// the spec deletes contacts and phones (DELETE /contacts/{id}, /contacts/{id}/phones/{id})
	"public.contacts":       "DELETE,INSERT,SELECT,UPDATE",
	"public.contact_phones": "DELETE,INSERT,SELECT,UPDATE",
	// POST and DELETE /users/{userId}/delegations; none is updated
	"public.delegations": "DELETE,INSERT,SELECT",
	// DELETE /webhook-endpoints/{id}; the delivery log goes by cascade or webhook_purge
	"public.webhook_endpoints":  "DELETE,INSERT,SELECT,UPDATE",
	"public.webhook_deliveries": "INSERT,SELECT,UPDATE",
	"public.webhook_cursors":    "INSERT,SELECT,UPDATE",
	// OAuth (app/oauth): clients are registered by the operator; the authorization server
	// stores and changes tokens and consents only through its oauth_server_* functions
	// (appDefinerFunctions); a pinned request may read its own company's rows
	"public.oauth_clients":  "SELECT",
	"public.oauth_consents": "SELECT",
	"public.oauth_tokens":   "SELECT",
	// tasks and appointments (issue 11): the spec deletes tasks and appointments (comments go
	// with their task); occurrence exceptions are rewritten by scoped edits; calendar tokens are
	// replaced (delete + insert) and revoked
	"public.tasks":                  "DELETE,INSERT,SELECT,UPDATE",
	"public.task_comments":          "DELETE,INSERT,SELECT",
	"public.appointments":           "DELETE,INSERT,SELECT,UPDATE",
	"public.appointment_exceptions": "DELETE,INSERT,SELECT,UPDATE",
	"public.calendar_tokens":        "DELETE,INSERT,SELECT",
	// contracts (DELETE /contracts/{id}); the insurer catalog is the operator's, read here;
	// portfolio transfers are created, validated and committed, never deleted by the API
	"public.contracts": "DELETE,INSERT,SELECT,UPDATE",
	// documents are uploaded, read and deleted, never changed (a new upload replaces one),
	// except for their release to the customer portal (issue 23: PATCH /documents/{id}, the
	// signed PDF of a request the contact signed), which bumps the version
	"public.documents":           "DELETE,INSERT,SELECT,UPDATE(released_at),UPDATE(updated_at),UPDATE(version)",
	"public.insurers":            "SELECT",
	"public.portfolio_transfers": "INSERT,SELECT,UPDATE",
	// CSV mappings of portfolio transfers: created, changed and deleted by the API
	"public.portfolio_mappings": "DELETE,INSERT,SELECT,UPDATE",
	// contact sub-resources (issue 8): POST and DELETE /contacts/{id}/relationships (a pair,
	// never changed); PUT /contacts/{id}/finance creates or updates the one row (it goes with
	// its contact by cascade); notes are created, PATCHed (content only) and deleted, system
	// entries written by every sub-resource change, and restrictive policies keep system entries
	// and e-mails immutable (TestSchema_ActivitiesImmutable)
	"public.contact_relationships": "DELETE,INSERT,SELECT",
	"public.contact_finances":      "INSERT,SELECT,UPDATE",
	"public.contact_activities":    "DELETE,INSERT,SELECT,UPDATE(content),UPDATE(updated_at),UPDATE(version)",
	// POST /custom-fields defines a company's fields (at most 10); the spec changes and deletes
	// none
	"public.custom_field_definitions": "INSERT,SELECT",
	// nothing of the job queue (river): its role is brokerdesk_jobs (TestSchema_RiverQueue)
}

// appDefinerFunctions are the SECURITY DEFINER functions the app role may call: each runs with
// more rights than the app role has, so each is reviewed (search_path pinned, objects
// schema-qualified, no parameter that widens what it does).
var appDefinerFunctions = []string{
	"auth_credential(bytea,text[])",       // owner brokerdesk_auth: the credential of a key hash
	"maintenance_purge()",                 // owner brokerdesk_operator: retention fixed in the function
	"webhook_credential(uuid)",            // owner brokerdesk_auth: a key of the pinned company only
	"webhook_oauth_credential(uuid,uuid)", // owner brokerdesk_auth: an OAuth client's grant of the pinned company only
	"webhook_purge()",                     // owner brokerdesk_operator: delivery log past 30 days
	"auth_token(bytea,text[])",            // owner brokerdesk_auth: the grant of an OAuth access-token hash
	"calendar_feed_user(bytea)",           // owner brokerdesk_auth: the user of a calendar-feed token hash
	"insurer_ensure(text)",                // owner brokerdesk_operator: adds "VU <n>" to the platform catalog, never a name
	// owner brokerdesk_auth, the authorization server's only way to the OAuth tables, each for
	// one key it holds; no password or secret hash comes out (sign-in and client authentication
	// get a verdict)
	"oauth_server_client(uuid)",                  // an active client by id, without its secret
	"oauth_server_client_secret(uuid,bytea)",     // whether a presented secret's hash is the client's
	"oauth_server_login_params(text)",            // argon2id parameters and salt of an e-mail's passwords, no key
	"oauth_server_login(text,text[])",            // the user whose stored hash is one the server derived
	"oauth_server_user(uuid)",                    // a user of a live company by id: session, grant
	"oauth_server_consent(uuid,uuid)",            // the scopes a user allowed a client
	"oauth_server_consent_save(uuid,uuid,jsonb)", // checked: active user, client bound to none or its company, client's scopes
	"oauth_server_token_store(text,bytea,text,uuid,uuid,uuid,jsonb,jsonb,jsonb,bytea,timestamp with time zone,timestamp with time zone)", // checked: client, company, user, scopes, lifespan, the grant's code
	"oauth_server_token(text,bytea)",            // a token by signature hash, locked
	"oauth_server_token_deactivate(text,bytea)", // marks one token used
	"oauth_server_pkce_delete(bytea)",           // removes a used PKCE challenge
	"oauth_server_grant_revoke(text,text)",      // revokes a grant's tokens of one kind
	"oauth_server_grant(text)",                  // a grant's client, company, user, scopes, liveness
	"portfolio_analyze()",                       // owner brokerdesk_maintainer, the three tables' owner (ANALYZE needs it): their statistics, at most every 30 s

	// issue 20: calendar feed tokens and webhook endpoint ownership
	// owner brokerdesk_auth: whether a token of the pinned company (user, expiry, issuer) answers
	"calendar_token_live(uuid,timestamp with time zone,uuid,text)",
	// owner brokerdesk_auth: grant id and client of an access token of the pinned company
	"calendar_token_grant(uuid)",
	// owner brokerdesk_operator: the number of the pinned company's endpoints, nothing else
	"webhook_endpoint_count()",
}

// TestSchema_AppPrivileges lists the app role's table and column grants and compares them with
// appPrivileges.
func TestSchema_AppPrivileges(t *testing.T) {
	t.Parallel()
	checkGrants(t, migrations.RoleApp, "appPrivileges", appPrivileges)
}

// checkGrants compares the table and column grants of role (its own, not inherited) with want
// (named name in the messages): every grant must be listed with its reason, every listed one
// held.
func checkGrants(t *testing.T, role, name string, want map[string]string) {
	t.Helper()
	env := apitest.New(t)
	db := open(t, env.OwnerURL)
	rows, err := db.Query(`
		SELECT n.nspname || '.' || c.relname, a.privilege_type
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
		WHERE a.grantee = $1::regrole AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		UNION ALL
		SELECT n.nspname || '.' || c.relname, a.privilege_type || '(' || att.attname || ')'
		FROM pg_attribute att JOIN pg_class c ON c.oid = att.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace,
		     aclexplode(att.attacl) a
		WHERE a.grantee = $1::regrole AND n.nspname NOT IN ('pg_catalog', 'information_schema')`, role)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var rel, priv string
		if err := rows.Scan(&rel, &priv); err != nil {
			t.Fatal(err)
		}
		got[rel] = append(got[rel], priv)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, rel := range slices.Sorted(maps.Keys(got)) {
		slices.Sort(got[rel])
		have := strings.Join(slices.Compact(got[rel]), ",")
		if w, ok := want[rel]; !ok {
			t.Errorf("%s holds %s on %s, which %s does not list: revoke it or list it with the reason", role, have, rel, name)
		} else if have != w {
			t.Errorf("%s holds %s on %s, %s says %s", role, have, rel, name, w)
		}
	}
	for rel := range want {
		if _, ok := got[rel]; !ok {
			t.Errorf("%s lists %s, but %s holds nothing on it", name, rel, role)
		}
	}
}

// TestSchema_DefinerFunctions checks every SECURITY DEFINER function: search_path pinned and
// ending in pg_temp (or empty), so that no temporary object shadows what it names; and the set
// the app role may execute is appDefinerFunctions.
func TestSchema_DefinerFunctions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := open(t, env.OwnerURL)
	rows, err := db.Query(`
		SELECT p.oid::regprocedure::text, coalesce(array_to_string(p.proconfig, chr(10)), ''),
		       has_function_privilege($1, p.oid, 'EXECUTE')
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')`, migrations.RoleApp)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var callable []string
	seen := 0
	for rows.Next() {
		var fn, config string
		var exec bool
		if err := rows.Scan(&fn, &config, &exec); err != nil {
			t.Fatal(err)
		}
		seen++
		if exec {
			callable = append(callable, fn)
		}
		path, ok := "", false
		for _, kv := range strings.Split(config, "\n") {
			if v, found := strings.CutPrefix(kv, "search_path="); found {
				path, ok = v, true
			}
		}
		if !ok {
			t.Errorf("%s: SECURITY DEFINER without SET search_path", fn)
			continue
		}
		parts := strings.Split(path, ",")
		last := strings.Trim(strings.TrimSpace(parts[len(parts)-1]), `"`)
		if last != "pg_temp" && last != "" {
			t.Errorf("%s: search_path %q must end in pg_temp (or be empty): pg_temp is searched first otherwise", fn, path)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen < len(appDefinerFunctions) {
		t.Errorf("found %d SECURITY DEFINER functions, want at least %d", seen, len(appDefinerFunctions))
	}
	slices.Sort(callable)
	want := slices.Sorted(slices.Values(appDefinerFunctions))
	if !slices.Equal(callable, want) {
		t.Errorf("SECURITY DEFINER functions the app role may call: %v, want %v (appDefinerFunctions)", callable, want)
	}
}

// TestSchema_NoTempNoCreate: the app role may create nothing, temporary or not; the auth and
// operator roles (owners of SECURITY DEFINER functions) may create nothing in public.
func TestSchema_NoTempNoCreate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	app := open(t, env.AppURL)
	var temp bool
	if err := app.QueryRow(`SELECT has_database_privilege(current_database(), 'TEMPORARY')`).Scan(&temp); err != nil {
		t.Fatal(err)
	}
	if temp {
		t.Error("the app role may create temporary objects")
	}
	var schemas []string
	rows, err := app.Query(`SELECT nspname FROM pg_namespace WHERE has_schema_privilege(oid, 'CREATE')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(schemas) > 0 {
		t.Errorf("the app role may create objects in schemas %v", schemas)
	}
	if _, err := app.Exec(`CREATE TEMP TABLE job_runs (id text)`); !isCode(err, "42501") {
		t.Errorf("CREATE TEMP TABLE as the app role: %v, want permission denied", err)
	}
	owner := open(t, env.OwnerURL)
	for _, role := range []string{migrations.RoleAuth, migrations.RoleOperator, migrations.RoleApp} {
		var create, dbTemp bool
		if err := owner.QueryRow(`SELECT has_schema_privilege($1, 'public', 'CREATE'),
			has_database_privilege($1, current_database(), 'TEMPORARY')`, role).Scan(&create, &dbTemp); err != nil {
			t.Fatal(err)
		}
		if create || dbTemp {
			t.Errorf("role %s: CREATE on public %v, TEMPORARY %v; want neither", role, create, dbTemp)
		}
	}
}

// TestSchema_PurgeTakesNoArguments: the app role calls the purge, but cannot choose what it
// deletes ('0 seconds', '-100 years' deleted every company's events before).
func TestSchema_PurgeTakesNoArguments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	app := open(t, env.AppURL)
	var ran bool
	if _, err := app.Exec(`SELECT * FROM maintenance_purge('0 seconds', '-100 years')`); !isCode(err, "42883") {
		t.Errorf("maintenance_purge(interval, interval) as the app role: %v, want undefined function", err)
	}
	if err := app.QueryRow(`SELECT ran FROM maintenance_purge()`).Scan(&ran); err != nil {
		t.Errorf("maintenance_purge() as the app role: %v", err)
	}
}

// TestSchema_DefinerExploitsFail replays the review's two exploits as the app role: a temporary
// table job_runs with a trigger (ran as brokerdesk_operator inside maintenance_purge) and a
// temporary view api_keys (ran as brokerdesk_auth inside auth_credential). The first layer, no
// TEMPORARY for the app role, is TestSchema_NoTempNoCreate; here the app role is given TEMPORARY
// inside a transaction that is rolled back, so the second layer, the pinned search_path, is
// what has to hold. (On the schema before 20261124010000_hardening both calls fail with
// "exploit ran as brokerdesk_operator" and "exploit ran as brokerdesk_auth".)
func TestSchema_DefinerExploitsFail(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	owner := open(t, env.OwnerURL)
	evil := `CREATE FUNCTION pg_temp.evil() RETURNS %s LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'exploit ran as %%', current_user; END $$`
	for _, tc := range []struct {
		name  string
		setup []string
		call  string
	}{
		{
			name: "temporary job_runs with a trigger, then maintenance_purge",
			setup: []string{
				`CREATE TEMP TABLE job_runs (id text PRIMARY KEY, last_run_at timestamptz)`,
				`GRANT ALL ON pg_temp.job_runs TO PUBLIC`,
				fmt.Sprintf(evil, "trigger"),
				`CREATE TRIGGER evil BEFORE INSERT OR UPDATE ON pg_temp.job_runs FOR EACH ROW EXECUTE FUNCTION pg_temp.evil()`,
			},
			call: `SELECT ran FROM maintenance_purge()`,
		},
		{
			name: "temporary view api_keys, then auth_credential",
			setup: []string{
				fmt.Sprintf(evil, "bytea"),
				`CREATE TEMP VIEW api_keys AS SELECT gen_random_uuid() AS id, 'sk_live_x'::varchar AS prefix,
					pg_temp.evil() AS hash, 'secret'::varchar AS kind, 'live'::varchar AS env, '[]'::jsonb AS scopes,
					'[]'::jsonb AS allowed_domains, '` + co.ID.String() + `'::uuid AS company_id, NULL::uuid AS user_id,
					'active'::varchar AS status`,
				`GRANT SELECT ON pg_temp.api_keys TO PUBLIC`,
			},
			call: `SELECT key_id FROM auth_credential('\x00'::bytea, '{}')`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			conn, err := owner.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			for _, s := range []string{
				`DO $$ BEGIN EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO ` + migrations.RoleApp + `', current_database()); END $$`,
				`SET LOCAL ROLE ` + migrations.RoleApp,
			} {
				if _, err := tx.ExecContext(ctx, s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			for _, s := range tc.setup {
				if _, err := tx.ExecContext(ctx, s); err != nil {
					t.Fatalf("exploit setup as the app role: %s: %v", s, err)
				}
			}
			rows, err := tx.QueryContext(ctx, tc.call)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err != nil {
				if strings.Contains(err.Error(), "exploit ran") {
					t.Fatalf("the app role's code ran inside a SECURITY DEFINER function: %v", err)
				}
				t.Fatalf("%s: %v", tc.call, err)
			}
		})
	}
}

func isCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// TestSchema_AppPasswordIsVerifier: migrate gives the app role a SCRAM-SHA-256 verifier it
// computed, never the password in SQL text (the template was migrated with pgtest.AppPassword).
func TestSchema_AppPasswordIsVerifier(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	var stored string
	if err := open(t, env.OwnerURL).QueryRow(`SELECT coalesce(rolpassword, '') FROM pg_authid WHERE rolname = $1`,
		migrations.RoleApp).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "SCRAM-SHA-256$4096:") {
		t.Errorf("app role password stored as %.20q…, want a SCRAM-SHA-256 verifier", stored)
	}
}

// TestSchema_ActivitiesImmutable: the app role may change a note's content and delete a note,
// nothing else of the timeline (spec: system entries and e-mails are immutable). The column
// grants refuse other columns; the restrictive policies leave entries that are no note untouched.
func TestSchema_ActivitiesImmutable(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ctx := context.Background()
	contact := uuid.Must(uuid.NewV7())
	if err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id,
			company_id, type, first_name, last_name, company_name, version, created_at, updated_at)
			VALUES ('[]', '[]', '{}', '{}', '{}', '', '', $1, $2, 'private', 'Ada', 'L', '', 1, now(), now())`, contact, co.ID)
		return err
	}); err != nil {
		t.Fatalf("insert contact: %v", err)
	}
	for _, r := range []apitest.Request{
		{Method: "POST", Path: "/contacts/" + contact.String() + "/notes", Key: co.Secret, Body: map[string]any{"content": "a note"}},
		{Method: "PUT", Path: "/contacts/" + contact.String() + "/finance", Key: co.Secret, Body: map[string]any{}}, // a system entry
	} {
		if got := env.Do(t, r); got.Status/100 != 2 {
			t.Fatalf("%s %s: %d %s", r.Method, r.Path, got.Status, got.Body)
		}
	}
	exec := func(stmt string) (int64, error) {
		var n int64
		err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
			res, err := tx.Exec(stmt, contact)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		return n, err
	}
	for _, tc := range []struct {
		stmt string
		rows int64
		code string
	}{
		{stmt: `UPDATE contact_activities SET content = 'rewritten' WHERE contact_id = $1 AND kind = 'system'`},
		{stmt: `DELETE FROM contact_activities WHERE contact_id = $1 AND kind = 'system'`},
		{stmt: `UPDATE contact_activities SET kind = 'system' WHERE contact_id = $1 AND kind = 'note'`, code: "42501"},
		{stmt: `UPDATE contact_activities SET occurred_at = now() - interval '1 year' WHERE contact_id = $1`, code: "42501"},
		{stmt: `UPDATE contact_activities SET author_id = NULL WHERE contact_id = $1`, code: "42501"},
		{stmt: `UPDATE contact_activities SET content = 'edited', version = version + 1, updated_at = now()
			WHERE contact_id = $1 AND kind = 'note'`, rows: 1},
		{stmt: `DELETE FROM contact_activities WHERE contact_id = $1`, rows: 1}, // the note only
	} {
		n, err := exec(tc.stmt)
		switch {
		case tc.code != "" && !isCode(err, tc.code):
			t.Errorf("%s: %v, want SQLSTATE %s", tc.stmt, err, tc.code)
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.stmt, err)
		case tc.code == "" && n != tc.rows:
			t.Errorf("%s: %d rows, want %d", tc.stmt, n, tc.rows)
		}
	}
	var system int
	if err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM contact_activities WHERE contact_id = $1 AND kind = 'system'
			AND content <> 'rewritten'`, contact).Scan(&system)
	}); err != nil || system == 0 {
		t.Errorf("system entries left unchanged: %d (%v), want at least 1", system, err)
	}
}

// TestSchema_OAuthServerDownRefused: the Down of migration 20261127120000 would recreate the
// oauth_server policies and oauth_login_users, which any session opens with SET app.oauth =
// 'server' (every company's clients, tokens and password hashes). A rollback must not reopen
// them: the Down is refused, and in its transaction nothing changes.
func TestSchema_OAuthServerDownRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := open(t, env.OwnerURL)
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.ApplyVersion(context.Background(), 20261127120000, false)
	if err == nil || !strings.Contains(err.Error(), "irreversible") {
		t.Fatalf("down of 20261127120000: %v, want it refused as irreversible", err)
	}
	var policies, functions int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM pg_policies WHERE policyname = 'oauth_server'),
		(SELECT count(*) FROM pg_proc WHERE proname LIKE 'oauth_server_%')`).Scan(&policies, &functions); err != nil {
		t.Fatal(err)
	}
	if policies != 0 || functions == 0 {
		t.Errorf("after the refused down: %d oauth_server policies (want 0), %d oauth_server_* functions (want them kept)", policies, functions)
	}
}
