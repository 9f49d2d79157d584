package schema

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// pinnedSettings are the only settings a policy may read: the transaction-local ones the pinned
// pipeline sets (tenancy: the credential lookup, Driver.BeginTx). Any session may SET any custom
// setting without a privilege, so a policy reading another one is opened by whoever sets it; the
// oauth_server policies read app.oauth and admitted every company's OAuth rows (issue 20 item 1).
var pinnedSettings = []string{"app.company_id", "app.user_id", "app.visibility"}

var (
	settingRead = regexp.MustCompile(`current_setting\s*\(\s*'([^']*)'`)
	settingAny  = regexp.MustCompile(`current_setting\s*\(`)
)

// TestSchema_PoliciesReadOnlyPinnedSettings lists every policy with the settings its conditions
// (USING and WITH CHECK) read, directly or through the functions they call (the functions a
// policy depends on, then every function named in their bodies, transitively), and fails on a
// setting other than pinnedSettings, or on current_setting with an argument that is not a
// literal (which could read anything).
func TestSchema_PoliciesReadOnlyPinnedSettings(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	db := open(t, env.OwnerURL)

	// every function of the application's schemas, by oid, name and body
	type fn struct {
		src  string
		call *regexp.Regexp // a call of the function by name
	}
	funcs := map[uint32]fn{}
	rows, err := db.Query(`SELECT p.oid, p.proname, coalesce(p.prosrc, '') FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var oid uint32
		var name string
		var f fn
		if err := rows.Scan(&oid, &name, &f.src); err != nil {
			t.Fatal(err)
		}
		f.call = regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*\(`)
		funcs[oid] = f
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	// calls reports the functions whose names appear as calls in src
	calls := func(src string) []uint32 {
		var out []uint32
		for oid, f := range funcs {
			if f.call.MatchString(src) {
				out = append(out, oid)
			}
		}
		return out
	}

	type policy struct {
		name, cond string
		deps       []uint32
	}
	var policies []*policy
	byOID := map[uint32]*policy{}
	rows, err = db.Query(`SELECT p.oid, n.nspname || '.' || c.relname || ' ' || p.polname,
		coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '')
		FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var oid uint32
		p := &policy{}
		if err := rows.Scan(&oid, &p.name, &p.cond); err != nil {
			t.Fatal(err)
		}
		policies = append(policies, p)
		byOID[oid] = p
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	rows, err = db.Query(`SELECT d.objid, d.refobjid FROM pg_depend d
		WHERE d.classid = 'pg_policy'::regclass AND d.refclassid = 'pg_proc'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pol, proc uint32
		if err := rows.Scan(&pol, &proc); err != nil {
			t.Fatal(err)
		}
		if p := byOID[pol]; p != nil {
			p.deps = append(p.deps, proc)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(policies) < 50 {
		t.Fatalf("found %d policies, want the schema's (at least 50)", len(policies))
	}

	allowed := map[string]bool{}
	for _, s := range pinnedSettings {
		allowed[s] = true
	}
	readers := map[string][]string{} // setting -> policies reading it (the list this test keeps)
	for _, p := range policies {
		// the condition and every function reachable from it
		texts := []string{p.cond}
		seen := map[uint32]bool{}
		queue := slices.Concat(p.deps, calls(p.cond))
		for len(queue) > 0 {
			oid := queue[0]
			queue = queue[1:]
			if seen[oid] {
				continue
			}
			seen[oid] = true
			f, ok := funcs[oid]
			if !ok {
				continue // a built-in (pg_catalog): reads no custom setting
			}
			texts = append(texts, f.src)
			queue = append(queue, calls(f.src)...)
		}
		read := map[string]bool{}
		for _, text := range texts {
			if n := len(settingAny.FindAllString(text, -1)); n != len(settingRead.FindAllString(text, -1)) {
				t.Errorf("policy %s reads a setting whose name is not a literal: %q", p.name, text)
			}
			for _, m := range settingRead.FindAllStringSubmatch(text, -1) {
				read[m[1]] = true
			}
		}
		for s := range read {
			readers[s] = append(readers[s], p.name)
			if !allowed[s] {
				t.Errorf("policy %s reads the setting %s, which any session may SET: only %v, set by the pinned pipeline, may open a policy",
					p.name, s, pinnedSettings)
			}
		}
	}
	for _, s := range slices.Sorted(maps.Keys(readers)) {
		t.Logf("%s: read by %d policies (%s, …)", s, len(readers[s]), strings.Join(readers[s][:min(3, len(readers[s]))], "; "))
	}
	// the walk must reach the settings through the functions the policies call: every
	// company_isolation policy reads app.company_id only through app_current_company()
	for _, s := range []string{"app.company_id", "app.visibility"} {
		if len(readers[s]) == 0 {
			t.Errorf("no policy reads %s: the walk through the policies' functions is broken", s)
		}
	}
}
