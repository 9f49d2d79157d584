package reports

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// portfolioFixture is one company's book: two agents' customers, a customer without owner,
// contracts of five Sparten groups at two insurers with every payment frequency, a single
// premium, a cancelled contract that ended, an offer, and one that starts later.
type portfolioFixture struct {
	co             *apitest.Company
	agentA, agentB uuid.UUID
	keyA           string
	ins1, ins2     string
}

func newPortfolioFixture(t *testing.T, env *apitest.Env) portfolioFixture {
	t.Helper()
	co := env.NewCompany(t)
	a, b := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	f := portfolioFixture{co: co, agentA: a.ID, agentB: b.ID, keyA: co.UserKey(t, a),
		ins1: insurerID(t, env, co.Secret, "5501"), ins2: insurerID(t, env, co.Secret, "4711")}
	c1 := mustContact(t, env, co, "private", "Eins", &f.agentA)
	c2 := mustContact(t, env, co, "private", "Zwei", &f.agentA)
	c3 := mustContact(t, env, co, "business", "Drei GmbH", &f.agentB)
	c4 := mustContact(t, env, co, "private", "Vier", nil)
	for _, c := range []ct{
		// #1 041 monthly 5.99 -> 71.88
		{Contact: c1, Insurer: f.ins1, Type: "041", Status: "active", Start: "2020-01-01", Premium: "5.99", Freq: "monthly"},
		// #2 130 yearly 120.50
		{Contact: c1, Insurer: f.ins2, Type: "130", Status: "active", Start: "2021-03-01", Premium: "120.50", Freq: "yearly"},
		// #3 011 quarterly 33.33 -> 133.32
		{Contact: c2, Insurer: f.ins1, Type: "011", Status: "active", Start: "2019-06-15", Premium: "33.33", Freq: "quarterly"},
		// #4 010 single premium: counts as a contract, adds 0
		{Contact: c2, Insurer: f.ins1, Type: "010", Status: "active", Start: "2018-01-01", Premium: "5000.00", Freq: "single"},
		// #5 042 half-yearly 450.25 -> 900.50; the contract's owner (A) is not its contact's (B)
		{Contact: c3, Insurer: f.ins2, Type: "042", Status: "active", Start: "2022-01-01", Premium: "450.25", Freq: "half-yearly", Owner: &f.agentA},
		// #6 080 monthly 10.01 -> 120.12, cancelled, ran until 2025-06-30
		{Contact: c3, Insurer: f.ins1, Type: "080", Status: "cancelled", Start: "2020-01-01", End: "2025-06-30", Premium: "10.01", Freq: "monthly"},
		// #7 an offer: never in force
		{Contact: c4, Insurer: f.ins1, Type: "130", Status: "offer", Premium: "99.00", Freq: "yearly"},
		// #8 030 yearly 99.99, begins 2026-07-01
		{Contact: c1, Insurer: f.ins1, Type: "030", Status: "active", Start: "2026-07-01", Premium: "99.99", Freq: "yearly"},
		// #9 071 yearly 200.00 of the contact without owner
		{Contact: c4, Insurer: f.ins2, Type: "071", Status: "active", Start: "2020-01-01", Premium: "200.00", Freq: "yearly"},
	} {
		mustContract(t, env, co.Secret, c)
	}
	return f
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func TestReports_Portfolio(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newPortfolioFixture(t, env)
	key := f.co.Secret

	t.Run("by type group: sums to the cent, distinct contacts, order by premium", func(t *testing.T) {
		// Catches: float sums, a single premium counted as annual, the cancelled contract
		// missed on its last day, the offer or the future contract counted, totals.contacts
		// summed over rows instead of distinct.
		b := portfolio(t, env, key, q("asOf", "2025-06-30"))
		want := []struct {
			key, premium, share string
			contracts, contacts int64
		}{
			{"040", "972.38", "0.6288", 2, 2},
			{"070", "200.00", "0.1293", 1, 1},
			{"010", "133.32", "0.0862", 2, 1},
			{"130", "120.50", "0.0779", 1, 1},
			{"080", "120.12", "0.0777", 1, 1},
		}
		if len(b.Data) != len(want) {
			t.Fatalf("rows %+v", b.Data)
		}
		for i, w := range want {
			r := b.Data[i]
			if r.Key == nil || *r.Key != w.key || r.AnnualPremium != w.premium || string(r.Share) != w.share ||
				r.Contracts != w.contracts || r.Contacts != w.contacts {
				t.Errorf("row %d = %+v (key %v), want %+v", i, r, deref(r.Key), w)
			}
		}
		if b.Totals.Contracts != 7 || b.Totals.Contacts != 4 || b.Totals.AnnualPremium != "1546.32" {
			t.Errorf("totals %+v", b.Totals)
		}
		if l := b.row(t, "040").Label; l != "Haftpflichtversicherung" {
			t.Errorf("label %q", l)
		}
		assertShares(t, b)
	})

	t.Run("asOf boundaries", func(t *testing.T) {
		// Catches: end date exclusive (the day after it ended still counted), start date
		// exclusive (the day it begins not counted).
		after := portfolio(t, env, key, q("asOf", "2025-07-01"))
		if after.Totals.Contracts != 6 || after.Totals.AnnualPremium != "1426.20" {
			t.Errorf("day after the end: %+v", after.Totals)
		}
		before := portfolio(t, env, key, q("asOf", "2026-06-30"))
		begun := portfolio(t, env, key, q("asOf", "2026-07-01"))
		if before.Totals.Contracts != 6 || begun.Totals.Contracts != 7 || begun.Totals.AnnualPremium != "1526.19" {
			t.Errorf("before %+v, on the start %+v", before.Totals, begun.Totals)
		}
		early := portfolio(t, env, key, q("asOf", "2018-01-01"))
		if early.Totals.Contracts != 1 || early.Totals.AnnualPremium != "0.00" || len(early.Data) != 1 || string(early.Data[0].Share) != "0.0000" {
			t.Errorf("only the single premium: %+v", early)
		}
	})

	t.Run("default asOf is today in Berlin", func(t *testing.T) {
		today := time.Now().In(httpx.Berlin).Format("2006-01-02")
		if got, want := portfolio(t, env, key, nil), portfolio(t, env, key, q("asOf", today)); got.Totals != want.Totals {
			t.Errorf("default %+v, today %+v", got.Totals, want.Totals)
		}
	})

	t.Run("by type, insurer, status", func(t *testing.T) {
		ty := portfolio(t, env, key, q("asOf", "2025-06-30", "groupBy", "type"))
		if r := ty.row(t, "011"); r.AnnualPremium != "133.32" || r.Label != "Einzel-Lebensversicherung mit Überschussbeteiligung" {
			t.Errorf("011 %+v", r)
		}
		if r := ty.row(t, "010"); r.AnnualPremium != "0.00" || r.Contracts != 1 || string(r.Share) != "0.0000" {
			t.Errorf("010 %+v", r)
		}
		ins := portfolio(t, env, key, q("asOf", "2025-06-30", "groupBy", "insurer"))
		if r := ins.row(t, f.ins2); r.AnnualPremium != "1221.00" || r.Contracts != 3 || r.Label == "" || r.Label == f.ins2 {
			t.Errorf("insurer 2 %+v", r)
		}
		if r := ins.row(t, f.ins1); r.AnnualPremium != "325.32" || r.Contracts != 4 {
			t.Errorf("insurer 1 %+v", r)
		}
		st := portfolio(t, env, key, q("asOf", "2025-06-30", "groupBy", "status"))
		if got := st.keys(); !slices.Equal(got, []string{"active", "cancelled"}) || st.row(t, "cancelled").AnnualPremium != "120.12" ||
			st.row(t, "active").Label != "Aktiv" {
			t.Errorf("status %+v", st.Data)
		}
		assertShares(t, ty)
		assertShares(t, ins)
	})

	t.Run("by owner: the contract's, else the contact's, null for none", func(t *testing.T) {
		// Catches: grouping by the contact's owner only (#5 would go to B), dropping contracts
		// without any owner.
		b := portfolio(t, env, key, q("asOf", "2025-06-30", "groupBy", "owner"))
		if got := b.keys(); !slices.Equal(got, []string{f.agentA.String(), "", f.agentB.String()}) {
			t.Fatalf("keys %v", got)
		}
		a := b.row(t, f.agentA.String())
		if a.AnnualPremium != "1226.20" || a.Contracts != 5 || a.Contacts != 3 || string(a.Share) != "0.7930" || a.Label != "Test agent" {
			t.Errorf("A %+v", a)
		}
		if n := b.row(t, ""); n.AnnualPremium != "200.00" || n.Label != "Ohne Betreuer" {
			t.Errorf("no owner %+v", n)
		}
		only := portfolio(t, env, key, q("asOf", "2025-06-30", "ownerId", f.agentA.String()))
		if only.Totals.Contracts != 5 || only.Totals.AnnualPremium != "1226.20" || only.Totals.Contacts != 3 {
			t.Errorf("ownerId A %+v", only.Totals)
		}
		none := portfolio(t, env, key, q("asOf", "2025-06-30", "ownerId", uuid.NewString()))
		if len(none.Data) != 0 || none.Totals.Contracts != 0 || none.Totals.AnnualPremium != "0.00" {
			t.Errorf("unknown owner %+v", none)
		}
	})

	t.Run("labels follow Accept-Language", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Path: "/reports/portfolio?asOf=2025-06-30", Key: key, Header: map[string]string{"Accept-Language": "en"}})
		var b portfolioBody
		r.Decode(t, &b)
		if r.Status != 200 || b.row(t, "040").Label != "Liability insurance" || r.Header.Get("Content-Language") != "en" {
			t.Errorf("%d %s %+v", r.Status, r.Header.Get("Content-Language"), b.Data)
		}
	})

	t.Run("an agent's report covers its own contacts only", func(t *testing.T) {
		// Catches: a report read past row-level security (a pool, a lifted visibility): A
		// would see #5 (its contract, B's contact) and #9.
		b := portfolio(t, env, f.keyA, q("asOf", "2025-06-30"))
		if b.Totals.Contracts != 4 || b.Totals.Contacts != 2 || b.Totals.AnnualPremium != "325.70" {
			t.Errorf("agent totals %+v", b.Totals)
		}
		if got := b.keys(); !slices.Equal(got, []string{"010", "130", "040"}) {
			t.Errorf("agent keys %v", got)
		}
		if r := b.row(t, "040"); r.AnnualPremium != "71.88" || string(r.Share) != "0.2207" {
			t.Errorf("agent 040 %+v", r)
		}
		// The company key's report over A's two contacts would be the same: #1-#4.
		admin := portfolio(t, env, key, q("asOf", "2025-06-30", "groupBy", "type"))
		var sum decimal.Decimal
		for _, k := range []string{"041", "130", "011", "010"} {
			sum = sum.Add(decimal.RequireFromString(admin.row(t, k).AnnualPremium))
		}
		if sum.StringFixed(2) != b.Totals.AnnualPremium {
			t.Errorf("admin over A's contracts %s, agent %s", sum.StringFixed(2), b.Totals.AnnualPremium)
		}
		// The agent's statement starts from its visible owners' contacts. Catches: the owner
		// key or the ownerId filter lost in that shape (or bound to the wrong parameter), and
		// a contract of a visible contact left out for its own owner.
		o := portfolio(t, env, f.keyA, q("asOf", "2025-06-30", "groupBy", "owner"))
		if got := o.keys(); !slices.Equal(got, []string{f.agentA.String()}) || o.Totals.AnnualPremium != "325.70" {
			t.Errorf("agent by owner %v %+v", got, o.Totals)
		}
		if a := portfolio(t, env, f.keyA, q("asOf", "2025-06-30", "ownerId", f.agentA.String())); a.Totals.Contracts != 4 {
			t.Errorf("agent ownerId A %+v", a.Totals)
		}
		if b := portfolio(t, env, f.keyA, q("asOf", "2025-06-30", "ownerId", f.agentB.String())); b.Totals.Contracts != 0 {
			t.Errorf("agent ownerId B %+v", b.Totals)
		}
		f.co.Delegate(t, f.agentB, f.agentA, nil)
		d := portfolio(t, env, f.keyA, q("asOf", "2025-06-30"))
		if d.Totals.Contracts != 6 || d.Totals.AnnualPremium != "1346.32" {
			t.Errorf("with B's delegation %+v", d.Totals)
		}
		// Catches: the delegator's contacts missing from the owners the statement names.
		do := portfolio(t, env, f.keyA, q("asOf", "2025-06-30", "groupBy", "owner"))
		if got := do.keys(); !slices.Equal(got, []string{f.agentA.String(), f.agentB.String()}) ||
			do.row(t, f.agentA.String()).AnnualPremium != "1226.20" || do.row(t, f.agentB.String()).Contracts != 1 {
			t.Errorf("with B's delegation by owner %v %+v", got, do.Data)
		}
	})
}

