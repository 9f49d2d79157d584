package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactfinance"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Household finance bounds and values. The spec names the lists only; the types are the
// categories a German broker's household analysis uses.
const (
	MaxFinanceItems       = 50
	MaxFinanceDescription = 200
)

// Finance list names (JSON) and the item types each accepts.
var (
	FinanceTypes = map[string][]string{
		"income":      {"salary", "self_employment", "pension", "rental", "capital", "child_benefit", "alimony", "other"},
		"expenses":    {"rent", "utilities", "living", "insurance", "mobility", "childcare", "savings", "other"},
		"assets":      {"cash", "savings", "securities", "life_insurance", "building_savings", "vehicle", "other"},
		"liabilities": {"mortgage", "consumer_loan", "car_loan", "overdraft", "student_loan", "other"},
		"realEstate":  {"owner_occupied", "rented_out", "land", "other"},
	}
	// FinanceIntervals are the intervals of income and expenses, with how many of each make a year.
	FinanceIntervals = map[string]int64{"monthly": 12, "quarterly": 4, "half_yearly": 2, "yearly": 1}
)

// FinanceBody is the body of PUT /contacts/{contactId}/finance: a list present replaces the
// stored one, an omitted list stays, an empty list clears.
type FinanceBody struct {
	Income      *[]FinanceItemInput `json:"income"`
	Expenses    *[]FinanceItemInput `json:"expenses"`
	Assets      *[]FinanceItemInput `json:"assets"`
	Liabilities *[]FinanceItemInput `json:"liabilities"`
	RealEstate  *[]FinanceItemInput `json:"realEstate"`
	lists       map[string][]schematype.FinanceItem
}

// FinanceItemInput is one entry as sent: amounts are decimal strings, read by Validate so that
// a bad one is a 422 naming its field.
type FinanceItemInput struct {
	Type           string  `json:"type"`
	Description    string  `json:"description"`
	Amount         *string `json:"amount"`
	Interval       string  `json:"interval"`
	MonthlyPayment *string `json:"monthlyPayment"`
}

func parseAmount(v *errs.Invalid, field string, s *string, required bool) *schematype.Money {
	if s == nil {
		if required {
			v.Require(field, false)
		}
		return nil
	}
	m, err := schematype.ParseMoney(*s)
	if err != nil {
		v.Add(field, "invalid_money", "must be a decimal string in EUR with at most two fraction digits, like \"1234.50\"")
		return nil
	}
	v.Check(field, m.Sign() >= 0, "negative", "must not be negative")
	return &m
}

// Validate checks every item: a type of its list, an amount not negative, an interval for
// income and expenses (default monthly) and none elsewhere, monthlyPayment only on liabilities.
func (in *FinanceBody) Validate() error {
	var v errs.Invalid
	in.lists = map[string][]schematype.FinanceItem{}
	checkList := func(list string, items *[]FinanceItemInput, flow bool) {
		if items == nil {
			return
		}
		v.Check(list, len(*items) <= MaxFinanceItems, "too_many", fmt.Sprintf("at most %d entries", MaxFinanceItems))
		out := make([]schematype.FinanceItem, 0, len(*items))
		for i, it := range *items {
			name := fmt.Sprintf("%s.%d.", list, i)
			v.Check(name+"type", slices.Contains(FinanceTypes[list], it.Type), "invalid_enum",
				"must be one of "+strings.Join(FinanceTypes[list], ", "))
			item := schematype.FinanceItem{Type: it.Type, Description: strings.TrimSpace(it.Description), Interval: it.Interval}
			check.Len(&v, name+"description", &item.Description, MaxFinanceDescription)
			if m := parseAmount(&v, name+"amount", it.Amount, true); m != nil {
				item.Amount = *m
			}
			if flow {
				if item.Interval == "" {
					item.Interval = "monthly"
				}
				_, ok := FinanceIntervals[item.Interval]
				v.Check(name+"interval", ok, "invalid_enum", "must be one of monthly, quarterly, half_yearly, yearly")
			} else {
				v.Check(name+"interval", it.Interval == "", "not_applicable", "only income and expenses have an interval")
			}
			if list == "liabilities" {
				item.MonthlyPayment = parseAmount(&v, name+"monthlyPayment", it.MonthlyPayment, false)
			} else {
				v.Check(name+"monthlyPayment", it.MonthlyPayment == nil, "not_applicable", "only liabilities have a monthly payment")
			}
			out = append(out, item)
		}
		in.lists[list] = out
	}
	checkList("income", in.Income, true)
	checkList("expenses", in.Expenses, true)
	checkList("assets", in.Assets, false)
	checkList("liabilities", in.Liabilities, false)
	checkList("realEstate", in.RealEstate, false)
	return v.Err()
}

