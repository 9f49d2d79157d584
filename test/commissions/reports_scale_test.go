package commissions

import (
	"fmt"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/commissions"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The rules the reports follow to stay fast at 2,000,000 entries (docs/decisions/commissions.md
// "Reports at scale"): a restricted credential's entries are read from its visible owners'
// contacts, and the liability report reads no entry booked before the longest period.

func TestReports_CommissionsDelegatedOwners(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	a, b, c := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	co.Delegate(t, b.ID, a.ID, nil)
	keyA := co.UserKey(t, a)
	ins := rpInsurer(t, env, co.Secret, "5501")
	kA := rpMustContract(t, env, co.Secret, rpContact(t, env, co, &a.ID), ins, "011", nil)
	kB := rpMustContract(t, env, co.Secret, rpContact(t, env, co, &b.ID), ins, "130", nil)
	kC := rpMustContract(t, env, co.Secret, rpContact(t, env, co, &c.ID), ins, "041", nil)
	kN := rpMustContract(t, env, co.Secret, rpContact(t, env, co, nil), ins, "021", nil)
	rpSeed(t, env, co,
		rpEntry{Contract: &kA, Insurer: ins, Type: "commission", Amount: "100.00", Booked: "2025-01-10"},
		rpEntry{Contract: &kB, Type: "commission", Amount: "20.00", Booked: "2025-02-10"}, // insurer from its contract
		rpEntry{Contract: &kB, Insurer: ins, Type: "cancellation", Amount: "-5.00", Booked: "2025-03-10"},
		rpEntry{Contract: &kC, Insurer: ins, Type: "commission", Amount: "3000.00", Booked: "2025-01-10"},
		rpEntry{Contract: &kN, Insurer: ins, Type: "commission", Amount: "400.00", Booked: "2025-01-10"},
		rpEntry{Insurer: ins, Type: "premium", Amount: "7.00", Booked: "2025-02-01"}, // unmatched
		rpEntry{Type: "other", Amount: "0.50", Booked: "2025-03-01"},                 // unmatched, no insurer
	)

	t.Run("commissions: own, delegated and unmatched entries, every grouping", func(t *testing.T) {
		// Catches: the owners named from the agent's own user only (B's delegated entries
		// lost), unmatched entries dropped or counted twice by the split into two branches,
		// C's or nobody's entries let through.
		for _, groupBy := range []string{"month", "insurer", "type", "contract_type", "owner"} {
			rep := rpCommissions(t, env, keyA, rpQ("from", rpFrom, "to", rpTo, "groupBy", groupBy))
			var n int64
			for _, r := range rep.Data {
				n += r.Entries
			}
			if rep.Total != "122.50" || n != 5 {
				t.Errorf("by %s: total %s of %d entries, want 122.50 of 5: %+v", groupBy, rep.Total, n, rep.Data)
			}
			rpAssertSum(t, rep)
		}
		rpCheck(t, rpCommissions(t, env, keyA, rpQ("from", rpFrom, "to", rpTo, "groupBy", "insurer")), "122.50",
			[]rpWant{{ins, "122.00", 4}, {"", "0.50", 1}})
		if admin := rpCommissions(t, env, co.Secret, rpQ("from", rpFrom, "to", rpTo)); admin.Total != "3522.50" {
			t.Errorf("admin %+v", admin)
		}
	})

	t.Run("liability: own and delegated contracts", func(t *testing.T) {
		// Catches: the owners named from the agent's own user only (kB lost), another agent's
		// contract (kC) or nobody's (kN) listed.
		rep := rpLiability(t, env, keyA, "2025-03-31")
		// kA: 011, 60 months, 2 passed: 100 × 58/60 = 96.67; kB: 130, 12 months:
		// (20 × 11 − 5 × 12) / 12 = 13.33.
		if len(rep.Data) != 2 || rep.of(kA.ID) == nil || rep.of(kA.ID).OpenLiability != "96.67" ||
			rep.of(kB.ID) == nil || rep.of(kB.ID).OpenLiability != "13.33" || rep.Total != "110.00" {
			t.Errorf("agent %+v", rep)
		}
		if admin := rpLiability(t, env, co.Secret, "2025-03-31"); len(admin.Data) != 4 {
			t.Errorf("admin %+v", admin)
		}
	})
}

func TestReports_CancellationLiabilityLongPeriods(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := co.Secret
	ins := rpInsurer(t, env, key, "5501")
	c := rpContact(t, env, co, nil)
	long := rpMustContract(t, env, key, c, ins, "041", nil)
	life := rpMustContract(t, env, key, c, ins, "011", nil)
	rpRule(t, env, co, ins, "041", 120)
	rpSeed(t, env, co,
		rpEntry{Contract: &long, Insurer: ins, Type: "commission", Amount: "1200.00", Booked: "2015-01-15"},
		rpEntry{Contract: &life, Insurer: ins, Type: "commission", Amount: "600.00", Booked: "2020-01-31"})

	t.Run("a rule longer than the defaults reaches back as far", func(t *testing.T) {
		// Catches: the booking-date bound taken from the default periods alone (60 months):
		// the entry of 2015 under its 120-month rule would be left out. 113 months passed,
		// 1200 × 7/120 = 70.00.
		r := rpLiability(t, env, key, "2024-06-30").of(long.ID)
		if r == nil || r.OpenLiability != "70.00" || r.LiabilityEndsOn != "2025-01-15" {
			t.Errorf("long %+v", r)
		}
	})

	t.Run("the last month of a default period", func(t *testing.T) {
		// Catches: a bound of exactly 60 months before asOf cutting into the period's last
		// month (31 January + 60 months is 31 January 2025: on the 30th one month remains).
		for _, c := range []struct{ asOf, want string }{{"2024-12-31", "10.00"}, {"2025-01-30", "10.00"}, {"2025-01-31", ""}} {
			r := rpLiability(t, env, key, c.asOf).of(life.ID)
			if (c.want == "") != (r == nil) || (r != nil && (r.OpenLiability != c.want || r.LiabilityEndsOn != "2025-01-31")) {
				t.Errorf("asOf %s: %+v, want %q", c.asOf, r, c.want)
			}
		}
	})
}

func TestReports_LiabilityDefaultsWithinBound(t *testing.T) {
	// Catches: a default period raised above MaxDefaultLiabilityMonths, which bounds the
	// booking dates the report reads (entries still liable would be left out).
	for i := range 1000 {
		typ := fmt.Sprintf("%03d", i)
		if m := commissions.DefaultLiabilityMonths(typ); m > commissions.MaxDefaultLiabilityMonths {
			t.Errorf("%s: %d months > %d", typ, m, commissions.MaxDefaultLiabilityMonths)
		}
	}
}
