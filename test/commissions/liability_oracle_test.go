package commissions

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/commissions"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestReports_CancellationLiabilityOracle compares the report with the rule as
// docs/decisions/commissions.md states it, computed here entry by entry in integer cents, on
// random contracts, entries and rules, for the admin and an agent, on month ends and leap days.
// Catches what the statement's shortcuts could break: a contract's open liability taken from
// another period's sum (each period a contract can have is summed before the contract is
// read), a rule period missing from those sums, a contract dropped before its contract is read
// although its own period's sum is positive, elapsed months read for the wrong day of the
// window (the per-day table, its first and last day), liabilityEndsOn from the last positive
// booking, an entry left out by the bound, unmatched entries counted, the agent's rows.
func TestReports_CancellationLiabilityOracle(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 24))
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	keyA := co.UserKey(t, agent)
	ins := []string{rpInsurer(t, env, co.Secret, "5501"), rpInsurer(t, env, co.Secret, "4711")}
	types := []string{"010", "011", "021", "041", "130"}
	contacts := []string{rpContact(t, env, co, &agent.ID), rpContact(t, env, co, nil), rpContact(t, env, co, &agent.ID)}
	agentContact := map[string]bool{contacts[0]: true, contacts[2]: true}

	type rule struct {
		insurer, typ string
		months       int
	}
	var rules []rule
	seen := map[string]bool{}
	for i := range 1 + rnd.IntN(4) {
		r := rule{months: []int{0, 6, 18, 24, 36, 72, 120}[rnd.IntN(7)]}
		if i == 0 { // a period that is neither default: the report must sum for it too
			r.months = []int{6, 18, 24, 36, 72, 120}[rnd.IntN(6)]
		}
		if rnd.IntN(2) == 0 {
			r.insurer = ins[rnd.IntN(2)]
		}
		switch rnd.IntN(3) {
		case 1:
			r.typ = types[rnd.IntN(len(types))]
		case 2:
			r.typ = types[rnd.IntN(len(types))][:2] + "0"
		}
		if k := r.insurer + "/" + r.typ; !seen[k] {
			seen[k] = true
			rules = append(rules, r)
			rpRule(t, env, co, r.insurer, r.typ, r.months)
		}
	}
	// months is the rule lookup of the decisions file: insurer and type, then insurer, then
	// type, then company-wide; the exact code before its group; else the default.
	months := func(c rpContract, typ string) int {
		best, rank := commissions.DefaultLiabilityMonths(typ), 99
		for _, r := range rules {
			if r.insurer != "" && r.insurer != c.Insurer {
				continue
			}
			if r.typ != "" && r.typ != typ && r.typ != typ[:2]+"0" {
				continue
			}
			k := 0
			if r.insurer == "" {
				k += 4
			}
			if r.typ == "" {
				k += 2
			} else if r.typ != typ {
				k++
			}
			if k < rank {
				best, rank = r.months, k
			}
		}
		return best
	}

	day := func() time.Time {
		d := time.Date(2015+rnd.IntN(12), time.Month(1+rnd.IntN(12)), 1, 0, 0, 0, 0, time.UTC)
		if rnd.IntN(3) == 0 { // a month's last days, where month addition clamps
			return d.AddDate(0, 1, -1-rnd.IntN(3))
		}
		return d.AddDate(0, 0, rnd.IntN(28))
	}
	type contract struct {
		c       rpContract
		typ     string
		entries []rpEntry
	}
	var (
		all     []contract
		entries []rpEntry
	)
	for range 14 {
		typ := types[rnd.IntN(len(types))]
		k := contract{c: rpMustContract(t, env, co.Secret, contacts[rnd.IntN(len(contacts))], ins[rnd.IntN(2)], typ, nil), typ: typ}
		for range rnd.IntN(6) {
			e := rpEntry{Contract: &k.c, Insurer: k.c.Insurer, Booked: day().Format(time.DateOnly),
				Type: []string{"commission", "commission", "cancellation", "correction", "premium", "other"}[rnd.IntN(6)]}
			cents := 1 + rnd.IntN(300000)
			if e.Type == "cancellation" || (e.Type == "correction" && rnd.IntN(2) == 0) {
				cents = -cents
			}
			e.Amount = fmt.Sprintf("%.2f", float64(cents)/100)
			k.entries = append(k.entries, e)
		}
		entries = append(entries, k.entries...)
		all = append(all, k)
	}
	entries = append(entries, rpEntry{Insurer: ins[0], Type: "commission", Amount: "777.00", Booked: "2024-06-30"})
	rpSeed(t, env, co, entries...)

	// addMonths is PostgreSQL's date + n months: the same day, or the month's last.
	addMonths := func(d time.Time, n int) time.Time {
		first := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, n, 0)
		last := first.AddDate(0, 1, -1).Day()
		return first.AddDate(0, 0, min(d.Day(), last)-1)
	}
	cents := func(s string) int64 {
		n, err := strconv.ParseInt(strings.Replace(s, ".", "", 1), 10, 64)
		if err != nil {
			t.Fatalf("amount %q: %v", s, err)
		}
		return n
	}
	money := func(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }
	expect := func(asOf time.Time, agentOnly bool) rpLiabilityReport {
		want := rpLiabilityReport{Data: []rpLiabilityRow{}}
		var total int64
		for _, k := range all {
			if agentOnly && !agentContact[k.c.Contact] {
				continue
			}
			l := months(k.c, k.typ)
			var (
				sum  int64 // cents × remaining months
				ends time.Time
			)
			for _, e := range k.entries {
				booked, _ := time.Parse(time.DateOnly, e.Booked)
				if booked.After(asOf) || (e.Type != "commission" && e.Type != "cancellation" && e.Type != "correction") {
					continue
				}
				elapsed := 0
				for !addMonths(booked, elapsed+1).After(asOf) {
					elapsed++
				}
				sum += cents(e.Amount) * int64(max(l-elapsed, 0))
				if cents(e.Amount) > 0 && addMonths(booked, l).After(ends) {
					ends = addMonths(booked, l)
				}
			}
			if l == 0 || sum <= 0 {
				continue
			}
			open := (2*sum + int64(l)) / (2 * int64(l)) // half away from zero, sum > 0
			if open <= 0 {
				continue
			}
			total += open
			p := k.c.Policy
			want.Data = append(want.Data, rpLiabilityRow{ContractID: k.c.ID, ContactID: k.c.Contact, PolicyNumber: &p,
				OpenLiability: money(open), LiabilityEndsOn: ends.Format(time.DateOnly)})
		}
		slices.SortFunc(want.Data, func(a, b rpLiabilityRow) int {
			if d := cents(b.OpenLiability) - cents(a.OpenLiability); d != 0 {
				return int(d / max(d, -d))
			}
			return strings.Compare(a.ContractID, b.ContractID)
		})
		want.Total = money(total)
		return want
	}
	for _, asOf := range []string{"2016-02-29", "2019-12-31", "2021-01-31", "2024-02-29", "2024-03-30", "2025-06-30", "2026-12-31", "2027-02-28"} {
		for _, who := range []struct {
			name, key string
			agent     bool
		}{{"admin", co.Secret, false}, {"agent", keyA, true}} {
			at, _ := time.Parse(time.DateOnly, asOf)
			want, got := expect(at, who.agent), rpLiability(t, env, who.key, asOf)
			if got.Total != want.Total || len(got.Data) != len(want.Data) {
				t.Errorf("%s asOf %s: %d rows total %s, want %d rows total %s (rules %+v)", who.name, asOf,
					len(got.Data), got.Total, len(want.Data), want.Total, rules)
				continue
			}
			for i, w := range want.Data {
				g := got.Data[i]
				if g.ContractID != w.ContractID || g.ContactID != w.ContactID || g.OpenLiability != w.OpenLiability ||
					g.LiabilityEndsOn != w.LiabilityEndsOn || g.PolicyNumber == nil || *g.PolicyNumber != *w.PolicyNumber {
					t.Errorf("%s asOf %s row %d: %+v, want %+v (rules %+v)", who.name, asOf, i, g, w, rules)
				}
			}
		}
	}
}