// Finance is the household finances resource of a private contact. CreatedAt and UpdatedAt
// are null until the finances are first written.
type Finance struct {
	ContactID   uuid.UUID                `json:"contactId"`
	Income      []schematype.FinanceItem `json:"income"`
	Expenses    []schematype.FinanceItem `json:"expenses"`
	Assets      []schematype.FinanceItem `json:"assets"`
	Liabilities []schematype.FinanceItem `json:"liabilities"`
	RealEstate  []schematype.FinanceItem `json:"realEstate"`
	Totals      FinanceTotals            `json:"totals"`
	CreatedAt   *time.Time               `json:"createdAt"`
	UpdatedAt   *time.Time               `json:"updatedAt"`
	version     int64
}

// FinanceTotals are computed on every read, never stored. Monthly figures convert each flow
// to a month (yearly / 12, quarterly / 3 ...), summed exactly and rounded once to cents.
type FinanceTotals struct {
	MonthlyIncome            schematype.Money `json:"monthlyIncome"`
	MonthlyExpenses          schematype.Money `json:"monthlyExpenses"`
	MonthlyLiabilityPayments schematype.Money `json:"monthlyLiabilityPayments"`
	MonthlySurplus           schematype.Money `json:"monthlySurplus"`
	Assets                   schematype.Money `json:"assets"`
	RealEstate               schematype.Money `json:"realEstate"`
	Liabilities              schematype.Money `json:"liabilities"`
	NetWorth                 schematype.Money `json:"netWorth"`
}

// Version is the finances' version, for the ETag (0 before the first write).
func (f Finance) Version() int64 { return f.version }

func orEmpty(l []schematype.FinanceItem) []schematype.FinanceItem {
	if l == nil {
		return []schematype.FinanceItem{}
	}
	return l
}

func newFinance(contactID uuid.UUID, f *ent.ContactFinance) Finance {
	v := Finance{ContactID: contactID}
	if f != nil {
		v.Income, v.Expenses, v.Assets, v.Liabilities, v.RealEstate = f.Income, f.Expenses, f.Assets, f.Liabilities, f.RealEstate
		v.CreatedAt, v.UpdatedAt, v.version = &f.CreatedAt, &f.UpdatedAt, f.Version
	}
	v.Income, v.Expenses, v.Assets = orEmpty(v.Income), orEmpty(v.Expenses), orEmpty(v.Assets)
	v.Liabilities, v.RealEstate = orEmpty(v.Liabilities), orEmpty(v.RealEstate)
	v.Totals = financeTotals(v)
	return v
}

// monthly is the sum of the flows per month: the yearly amounts summed, divided by 12 once.
func monthly(items []schematype.FinanceItem) schematype.Money {
	var yearly schematype.Money
	for _, it := range items {
		n := FinanceIntervals[it.Interval]
		if n == 0 {
			n = 12
		}
		for range n {
			yearly = yearly.Add(it.Amount)
		}
	}
	return yearly.Div(12)
}

func sumItems(items []schematype.FinanceItem, f func(schematype.FinanceItem) schematype.Money) schematype.Money {
	var s schematype.Money
	for _, it := range items {
		s = s.Add(f(it))
	}
	return s
}

