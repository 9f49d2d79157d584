package commissions

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// rpFixture is one company's commissions: agents A and B, contacts of A, of B and of nobody,
// four contracts (life 011 and liability 041 of A's contact, the 041 owned by B; health 021 of
// B's; household 130 of nobody's contact), entries of every type in the window 2025-01-01 to
// 2025-03-31 including its first and last day, two unmatched ones, and two just outside.
type rpFixture struct {
	co             *apitest.Company
	keyA, keyAdmin string
	agentA, agentB string
	ins1, ins2     string
}

func newRPFixture(t *testing.T, env *apitest.Env) rpFixture {
	t.Helper()
	co := env.NewCompany(t)
	a, b, admin := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "admin")
	f := rpFixture{co: co, keyA: co.UserKey(t, a), keyAdmin: co.UserKey(t, admin), agentA: a.ID.String(), agentB: b.ID.String(),
		ins1: rpInsurer(t, env, co.Secret, "5501"), ins2: rpInsurer(t, env, co.Secret, "4711")}
	cA, cB, cN := rpContact(t, env, co, &a.ID), rpContact(t, env, co, &b.ID), rpContact(t, env, co, nil)
	k1 := rpMustContract(t, env, co.Secret, cA, f.ins1, "011", nil)
	k2 := rpMustContract(t, env, co.Secret, cA, f.ins2, "041", &b.ID)
	k3 := rpMustContract(t, env, co.Secret, cB, f.ins1, "021", nil)
	k4 := rpMustContract(t, env, co.Secret, cN, f.ins2, "130", nil)
	rpSeed(t, env, co,
		rpEntry{Contract: &k1, Insurer: f.ins1, Type: "commission", Amount: "1000.00", Booked: "2025-01-01"},   // e1
		rpEntry{Contract: &k1, Insurer: f.ins1, Type: "cancellation", Amount: "-250.50", Booked: "2025-02-15"}, // e2
		rpEntry{Contract: &k2, Insurer: f.ins2, Type: "commission", Amount: "120.00", Booked: "2025-01-31"},    // e3
		rpEntry{Contract: &k3, Insurer: f.ins1, Type: "commission", Amount: "333.33", Booked: "2025-03-31"},    // e4
		rpEntry{Contract: &k4, Type: "premium", Amount: "10.10", Booked: "2025-02-01"},                         // e5: insurer from its contract
		rpEntry{Insurer: f.ins1, Type: "commission", Amount: "77.77", Booked: "2025-03-01"},                    // e6 unmatched
		rpEntry{Type: "correction", Amount: "-7.07", Booked: "2025-03-02"},                                     // e7 unmatched, no insurer
		rpEntry{Contract: &k1, Insurer: f.ins1, Type: "commission", Amount: "999.99", Booked: "2024-12-31"},    // e8 outside
		rpEntry{Contract: &k2, Insurer: f.ins2, Type: "commission", Amount: "555.55", Booked: "2025-04-01"},    // e9 outside
	)
	return f
}

// rpWant is a row as a test expects it.
type rpWant struct {
	key, amount string
	entries     int64
}

func rpCheck(t *testing.T, b rpReport, total string, want []rpWant) {
	t.Helper()
	if b.Total != total || len(b.Data) != len(want) {
		t.Fatalf("total %s rows %+v, want %s and %d rows", b.Total, b.Data, total, len(want))
	}
	for i, w := range want {
		r := b.Data[i]
		if k := b.keys()[i]; k != w.key || r.Amount != w.amount || r.Entries != w.entries {
			t.Errorf("row %d = %q %+v, want %+v", i, k, r, w)
		}
	}
	rpAssertSum(t, b)
}

// rpAssertSum checks the report's total is the exact sum of its rows.
func rpAssertSum(t *testing.T, b rpReport) {
	t.Helper()
	var sum decimal.Decimal
	for _, r := range b.Data {
		sum = sum.Add(decimal.RequireFromString(r.Amount))
	}
	if sum.StringFixed(2) != b.Total {
		t.Errorf("rows add up to %s, total %s", sum.StringFixed(2), b.Total)
	}
}

