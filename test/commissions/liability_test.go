package commissions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// rpLiabilityAssertSum checks the total is the exact sum of the rows.
func rpLiabilityAssertSum(t *testing.T, b rpLiabilityReport) {
	t.Helper()
	var sum decimal.Decimal
	for _, r := range b.Data {
		sum = sum.Add(decimal.RequireFromString(r.OpenLiability))
	}
	if sum.StringFixed(2) != b.Total {
		t.Errorf("rows add up to %s, total %s", sum.StringFixed(2), b.Total)
	}
}

func TestReports_CancellationLiability(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	keyA := co.UserKey(t, agent)
	key := co.Secret
	ins1, ins2 := rpInsurer(t, env, key, "5501"), rpInsurer(t, env, key, "4711")
	cA, cN := rpContact(t, env, co, &agent.ID), rpContact(t, env, co, nil)

	life := rpMustContract(t, env, key, cA, ins1, "011", nil)   // the worked example
	house := rpMustContract(t, env, key, cN, ins2, "130", nil)  // 12 months, the half-cent
	health := rpMustContract(t, env, key, cN, ins1, "021", nil) // 60 months
	gone := rpMustContract(t, env, key, cN, ins2, "130", nil)   // clawed back in full
	month := rpMustContract(t, env, key, cN, ins2, "041", nil)  // booked on the 31st
	prem := rpMustContract(t, env, key, cA, ins1, "041", nil)   // premium postings only
	rpSeed(t, env, co,
		rpEntry{Contract: &life, Insurer: ins1, Type: "commission", Amount: "1234.57", Booked: "2024-03-15"},
		rpEntry{Contract: &life, Insurer: ins1, Type: "cancellation", Amount: "-200.00", Booked: "2024-11-20"},
		rpEntry{Contract: &life, Insurer: ins1, Type: "premium", Amount: "5000.00", Booked: "2024-03-15"},
		rpEntry{Contract: &house, Insurer: ins2, Type: "commission", Amount: "100.01", Booked: "2025-01-10"},
		rpEntry{Contract: &health, Insurer: ins1, Type: "commission", Amount: "600.00", Booked: "2025-01-01"},
		rpEntry{Contract: &health, Insurer: ins1, Type: "correction", Amount: "60.00", Booked: "2025-04-01"},
		rpEntry{Contract: &gone, Insurer: ins2, Type: "commission", Amount: "1200.00", Booked: "2024-01-01"},
		rpEntry{Contract: &gone, Insurer: ins2, Type: "cancellation", Amount: "-900.00", Booked: "2024-04-01"},
		rpEntry{Contract: &month, Insurer: ins2, Type: "commission", Amount: "120.00", Booked: "2024-01-31"},
		rpEntry{Contract: &prem, Insurer: ins1, Type: "premium", Amount: "80.00", Booked: "2025-01-01"},
		rpEntry{Contract: &prem, Insurer: ins1, Type: "other", Amount: "8.00", Booked: "2025-01-01"},
		rpEntry{Insurer: ins1, Type: "commission", Amount: "999.00", Booked: "2025-01-01"}, // unmatched: nobody's liability
	)

	t.Run("the worked example to the cent", func(t *testing.T) {
		// Catches: the premium posting counted as liable, the cancellation not netted, months
		// counted by days/30 or by calendar month numbers only, a float in the sum.
		b := rpLiability(t, env, key, "2025-06-30")
		r := b.of(life.ID)
		if r == nil || r.OpenLiability != "749.26" || r.LiabilityEndsOn != "2029-03-15" || r.ContactID != cA ||
			r.PolicyNumber == nil || *r.PolicyNumber != life.Policy || r.InsurerName == "" {
			t.Fatalf("life %+v", r)
		}
		// health: (600 × 55 + 60 × 58) / 60 = 608.00, liable until the correction's period ends.
		if h := b.of(health.ID); h == nil || h.OpenLiability != "608.00" || h.LiabilityEndsOn != "2030-04-01" {
			t.Errorf("health %+v", h)
		}
		// house on 2025-06-30: 5 whole months, 100.01 × 7/12 = 58.339… → 58.34.
		if h := b.of(house.ID); h == nil || h.OpenLiability != "58.34" || h.LiabilityEndsOn != "2026-01-10" {
			t.Errorf("house %+v", h)
		}
		if b.of(prem.ID) != nil || b.of(gone.ID) != nil || b.of(month.ID) != nil {
			t.Errorf("premium-only, clawed back or ended contracts listed: %+v", b.Data)
		}
		if len(b.Data) != 3 || b.Total != "1415.60" || b.Data[0].ContractID != life.ID {
			t.Errorf("rows %+v total %s", b.Data, b.Total)
		}
		rpLiabilityAssertSum(t, b)
	})

	t.Run("half a cent rounds away from zero", func(t *testing.T) {
		// Catches: banker's rounding (50.00) or truncation: 100.01 × 6/12 = 50.005.
		if r := rpLiability(t, env, key, "2025-07-10").of(house.ID); r == nil || r.OpenLiability != "50.01" {
			t.Errorf("house %+v", r)
		}
	})

	t.Run("asOf around the period: booked, running, last day, ended", func(t *testing.T) {
		// Catches: entries booked after asOf counted, the last day of the period counted as
		// liable (or the day before not), a period that never ends.
		for _, c := range []struct{ asOf, want string }{
			{"2025-01-09", ""},       // not booked yet
			{"2025-01-10", "100.01"}, // booked today: all of it
			{"2026-01-09", "8.33"},   // 11 whole months: 100.01 / 12
			{"2026-01-10", ""},       // the period's end: nothing open
			{"2030-01-01", ""},
		} {
			r := rpLiability(t, env, key, c.asOf).of(house.ID)
			if (c.want == "") != (r == nil) || (r != nil && r.OpenLiability != c.want) {
				t.Errorf("asOf %s: %+v, want %q", c.asOf, r, c.want)
			}
		}
	})

	t.Run("a month counts from the 31st to the month's last day", func(t *testing.T) {
		// Catches: age()-style months (31 January to 29 February is 0 months there) that
		// disagree with liabilityEndsOn's month addition.
		for _, c := range []struct{ asOf, want string }{{"2024-02-28", "120.00"}, {"2024-02-29", "110.00"}, {"2025-01-30", "10.00"}} {
			r := rpLiability(t, env, key, c.asOf).of(month.ID)
			if r == nil || r.OpenLiability != c.want || r.LiabilityEndsOn != "2025-01-31" {
				t.Errorf("asOf %s: %+v, want %s", c.asOf, r, c.want)
			}
		}
		if r := rpLiability(t, env, key, "2025-01-31").of(month.ID); r != nil {
			t.Errorf("ended: %+v", r)
		}
	})

	t.Run("a full cancellation leaves nothing, never less than nothing", func(t *testing.T) {
		// Catches: a negative liability listed (or subtracted from the total) once the
		// cancellation outweighs what is left.
		for _, asOf := range []string{"2024-04-01", "2024-06-01", "2024-12-31"} {
			b := rpLiability(t, env, key, asOf)
			if r := b.of(gone.ID); r != nil {
				t.Errorf("asOf %s: %+v", asOf, r)
			}
			rpLiabilityAssertSum(t, b)
		}
		if r := rpLiability(t, env, key, "2024-03-31").of(gone.ID); r == nil || r.OpenLiability != "1000.00" {
			t.Errorf("before the cancellation: %+v", r)
		}
	})

	t.Run("an agent sees the liability of its own contacts only", func(t *testing.T) {
		// Catches: the report read past row-level security.
		b := rpLiability(t, env, keyA, "2025-06-30")
		if len(b.Data) != 1 || b.Data[0].ContractID != life.ID || b.Total != "749.26" {
			t.Errorf("agent %+v", b)
		}
	})

	t.Run("default asOf is today in Berlin", func(t *testing.T) {
		today := time.Now().In(httpx.Berlin).Format("2006-01-02")
		if got, want := rpLiability(t, env, key, ""), rpLiability(t, env, key, today); got.Total != want.Total || len(got.Data) != len(want.Data) {
			t.Errorf("default %+v, today %+v", got, want)
		}
	})
}

