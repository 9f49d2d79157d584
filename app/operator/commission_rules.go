package operator

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/commissionliabilityrule"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
)

// Commission liability rules (issue 24): how many months a company's commission stays liable
// to be clawed back when a contract is cancelled, per insurer and contract type; the report
// GET /reports/cancellation-liability reads them (app/commissions liability.go), the API may
// not write them (migrations/…_commissions_tenancy.sql), the operator does (brokerdesk
// commission-rule …). One rule per (company, insurer or none, contract type or none).

// CommissionRule is a liability rule as the CLI shows it. InsurerID and InsurerVU are empty for
// a rule of every insurer, ContractType for one of every contract type.
type CommissionRule struct {
	ID           uuid.UUID  `json:"id"`
	InsurerID    *uuid.UUID `json:"insurerId"`
	InsurerVU    string     `json:"insurerVu"`
	InsurerName  string     `json:"insurerName"`
	ContractType string     `json:"contractType"`
	Months       int        `json:"months"`
}

// CommissionRuleKey names a rule: the insurer by VU number or id ("" for every insurer) and
// the contract type, a Sparte code or its group ("" for every type).
type CommissionRuleKey struct {
	Insurer      string
	ContractType string
}

// MaxLiabilityMonths bounds a rule's months (the schema's bound: ten years).
const MaxLiabilityMonths = 120

// ListCommissionRules lists the company's liability rules: those of every insurer first, then
// by insurer VU number and contract type.
func (s *Service) ListCommissionRules(ctx context.Context, companyID uuid.UUID) ([]CommissionRule, error) {
	out := []CommissionRule{}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		rows, err := db.CommissionLiabilityRule.Query().Where(commissionliabilityrule.CompanyID(companyID)).All(ctx)
		if err != nil {
			return err
		}
		names, err := insurerNames(ctx, db, rows)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, newCommissionRule(r, names))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list commission rules: %w", err)
	}
	sortCommissionRules(out)
	return out, nil
}

// SetCommissionRule stores the rule of key with months: a new rule, or the new months of the
// rule of that key (created false). The report reads the rule from its next request on.
func (s *Service) SetCommissionRule(ctx context.Context, companyID uuid.UUID, key CommissionRuleKey, months int) (CommissionRule, bool, error) {
	var v errs.Invalid
	key = checkRuleKey(&v, key)
	v.Check("months", months >= 0 && months <= MaxLiabilityMonths, "out_of_range",
		fmt.Sprintf("must be 0 (not liable) to %d", MaxLiabilityMonths))
	if err := v.Err(); err != nil {
		return CommissionRule{}, false, err
	}
	var (
		out     CommissionRule
		created bool
	)
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		ins, err := findRuleInsurer(ctx, db, key.Insurer)
		if err != nil {
			return err
		}
		cur, err := ruleQuery(db, companyID, ins, key.ContractType).ForUpdate().Only(ctx)
		var r *ent.CommissionLiabilityRule
		switch {
		case ent.IsNotFound(err):
			created = true
			m := db.CommissionLiabilityRule.Create().SetCompanyID(companyID).SetContractType(key.ContractType).SetMonths(months)
			if ins != nil {
				m.SetInsurerID(ins.ID)
			}
			r, err = m.Save(ctx)
		case err == nil:
			r, err = cur.Update().SetMonths(months).Save(ctx)
		}
		if err != nil {
			return err
		}
		out = newCommissionRule(r, insurerMap(ins))
		return nil
	})
	if err != nil {
		return CommissionRule{}, false, fmt.Errorf("set commission rule: %w", err)
	}
	return out, created, nil
}