// assertShares checks that the shares add up to 1 within the rounding of each row (half a unit
// of the 4th digit per row), or are all 0 when the total is.
func assertShares(t *testing.T, b portfolioBody) {
	t.Helper()
	var sum decimal.Decimal
	for _, r := range b.Data {
		sum = sum.Add(decimal.RequireFromString(string(r.Share)))
	}
	if decimal.RequireFromString(b.Totals.AnnualPremium).IsZero() {
		if !sum.IsZero() {
			t.Errorf("shares %s of a zero total", sum)
		}
		return
	}
	tol := decimal.New(5, -5).Mul(decimal.NewFromInt(int64(len(b.Data))))
	if sum.Sub(decimal.NewFromInt(1)).Abs().GreaterThan(tol) {
		t.Errorf("shares add up to %s", sum)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestReports_PortfolioErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		{Name: "no key", Path: "/reports/portfolio", Status: 401},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "contracts:read"), Path: "/reports/portfolio", Status: 403},
		// Catches: the first bad parameter only, or a bad date reaching the database (500).
		{Name: "every bad parameter at once", Key: a.Secret, Path: "/reports/portfolio?groupBy=month&asOf=2025-02-30&ownerId=x",
			Status: 422, Check: apitest.FieldErrorSet("groupBy:invalid_enum", "asOf:invalid_date", "ownerId:invalid_uuid")},
		{Name: "year 0 is no date in PostgreSQL", Key: a.Secret, Path: "/reports/portfolio?asOf=0000-01-01", Status: 422,
			Check: apitest.FieldErrors("asOf:invalid_date")},
		{Name: "a timestamp is no date", Key: a.Secret, Path: "/reports/portfolio?asOf=2025-01-01T00:00:00Z", Status: 422,
			Check: apitest.FieldErrors("asOf:invalid_date")},
		{Name: "an empty company has an empty report", Key: a.Secret, Path: "/reports/portfolio?groupBy=owner", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var b portfolioBody
				r.Decode(t, &b)
				if len(b.Data) != 0 || b.Totals.AnnualPremium != "0.00" || b.Totals.Contracts != 0 {
					t.Errorf("got %s", r.Body)
				}
			}},
	})
}
