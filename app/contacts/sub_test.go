package contacts

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

func TestFinanceTotals(t *testing.T) {
	m := schematype.MustMoney
	f := newFinance(uuid.New(), &ent.ContactFinance{
		Income: []schematype.FinanceItem{
			{Type: "salary", Amount: m("1000.00"), Interval: "monthly"},
			{Type: "other", Amount: m("0.01"), Interval: "yearly"}, // 0.01/12 alone rounds to 0.00
			{Type: "other", Amount: m("0.05"), Interval: "yearly"},
			{Type: "rental", Amount: m("300.00"), Interval: "quarterly"},
			{Type: "other", Amount: m("600.00"), Interval: "half_yearly"},
		},
		Expenses:    []schematype.FinanceItem{{Type: "rent", Amount: m("700.00"), Interval: "monthly"}},
		Assets:      []schematype.FinanceItem{{Type: "cash", Amount: m("10.00")}},
		Liabilities: []schematype.FinanceItem{{Type: "car_loan", Amount: m("5000.00"), MonthlyPayment: ptr.To(m("150.00"))}, {Type: "other", Amount: m("1.00")}},
		RealEstate:  []schematype.FinanceItem{{Type: "land", Amount: m("20000.00")}},
	})
	got := map[string]string{"monthlyIncome": f.Totals.MonthlyIncome.String(), "monthlyExpenses": f.Totals.MonthlyExpenses.String(),
		"monthlyLiabilityPayments": f.Totals.MonthlyLiabilityPayments.String(), "monthlySurplus": f.Totals.MonthlySurplus.String(),
		"netWorth": f.Totals.NetWorth.String()}
	want := map[string]string{"monthlyIncome": "1200.01", "monthlyExpenses": "700.00", "monthlyLiabilityPayments": "150.00",
		"monthlySurplus": "350.01", "netWorth": "15009.00"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s, want %s", k, got[k], w)
		}
	}
	empty := newFinance(uuid.New(), nil)
	if empty.Income == nil || empty.Totals.NetWorth.String() != "0.00" || empty.UpdatedAt != nil {
		t.Errorf("empty finances %+v", empty)
	}
}

func TestFinanceBody_Validate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    FinanceBody
		codes []string
	}{
		{"valid", FinanceBody{Income: &[]FinanceItemInput{{Type: "salary", Amount: ptr.To("1")}}}, nil},
		{"amount missing", FinanceBody{Assets: &[]FinanceItemInput{{Type: "cash"}}}, []string{"assets.0.amount:required"}},
		{"bad amount", FinanceBody{Assets: &[]FinanceItemInput{{Type: "cash", Amount: ptr.To("1,50")}}}, []string{"assets.0.amount:invalid_money"}},
		{"negative", FinanceBody{Expenses: &[]FinanceItemInput{{Type: "rent", Amount: ptr.To("-1")}}}, []string{"expenses.0.amount:negative"}},
		{"bad interval", FinanceBody{Expenses: &[]FinanceItemInput{{Type: "rent", Amount: ptr.To("1"), Interval: "weekly"}}}, []string{"expenses.0.interval:invalid_enum"}},
		{"every field listed", FinanceBody{RealEstate: &[]FinanceItemInput{{Type: "castle", Amount: ptr.To("1"), Interval: "monthly", MonthlyPayment: ptr.To("1")}}},
			[]string{"realEstate.0.type:invalid_enum", "realEstate.0.interval:not_applicable", "realEstate.0.monthlyPayment:not_applicable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			var got []string
			if v, ok := err.(*errs.Invalid); ok {
				for _, e := range v.Errors {
					got = append(got, e.Field+":"+e.Code)
				}
			}
			if !slices.Equal(got, tc.codes) {
				t.Errorf("got %v, want %v", got, tc.codes)
			}
		})
	}
}

func TestParseActivityFilter(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  []string
		valid bool
	}{
		{"", nil, true},
		{"notes", []string{"note"}, true},
		{"system, notes,notes", []string{"note", "system"}, true},
		{"emails,calls", []string{"email"}, false},
	} {
		var v errs.Invalid
		got := ParseActivityFilter(tc.in, &v)
		if !slices.Equal(got, tc.want) || (v.Err() == nil) != tc.valid {
			t.Errorf("%q: got %v (%v), want %v valid=%v", tc.in, got, v.Err(), tc.want, tc.valid)
		}
	}
}

func TestRelationshipBody_Validate(t *testing.T) {
	id := uuid.NewString()
	for _, tc := range []struct {
		name string
		in   RelationshipBody
		ok   bool
	}{
		{"partner", RelationshipBody{RelatedContactID: &id, Role: ptr.To("partner")}, true},
		{"employer with position", RelationshipBody{RelatedContactID: &id, Role: ptr.To("employer"), Position: ptr.To("Azubi")}, true},
		{"position on child", RelationshipBody{RelatedContactID: &id, Role: ptr.To("child"), Position: ptr.To("x")}, false},
		{"employee", RelationshipBody{RelatedContactID: &id, Role: ptr.To("employee")}, false},
		{"no role", RelationshipBody{RelatedContactID: &id}, false},
	} {
		if err := tc.in.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for role, inv := range inverseRole {
		if inverseRole[inv] != role {
			t.Errorf("inverse of %s is %s, whose inverse is %s", role, inv, inverseRole[inv])
		}
	}
}