func financeTotals(f Finance) FinanceTotals {
	amount := func(it schematype.FinanceItem) schematype.Money { return it.Amount }
	var t FinanceTotals
	t.MonthlyIncome = monthly(f.Income)
	t.MonthlyExpenses = monthly(f.Expenses)
	t.MonthlyLiabilityPayments = sumItems(f.Liabilities, func(it schematype.FinanceItem) schematype.Money {
		if it.MonthlyPayment == nil {
			return schematype.Money{}
		}
		return *it.MonthlyPayment
	})
	t.MonthlySurplus = t.MonthlyIncome.Sub(t.MonthlyExpenses).Sub(t.MonthlyLiabilityPayments)
	t.Assets = sumItems(f.Assets, amount)
	t.RealEstate = sumItems(f.RealEstate, amount)
	t.Liabilities = sumItems(f.Liabilities, amount)
	t.NetWorth = t.Assets.Add(t.RealEstate).Sub(t.Liabilities)
	return t
}

// privateContact reads the contact through the visibility layer (404) and refuses a business
// contact: household finances are for private contacts only (422 finance_private_only).
func privateContact(ctx context.Context, id uuid.UUID) (*ent.Contact, error) {
	c, err := visibleContact(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.Type != TypePrivate {
		return nil, errs.InvalidField("type", "finance_private_only", "household finances exist for private contacts only")
	}
	return c, nil
}

// Finance returns the household finances of a private contact (empty lists before the first
// PUT). 404 for a contact the credential cannot see, 422 for a business contact.
func (s *Service) Finance(ctx context.Context, contactID uuid.UUID) (Finance, error) {
	if _, err := privateContact(ctx, contactID); err != nil {
		return Finance{}, err
	}
	f, err := tenancy.Client(ctx).ContactFinance.Query().Where(contactfinance.ContactID(contactID)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return Finance{}, fmt.Errorf("read finances of contact %s: %w", contactID, err)
	}
	return newFinance(contactID, f), nil
}

// LockFinance reads the finances for PUT, locked to the end of the transaction (nil before the
// first write), after the same checks as Finance.
func (s *Service) LockFinance(ctx context.Context, contactID uuid.UUID) (*ent.ContactFinance, error) {
	if _, err := privateContact(ctx, contactID); err != nil {
		return nil, err
	}
	f, err := tenancy.Client(ctx).ContactFinance.Query().Where(contactfinance.ContactID(contactID)).ForUpdate().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read finances of contact %s: %w", contactID, err)
	}
	return f, nil
}

// PutFinance writes the lists in gives into cur (from LockFinance; nil creates them) and writes
// a system entry without amounts into the timeline. No event: finances hold income figures,
// which never travel in events.
func (s *Service) PutFinance(ctx context.Context, contactID uuid.UUID, cur *ent.ContactFinance, in FinanceBody) (Finance, error) {
	db := tenancy.Client(ctx)
	var f *ent.ContactFinance
	var err error
	if cur == nil {
		q := db.ContactFinance.Create().SetContactID(contactID)
		setLists(in, q.SetIncome, q.SetExpenses, q.SetAssets, q.SetLiabilities, q.SetRealEstate)
		f, err = q.Save(ctx)
		if ent.IsConstraintError(err) {
			return Finance{}, errs.Conflict("concurrent_update", "the finances were created concurrently; retry")
		}
	} else {
		q := cur.Update()
		setLists(in, q.SetIncome, q.SetExpenses, q.SetAssets, q.SetLiabilities, q.SetRealEstate)
		f, err = q.Save(ctx)
	}
	if err != nil {
		return Finance{}, fmt.Errorf("write finances of contact %s: %w", contactID, err)
	}
	if err := s.RecordActivity(ctx, contactID, "finance.updated", "Haushaltsfinanzen aktualisiert"); err != nil {
		return Finance{}, err
	}
	return newFinance(contactID, f), nil
}

func setLists[Q any](in FinanceBody, income, expenses, assets, liabilities, realEstate func([]schematype.FinanceItem) Q) {
	for name, set := range map[string]func([]schematype.FinanceItem) Q{"income": income, "expenses": expenses,
		"assets": assets, "liabilities": liabilities, "realEstate": realEstate} {
		if l, ok := in.lists[name]; ok {
			set(orEmpty(l))
		}
	}
}
