package schema

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// portalPrivileges is everything the portal role (a customer's signed-in request, issue 23)
// may do to a table, and why. A grant not listed here, or a listed one gone, fails
// TestSchema_PortalPrivileges: the role keeps to what a customer reads and the portal's own
// writes, so a bug in the portal's code reaches no table a customer has no business with (keys,
// users, webhooks, leads, tasks, e-mail). Column grants are written "SELECT(col)".
var portalPrivileges = map[string]string{
	// what a customer reads: its contact with phones, contracts (with the insurer catalog),
	// released documents (policy portal_released_documents) and its signature requests
	"public.contacts":           "SELECT",
	"public.contact_phones":     "SELECT",
	"public.contracts":          "SELECT",
	"public.insurers":           "SELECT",
	"public.documents":          "SELECT",
	"public.signature_requests": "SELECT",
	"public.signature_signers":  "SELECT",
	// the brokerage's name and status for the branding, none of its settings
	"public.companies": "SELECT(address),SELECT(id),SELECT(links),SELECT(name),SELECT(status)",
	// the portal's own rows: the access (last sign-in, TOTP), the session (touched, ended), the
	// change requests (created, withdrawn)
	"public.portal_accesses":        "SELECT,UPDATE",
	"public.portal_sessions":        "DELETE,SELECT,UPDATE",
	"public.portal_change_requests": "INSERT,SELECT,UPDATE",
	// the events of its own contact (policy portal_own_events), numbered at commit
	"public.events":         "INSERT,SELECT,UPDATE",
	"public.event_counters": "INSERT,SELECT,UPDATE",
}

// TestSchema_PortalPrivileges lists the portal role's table and column grants and compares them
// with portalPrivileges.
func TestSchema_PortalPrivileges(t *testing.T) {
	t.Parallel()
	checkGrants(t, migrations.RolePortal, "portalPrivileges", portalPrivileges)
}

// TestSchema_PortalRole: the portal role cannot log in, is no superuser, does not bypass
// row-level security, inherits no other role, and owns nothing (an owner's table ignores its
// policies unless forced, and an owner may grant itself anything). Catches a role created with
// LOGIN or BYPASSRLS, or a table created while the role was set.
func TestSchema_PortalRole(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := open(t, env.OwnerURL)
	var login, super, bypass, createRole, createDB bool
	if err := db.QueryRow(`SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = $1`,
		migrations.RolePortal).Scan(&login, &super, &bypass, &createRole, &createDB); err != nil {
		t.Fatalf("role %s: %v", migrations.RolePortal, err)
	}
	if login || super || bypass || createRole || createDB {
		t.Errorf("%s: login %v superuser %v bypassrls %v createrole %v createdb %v, want none", migrations.RolePortal,
			login, super, bypass, createRole, createDB)
	}
	var owned, memberOf int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM pg_class WHERE relowner = $1::regrole)
		+ (SELECT count(*) FROM pg_proc WHERE proowner = $1::regrole)
		+ (SELECT count(*) FROM pg_namespace WHERE nspowner = $1::regrole)
		+ (SELECT count(*) FROM pg_type WHERE typowner = $1::regrole)`, migrations.RolePortal).Scan(&owned); err != nil {
		t.Fatal(err)
	}
	if owned != 0 {
		t.Errorf("%s owns %d objects, want none", migrations.RolePortal, owned)
	}
	if err := db.QueryRow(`SELECT count(*) FROM pg_auth_members WHERE member = $1::regrole`, migrations.RolePortal).
		Scan(&memberOf); err != nil {
		t.Fatal(err)
	}
	if memberOf != 0 {
		t.Errorf("%s is a member of %d roles, want none (it would inherit their grants)", migrations.RolePortal, memberOf)
	}
	// Every table the role reads is under forced row-level security: a table without it would
	// show the role every company's rows.
	for rel := range portalPrivileges {
		if rel == "public.insurers" { // the platform's catalog, no company data
			continue
		}
		var rls, forced bool
		if err := db.QueryRow(`SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = $1::regclass`, rel).
			Scan(&rls, &forced); err != nil {
			t.Fatal(err)
		}
		if !rls || !forced {
			t.Errorf("%s: row level security %v, forced %v; the portal role reads it", rel, rls, forced)
		}
	}
}