// DeleteCommissionRule removes the rule of key and returns it; the contracts it covered fall
// back to the next less specific rule, or the default.
func (s *Service) DeleteCommissionRule(ctx context.Context, companyID uuid.UUID, key CommissionRuleKey) (CommissionRule, error) {
	var v errs.Invalid
	key = checkRuleKey(&v, key)
	if err := v.Err(); err != nil {
		return CommissionRule{}, err
	}
	var out CommissionRule
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if _, err := db.Company.Get(ctx, companyID); err != nil {
			return errs.FromEnt(err, "company %s", companyID)
		}
		ins, err := findRuleInsurer(ctx, db, key.Insurer)
		if err != nil {
			return err
		}
		r, err := ruleQuery(db, companyID, ins, key.ContractType).Only(ctx)
		if ent.IsNotFound(err) {
			return errs.NotFound("no commission rule for insurer %q and contract type %q in company %s",
				key.Insurer, key.ContractType, companyID)
		}
		if err != nil {
			return err
		}
		out = newCommissionRule(r, insurerMap(ins))
		return db.CommissionLiabilityRule.DeleteOne(r).Exec(ctx)
	})
	if err != nil {
		return CommissionRule{}, fmt.Errorf("delete commission rule: %w", err)
	}
	return out, nil
}

// checkRuleKey trims key and checks its contract type: a Sparte of the GDV catalog (a code
// like 011 or a group like 010), or empty.
func checkRuleKey(v *errs.Invalid, key CommissionRuleKey) CommissionRuleKey {
	key.Insurer, key.ContractType = strings.TrimSpace(key.Insurer), strings.TrimSpace(key.ContractType)
	if key.ContractType != "" {
		_, known := gdv.Sparte(key.ContractType)
		v.Check("type", known && len(key.ContractType) == 3, "invalid_enum", "must be a Sparte code of the GDV catalog (e.g. 010)")
	}
	return key
}

// findRuleInsurer is the catalog's insurer of ref (a VU number or an id), nil for "".
func findRuleInsurer(ctx context.Context, db *ent.Client, ref string) (*ent.Insurer, error) {
	if ref == "" {
		return nil, nil
	}
	q := db.Insurer.Query()
	if id, err := uuid.Parse(ref); err == nil {
		q.Where(insurer.ID(id))
	} else {
		q.Where(insurer.VuNumber(ref))
	}
	ins, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errs.NotFound("insurer %s is not in the catalog (brokerdesk insurer list)", ref)
	}
	return ins, err
}

// ruleQuery selects the one rule of (company, insurer or none, contract type).
func ruleQuery(db *ent.Client, companyID uuid.UUID, ins *ent.Insurer, contractType string) *ent.CommissionLiabilityRuleQuery {
	q := db.CommissionLiabilityRule.Query().Where(commissionliabilityrule.CompanyID(companyID),
		commissionliabilityrule.ContractType(contractType))
	if ins == nil {
		return q.Where(commissionliabilityrule.InsurerIDIsNil())
	}
	return q.Where(commissionliabilityrule.InsurerID(ins.ID))
}

// insurerNames loads the insurers the rules name.
func insurerNames(ctx context.Context, db *ent.Client, rows []*ent.CommissionLiabilityRule) (map[uuid.UUID]*ent.Insurer, error) {
	var ids []uuid.UUID
	for _, r := range rows {
		if r.InsurerID != nil {
			ids = append(ids, *r.InsurerID)
		}
	}
	ins, err := db.Insurer.Query().Where(insurer.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]*ent.Insurer{}
	for _, i := range ins {
		out[i.ID] = i
	}
	return out, nil
}

func insurerMap(ins *ent.Insurer) map[uuid.UUID]*ent.Insurer {
	if ins == nil {
		return nil
	}
	return map[uuid.UUID]*ent.Insurer{ins.ID: ins}
}

func newCommissionRule(r *ent.CommissionLiabilityRule, ins map[uuid.UUID]*ent.Insurer) CommissionRule {
	out := CommissionRule{ID: r.ID, InsurerID: r.InsurerID, ContractType: r.ContractType, Months: r.Months}
	if r.InsurerID != nil {
		if i := ins[*r.InsurerID]; i != nil {
			out.InsurerVU, out.InsurerName = i.VuNumber, i.Name
		}
	}
	return out
}

// sortCommissionRules orders rules of every insurer first, then by VU number and contract type.
func sortCommissionRules(rs []CommissionRule) {
	slices.SortFunc(rs, func(a, b CommissionRule) int {
		if (a.InsurerID == nil) != (b.InsurerID == nil) {
			if a.InsurerID == nil {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.InsurerVU, b.InsurerVU), cmp.Compare(a.ContractType, b.ContractType))
	})
}
