package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
)

// pointsUsage is the points part of the usage text.
const pointsUsage = `points grant --company ID --points N [--reason R]   add points (sending e-mail costs one per recipient)
  points balance --company ID`

// points handles `brokerdesk points grant|balance`: the company's points, which pay for sending
// e-mail (POST /emails answers 402 without enough). Grants are the operator's; each is a line
// of the ledger (point_entries) beside the sends' charges and refunds.
func (e env) points(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "grant" && args[0] != "balance") {
		return fmt.Errorf("points: want grant or balance\n  %s", pointsUsage)
	}
	fs := e.flags("points " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	n := fs.Int64("points", 0, "how many points to add (grant)")
	reason := fs.String("reason", "", "why, for the ledger (grant; default \"grant\")")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	co, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	var balance int64
	if args[0] == "grant" {
		if *n <= 0 {
			return fmt.Errorf("points grant: --points must be a positive number")
		}
		balance, err = svc.GrantPoints(ctx, co, *n, *reason)
	} else {
		balance, err = svc.PointsBalance(ctx, co)
	}
	if err != nil {
		return explain(err)
	}
	out := struct {
		CompanyID string `json:"companyId"`
		Balance   int64  `json:"balance"`
	}{co.String(), balance}
	return e.print(*asJSON, out, func(w io.Writer) {
		fmt.Fprintln(w, "balance "+strconv.FormatInt(balance, 10))
	})
}