const rpFrom, rpTo = "2025-01-01", "2025-03-31"

func TestReports_Commissions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newRPFixture(t, env)
	key := f.co.Secret

	t.Run("by month: both window days included, the days outside not", func(t *testing.T) {
		// Catches: an exclusive from or to (e1 or e4 lost), a window by created_at instead of
		// booked_on, a float sum, months out of calendar order.
		b := rpCommissions(t, env, key, rpQ("from", rpFrom, "to", rpTo))
		rpCheck(t, b, "1283.63", []rpWant{{"2025-01", "1120.00", 2}, {"2025-02", "-240.40", 2}, {"2025-03", "404.03", 3}})
		if l := b.Data[2].Label; l != "März 2025" {
			t.Errorf("label %q", l)
		}
		if d := rpCommissions(t, env, key, rpQ("from", rpFrom, "to", rpTo, "groupBy", "month")); d.Total != b.Total {
			t.Errorf("month is not the default: %+v", d)
		}
	})

	t.Run("one day windows", func(t *testing.T) {
		b := rpCommissions(t, env, key, rpQ("from", "2024-12-31", "to", "2024-12-31"))
		rpCheck(t, b, "999.99", []rpWant{{"2024-12", "999.99", 1}})
		empty := rpCommissions(t, env, key, rpQ("from", "2025-06-01", "to", "2025-06-30", "groupBy", "owner"))
		if len(empty.Data) != 0 || empty.Total != "0.00" {
			t.Errorf("empty window %+v", empty)
		}
	})

	t.Run("by insurer: the entry's, else its contract's, null for none", func(t *testing.T) {
		// Catches: e5 (no insurer of its own) under null instead of its contract's insurer,
		// e7 dropped instead of grouped under null.
		b := rpCommissions(t, env, key, rpQ("from", rpFrom, "to", rpTo, "groupBy", "insurer"))
		rpCheck(t, b, "1283.63", []rpWant{{f.ins1, "1160.60", 4}, {f.ins2, "130.10", 2}, {"", "-7.07", 1}})
		if b.Data[0].Label == "" || b.Data[0].Label == f.ins1 || b.row(t, "").Label != "Ohne Versicherer" {
			t.Errorf("labels %+v", b.Data)
		}
	})

	t.Run("by type: negative groups keep their sign", func(t *testing.T) {
		// Catches: Storno amounts summed as absolute values, a type missing.
		b := rpCommissions(t, env, key, rpQ("from", rpFrom, "to", rpTo, "groupBy", "type"))
		rpCheck(t, b, "1283.63", []rpWant{{"commission", "1531.10", 4}, {"premium", "10.10", 1},
			{"correction", "-7.07", 1}, {"cancellation", "-250.50", 1}})
		if b.row(t, "cancellation").Label != "Storno" || b.row(t, "commission").Label != "Provision" {
			t.Errorf("labels %+v", b.Data)
		}
	})

	t.Run("by contract type: unmatched entries under null, no contract", func(t *testing.T) {
		// Catches: an inner join to contracts (e6, e7 lost: the total would not be the window's).
		b := rpCommissions(t, env, key, rpQ("from", rpFrom, "to", rpTo, "groupBy", "contract_type"))
		rpCheck(t, b, "1283.63", []rpWant{{"011", "749.50", 2}, {"021", "333.33", 1}, {"041", "120.00", 1},
			{"", "70.70", 2}, {"130", "10.10", 1}})
		if l := b.row(t, "").Label; l != "Ohne Vertrag" {
			t.Errorf("null label %q", l)
		}
		if l := b.row(t, "011").Label; l != "Einzel-Lebensversicherung mit Überschussbeteiligung" {
			t.Errorf("011 label %q", l)
		}
	})

	t.Run("by owner: the contract's, else the contact's, null for no contract or nobody", func(t *testing.T) {
		// Catches: the contact's owner only (e3 would go to A), e5 of nobody's contact lost.
		b := rpCommissions(t, env, key, rpQ("from", rpFrom, "to", rpTo, "groupBy", "owner"))
		rpCheck(t, b, "1283.63", []rpWant{{f.agentA, "749.50", 2}, {f.agentB, "453.33", 2}, {"", "80.80", 3}})
		if b.row(t, f.agentA).Label != "Test agent" || b.row(t, "").Label != "Ohne Vertrag oder Betreuer" {
			t.Errorf("labels %+v", b.Data)
		}
	})

	t.Run("English labels", func(t *testing.T) {
		for _, c := range []struct{ groupBy, key, label string }{
			{"month", "2025-01", "January 2025"}, {"type", "cancellation", "Cancellation"},
			{"contract_type", "", "No contract"}, {"contract_type", "041", "Personal liability insurance"},
			{"insurer", "", "No insurer"}, {"owner", "", "No contract or owner"},
		} {
			r := env.Do(t, apitest.Request{Path: "/reports/commissions?" + rpQ("from", rpFrom, "to", rpTo, "groupBy", c.groupBy).Encode(),
				Key: key, Header: map[string]string{"Accept-Language": "en"}})
			var b rpReport
			r.Decode(t, &b)
			if r.Status != 200 || r.Header.Get("Content-Language") != "en" || b.row(t, c.key).Label != c.label {
				t.Errorf("%s %q: %d %s %+v", c.groupBy, c.key, r.Status, r.Header.Get("Content-Language"), b.Data)
			}
		}
	})

	t.Run("an agent's report covers its own contacts' entries and the unmatched ones", func(t *testing.T) {
		// Catches: the report read past row-level security (A would see e4 of B's contact and
		// e5 of nobody's), or unmatched entries hidden from agents.
		b := rpCommissions(t, env, f.keyA, rpQ("from", rpFrom, "to", rpTo, "groupBy", "owner"))
		rpCheck(t, b, "940.20", []rpWant{{f.agentA, "749.50", 2}, {f.agentB, "120.00", 1}, {"", "70.70", 2}})
		admin := rpCommissions(t, env, f.keyAdmin, rpQ("from", rpFrom, "to", rpTo))
		if admin.Total != "1283.63" {
			t.Errorf("admin user %+v", admin)
		}
	})

	t.Run("another company's report has none of it", func(t *testing.T) {
		other := env.NewCompany(t)
		b := rpCommissions(t, env, other.Secret, rpQ("from", "2000-01-01", "to", "2099-12-31", "groupBy", "insurer"))
		if len(b.Data) != 0 || b.Total != "0.00" {
			t.Errorf("other company %+v", b)
		}
	})
}

