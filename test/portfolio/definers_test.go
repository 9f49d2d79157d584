package portfolio

import (
	"testing"
	"time"
)

// TestPortfolio_DefinersOwnedAndLimited: insurer_ensure and portfolio_analyze run as roles that
// are no superuser, and portfolio_analyze analyses at most once every 30 seconds whoever calls
// (issue 20, item 10: both were owned by the migrating superuser, and the app role could call
// ANALYZE of the three tables back to back). Not parallel: a commit of the package's other tests
// may call portfolio_analyze.
func TestPortfolio_DefinersOwnedAndLimited(t *testing.T) {
	env := setup(t)
	for fn, want := range map[string]string{"insurer_ensure(text)": "brokerdesk_operator", "portfolio_analyze()": "brokerdesk_maintainer"} {
		var owner string
		var super, definer bool
		if err := env.OwnerDB.QueryRow(`SELECT r.rolname, r.rolsuper, p.prosecdef FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
			WHERE p.oid = $1::regprocedure`, fn).Scan(&owner, &super, &definer); err != nil {
			t.Fatal(err)
		}
		if owner != want || super || !definer {
			t.Errorf("%s: owner %s (superuser %v, definer %v), want %s", fn, owner, super, definer, want)
		}
	}
	// ANALYZE needs the tables' owner: the maintainer owns them, and is no superuser.
	var tables int
	if err := env.OwnerDB.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public'
		AND tablename IN ('contacts', 'contracts', 'external_refs') AND tableowner = 'brokerdesk_maintainer'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 3 {
		t.Errorf("brokerdesk_maintainer owns %d of the three tables", tables)
	}

	if _, err := env.OwnerDB.Exec(`UPDATE job_runs SET last_run_at = '-infinity' WHERE id = 'portfolio_analyze'`); err != nil {
		t.Fatal(err)
	}
	analyzed := func() time.Time {
		t.Helper()
		var at time.Time
		if err := env.OwnerDB.QueryRow(`SELECT coalesce(last_analyze, 'epoch') FROM pg_stat_user_tables WHERE relname = 'contracts'`).
			Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	call := func() bool {
		t.Helper()
		var ran bool
		if err := env.AppDB.QueryRow(`SELECT portfolio_analyze()`).Scan(&ran); err != nil {
			t.Fatalf("as the app role: %v", err)
		}
		return ran
	}
	before := analyzed()
	if !call() {
		t.Fatal("the first call did not analyse")
	}
	deadline := time.Now().Add(10 * time.Second) // the statistics collector reports with a delay
	for !analyzed().After(before) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	first := analyzed()
	if !first.After(before) {
		t.Fatalf("contracts last analysed %s, not after %s", first, before)
	}
	for range 3 {
		if call() {
			t.Error("a call within 30 seconds of the last analysed again")
		}
	}
	time.Sleep(time.Second)
	if got := analyzed(); !got.Equal(first) {
		t.Errorf("analysed again at %s", got)
	}
}