func TestReports_CancellationLiabilityRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, other := env.NewCompany(t), env.NewCompany(t)
	key := co.Secret
	ins1, ins2 := rpInsurer(t, env, key, "5501"), rpInsurer(t, env, key, "4711")
	c := rpContact(t, env, co, nil)
	k := rpMustContract(t, env, key, c, ins1, "041", nil)
	life := rpMustContract(t, env, key, c, ins2, "010", nil)
	rpSeed(t, env, co,
		rpEntry{Contract: &k, Insurer: ins1, Type: "commission", Amount: "600.00", Booked: "2025-01-01"},
		rpEntry{Contract: &life, Insurer: ins2, Type: "commission", Amount: "600.00", Booked: "2025-01-01"})
	ends := func(t *testing.T, id string) string {
		t.Helper()
		r := rpLiability(t, env, key, "2025-01-01").of(id)
		if r == nil {
			return ""
		}
		if r.OpenLiability != "600.00" {
			t.Errorf("on the booking day %+v", r)
		}
		return r.LiabilityEndsOn
	}
	if got := ends(t, k.ID); got != "2026-01-01" {
		t.Fatalf("default of 041: ends %s, want 12 months", got)
	}
	if got := ends(t, life.ID); got != "2030-01-01" {
		t.Fatalf("default of 010: ends %s, want 60 months", got)
	}
	// Rules that must not apply: another insurer's, another company's.
	rpRule(t, env, co, ins2, "041", 99)
	rpRule(t, env, other, "", "", 6)
	if got := ends(t, k.ID); got != "2026-01-01" {
		t.Fatalf("another insurer's or company's rule applied: ends %s", got)
	}
	// Each step adds a more specific rule of the company; it wins over all before it. Catches:
	// a precedence that prefers the type over the insurer, the group over the exact code, or a
	// company-wide rule over an insurer's.
	for _, s := range []struct {
		name, insurer, typ string
		months             int
		want               string
	}{
		{"company-wide", "", "", 24, "2027-01-01"},
		{"the type's group", "", "040", 30, "2027-07-01"},
		{"the exact type", "", "041", 36, "2028-01-01"},
		{"the insurer", ins1, "", 48, "2029-01-01"},
		{"the insurer and the group", ins1, "040", 50, "2029-03-01"},
		{"the insurer and the exact type", ins1, "041", 54, "2029-07-01"},
	} {
		rpRule(t, env, co, s.insurer, s.typ, s.months)
		if got := ends(t, k.ID); got != s.want {
			t.Errorf("after the rule of %s: ends %s, want %s", s.name, got, s.want)
		}
	}
	// The company-wide rule now covers the 010 contract of ins2 too: 24 months, not 60.
	if got := ends(t, life.ID); got != "2027-01-01" {
		t.Errorf("010 under the company-wide rule: ends %s", got)
	}
	// 54 months, 6 passed: 600 × 48/54 = 533.333… → 533.33.
	if r := rpLiability(t, env, key, "2025-07-01").of(k.ID); r == nil || r.OpenLiability != "533.33" {
		t.Errorf("open under the 54-month rule %+v", r)
	}
	// A rule of 0 months: not liable at all.
	rpRule(t, env, co, ins2, "010", 0)
	if got := ends(t, life.ID); got != "" {
		t.Errorf("0 months still listed, ends %s", got)
	}
}