// TestReports_CommissionsTotalProperty: random statements (amounts of either sign up to
// ±99,999.99, many entries, a fifth unmatched, random types and days) and random windows; for
// every grouping the total is the sum of the rows to the cent and the sum of the entries in
// the window computed here, and the rows count every entry once.
func TestReports_CommissionsTotalProperty(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	a := env.NewUser(t, co, "agent")
	ins := []string{rpInsurer(t, env, co.Secret, "5501"), rpInsurer(t, env, co.Secret, "4711")}
	var contracts []rpContract
	for i, typ := range []string{"011", "041", "130", "021", "070"} {
		owner := &a.ID
		if i%2 == 1 {
			owner = nil
		}
		contracts = append(contracts, rpMustContract(t, env, co.Secret, rpContact(t, env, co, owner), ins[i%2], typ, nil))
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	types := []string{"commission", "cancellation", "correction", "premium", "other"}
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	type gen struct {
		amount decimal.Decimal
		day    time.Time
	}
	var all []gen
	for s := 0; s < 4; s++ {
		var es []rpEntry
		for i := 0; i < 150+rnd.IntN(150); i++ {
			cents := rnd.Int64N(19_999_999) - 9_999_999
			e := rpEntry{Type: types[rnd.IntN(len(types))], Amount: decimal.New(cents, -2).StringFixed(2),
				Booked: day0.AddDate(0, 0, rnd.IntN(731)).Format("2006-01-02")}
			if rnd.IntN(5) > 0 {
				c := contracts[rnd.IntN(len(contracts))]
				e.Contract, e.Insurer = &c, c.Insurer
			}
			es = append(es, e)
			d, _ := time.Parse("2006-01-02", e.Booked)
			all = append(all, gen{decimal.New(cents, -2), d})
		}
		rpSeed(t, env, co, es...)
	}
	for w := 0; w < 6; w++ {
		from := day0.AddDate(0, 0, rnd.IntN(731))
		to := from.AddDate(0, 0, rnd.IntN(400))
		if w == 0 {
			from, to = day0, day0.AddDate(2, 0, 0)
		}
		var want decimal.Decimal
		var n int64
		for _, g := range all {
			if !g.day.Before(from) && !g.day.After(to) {
				want, n = want.Add(g.amount), n+1
			}
		}
		for _, groupBy := range []string{"month", "insurer", "type", "contract_type", "owner"} {
			t.Run(fmt.Sprintf("%s..%s by %s", from.Format("2006-01-02"), to.Format("2006-01-02"), groupBy), func(t *testing.T) {
				// Catches: a total computed apart from the rows (rounded or filtered
				// differently), float sums losing cents over hundreds of entries, a grouping
				// that drops or doubles entries (a join multiplying rows, unmatched lost).
				b := rpCommissions(t, env, co.Secret, rpQ("from", from.Format("2006-01-02"), "to", to.Format("2006-01-02"), "groupBy", groupBy))
				rpAssertSum(t, b)
				var count int64
				for _, r := range b.Data {
					count += r.Entries
				}
				if b.Total != want.StringFixed(2) || count != n {
					t.Errorf("total %s of %d entries, want %s of %d", b.Total, count, want.StringFixed(2), n)
				}
				if keys := b.keys(); groupBy == "month" && !slices.IsSorted(keys) {
					t.Errorf("months out of order %v", keys)
				}
			})
		}
	}
}

func TestReports_CommissionsErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	ok := "/reports/commissions?from=2025-01-01&to=2025-01-31"
	env.Run(t, []apitest.Case{
		{Name: "no key", Path: ok, Status: 401},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "reports:read"), Path: ok, Status: 403},
		// Catches: a window defaulted silently (the spec requires both bounds).
		{Name: "from and to are required", Key: a.Secret, Path: "/reports/commissions", Status: 422,
			Check: apitest.FieldErrorSet("from:required", "to:required")},
		{Name: "to alone is not enough", Key: a.Secret, Path: "/reports/commissions?to=2025-01-31", Status: 422,
			Check: apitest.FieldErrors("from:required")},
		// Catches: the first bad parameter only, a bad date reaching the database (500).
		{Name: "every bad parameter at once", Key: a.Secret, Path: "/reports/commissions?from=2025-02-30&to=31.01.2025&groupBy=status",
			Status: 422, Check: apitest.FieldErrorSet("from:invalid_date", "to:invalid_date", "groupBy:invalid_enum")},
		{Name: "to before from", Key: a.Secret, Path: "/reports/commissions?from=2025-02-01&to=2025-01-31", Status: 422,
			Check: apitest.FieldErrors("to:invalid_range")},
		{Name: "year 0 is no date in PostgreSQL", Key: a.Secret, Path: "/reports/commissions?from=0000-01-01&to=2025-01-01", Status: 422,
			Check: apitest.FieldErrors("from:invalid_date")},
		{Name: "commissions:read is enough", Key: a.KeyWithScopes(t, "commissions:read"), Path: ok + "&groupBy=contract_type", Status: 200},
	})
}
