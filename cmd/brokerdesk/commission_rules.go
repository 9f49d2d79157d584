package main

import (
	"context"
	"fmt"
	"io"

	"github.com/brokerdesk/brokerdesk/app/operator"
)

// commissionRuleUsage is the commission liability rule part of the usage text.
const commissionRuleUsage = `commission-rule list --company ID
  commission-rule set --company ID [--insurer VU] [--type 010] --months N   months of cancellation liability (0-120)
  commission-rule delete --company ID [--insurer VU] [--type 010]`

// commissionRule handles `brokerdesk commission-rule list|set|delete`: the company's rules of
// how long commission stays liable to be clawed back (GET /reports/cancellation-liability).
// A rule names an insurer (VU number or id), a contract type (a Sparte code or its group), both
// or neither; the most specific one covering a contract wins, and without any the defaults
// hold (60 months for life and health, 12 for the rest). The API only reads them.
func (e env) commissionRule(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("commission-rule: want list, set or delete\n  %s", commissionRuleUsage)
	}
	fs := e.flags("commission-rule " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	var ins, typ *string
	months := new(int)
	switch args[0] {
	case "set", "delete":
		ins = fs.String("insurer", "", "the insurer's VU number or id (default: every insurer)")
		typ = fs.String("type", "", "the contract type, a Sparte code or its group like 010 (default: every type)")
		if args[0] == "set" {
			months = fs.Int("months", -1, "months the commission stays liable (0: not liable)")
		}
	case "list":
	default:
		return fmt.Errorf("commission-rule: unknown subcommand %q\n  %s", args[0], commissionRuleUsage)
	}
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	co, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	if args[0] == "set" && *months < 0 {
		return fmt.Errorf("commission-rule set: --months is required")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	line := func(r operator.CommissionRule) string {
		insurer, typ := "every insurer", "every type"
		if r.InsurerID != nil {
			insurer = fmt.Sprintf("insurer %s %s", r.InsurerVU, r.InsurerName)
		}
		if r.ContractType != "" {
			typ = "type " + r.ContractType
		}
		return fmt.Sprintf("%s  %s, %s: %d months", r.ID, insurer, typ, r.Months)
	}
	switch args[0] {
	case "list":
		rs, err := svc.ListCommissionRules(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, rs, func(w io.Writer) {
			for _, r := range rs {
				fmt.Fprintln(w, line(r))
			}
			fmt.Fprintln(w, "without a rule: 60 months for life (010-019) and health (020-029), 12 for the other types")
		})
	case "delete":
		r, err := svc.DeleteCommissionRule(ctx, co, operator.CommissionRuleKey{Insurer: *ins, ContractType: *typ})
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, r, func(w io.Writer) { fmt.Fprintln(w, "deleted", line(r)) })
	}
	r, created, err := svc.SetCommissionRule(ctx, co, operator.CommissionRuleKey{Insurer: *ins, ContractType: *typ}, *months)
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, r, func(w io.Writer) {
		verb := "replaced"
		if created {
			verb = "added"
		}
		fmt.Fprintln(w, verb, line(r))
	})
}