func TestReports_CommissionRuleOperator(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ctx := context.Background()
	key := co.Secret
	ins := rpInsurer(t, env, key, "5501")
	k := rpMustContract(t, env, key, rpContact(t, env, co, nil), ins, "041", nil)
	rpSeed(t, env, co, rpEntry{Contract: &k, Insurer: ins, Type: "commission", Amount: "600.00", Booked: "2025-01-01"})
	endsOn := func() string {
		if r := rpLiability(t, env, key, "2025-01-01").of(k.ID); r != nil {
			return r.LiabilityEndsOn
		}
		return ""
	}

	t.Run("the CLI sets, lists and deletes a rule the report reads", func(t *testing.T) {
		// Catches: the subcommand not dispatched, a rule stored without its insurer, delete
		// leaving the rule.
		var r operator.CommissionRule
		out := env.CLI(t, "commission-rule", "set", "--company", co.ID.String(), "--insurer", "5501", "--type", "040", "--months", "18", "--json")
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.InsurerID == nil || r.InsurerID.String() != ins || r.ContractType != "040" || r.Months != 18 {
			t.Fatalf("set: %v %s", err, out)
		}
		if got := endsOn(); got != "2026-07-01" {
			t.Errorf("after set: ends %s", got)
		}
		env.CLI(t, "commission-rule", "set", "--company", co.ID.String(), "--insurer", "5501", "--type", "040", "--months", "20")
		var rs []operator.CommissionRule
		if err := json.Unmarshal([]byte(env.CLI(t, "commission-rule", "list", "--company", co.ID.String(), "--json")), &rs); err != nil ||
			len(rs) != 1 || rs[0].Months != 20 || rs[0].InsurerVU != "5501" {
			t.Fatalf("list after replacing: %v %+v", err, rs)
		}
		env.CLI(t, "commission-rule", "delete", "--company", co.ID.String(), "--insurer", "5501", "--type", "040")
		if got := endsOn(); got != "2026-01-01" {
			t.Errorf("after delete: ends %s, want the default", got)
		}
	})

	t.Run("the operator service refuses bad rules", func(t *testing.T) {
		// Catches: a type outside the catalog or months out of range stored (the report would
		// never match it, or divide by a negative), an unknown insurer or company silently
		// made a company-wide rule, a delete of nothing reported as done.
		var inv *errs.Invalid
		if _, _, err := env.Ops.SetCommissionRule(ctx, co.ID, operator.CommissionRuleKey{ContractType: "999"}, 12); !errors.As(err, &inv) {
			t.Errorf("unknown type: %v", err)
		}
		if _, _, err := env.Ops.SetCommissionRule(ctx, co.ID, operator.CommissionRuleKey{ContractType: "01"}, 12); !errors.As(err, &inv) {
			t.Errorf("two-digit type: %v", err)
		}
		for _, m := range []int{-1, 121} {
			if _, _, err := env.Ops.SetCommissionRule(ctx, co.ID, operator.CommissionRuleKey{}, m); !errors.As(err, &inv) {
				t.Errorf("months %d: %v", m, err)
			}
		}
		if _, _, err := env.Ops.SetCommissionRule(ctx, co.ID, operator.CommissionRuleKey{Insurer: "00000"}, 12); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("unknown insurer: %v", err)
		}
		if _, err := env.Ops.DeleteCommissionRule(ctx, co.ID, operator.CommissionRuleKey{ContractType: "130"}); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("delete of no rule: %v", err)
		}
		if _, err := env.Ops.ListCommissionRules(ctx, uuid.New()); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("unknown company: %v", err)
		}
		if rs, err := env.Ops.ListCommissionRules(ctx, co.ID); err != nil || len(rs) != 0 {
			t.Errorf("refused rules stored: %v %+v", err, rs)
		}
	})

	t.Run("the API role may not write rules", func(t *testing.T) {
		// Catches: a grant that lets request work change the liability rules.
		err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO commission_liability_rules (id, created_at, updated_at, contract_type, months, company_id)
				VALUES (gen_random_uuid(), now(), now(), '', 1, $1)`, co.ID)
			return err
		})
		if err == nil {
			t.Errorf("the app role inserted a rule")
		}
	})
}

func TestReports_CancellationLiabilityErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		{Name: "no key", Path: "/reports/cancellation-liability", Status: 401},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "reports:read"), Path: "/reports/cancellation-liability", Status: 403},
		// Catches: a bad date reaching the database (500) or ignored (today's report).
		{Name: "not a date", Key: a.Secret, Path: "/reports/cancellation-liability?asOf=2025-02-30", Status: 422,
			Check: apitest.FieldErrors("asOf:invalid_date")},
		{Name: "a timestamp is no date", Key: a.Secret, Path: "/reports/cancellation-liability?asOf=2025-01-01T00:00:00Z", Status: 422,
			Check: apitest.FieldErrors("asOf:invalid_date")},
		{Name: "year 0 is no date in PostgreSQL", Key: a.Secret, Path: "/reports/cancellation-liability?asOf=0000-12-31", Status: 422,
			Check: apitest.FieldErrors("asOf:invalid_date")},
		{Name: "an empty company has an empty report", Key: a.KeyWithScopes(t, "commissions:read"), Path: "/reports/cancellation-liability?asOf=2025-01-01",
			Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var b rpLiabilityReport
				r.Decode(t, &b)
				if len(b.Data) != 0 || b.Total != "0.00" {
					t.Errorf("got %s", r.Body)
				}
			}},
	})
}
