// Package points is the company's points balance and its one ledger (point_entries): what
// e-mail sending and contract extraction pay with (issue 25: one ledger for both). The operator
// grants points (brokerdesk points grant, app/operator); the areas take and refund them here,
// in the caller's request or job transaction (tenancy.Client), so a charge commits or rolls
// back with what it paid for.
package points

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/companypoints"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// For names what a ledger line paid for: one of the ids is set (an e-mail or an extraction).
type For struct {
	EmailID      *uuid.UUID
	ExtractionID *uuid.UUID
}

// Take takes n points from the company's balance with one conditional UPDATE
// (balance = balance - n WHERE balance >= n): concurrent takers queue on the row and each sees
// the balance the one before left, so the balance never goes below zero (the CHECK
// tenant_company_points_not_negative is the floor beneath). No row changed: 402
// insufficient_points, whose detail says what costs n (what, e.g. "sending this e-mail costs
// %d points (one per recipient)"). Take writes no ledger line: the caller writes it with
// Charge once the paid-for row has its id.
func Take(ctx context.Context, n int64, what string) error {
	if n <= 0 {
		return nil
	}
	db := tenancy.Client(ctx)
	k, err := db.CompanyPoints.Update().Where(companypoints.BalanceGTE(n)).AddBalance(-n).Save(ctx)
	if err != nil {
		return fmt.Errorf("take %d points: %w", n, err)
	}
	if k == 1 {
		return nil
	}
	var balance int64
	if p, err := db.CompanyPoints.Query().Only(ctx); err == nil {
		balance = p.Balance
	} else if !ent.IsNotFound(err) {
		return fmt.Errorf("read points: %w", err)
	}
	return errs.PaymentRequired("insufficient_points", "%s; the company has %d", fmt.Sprintf(what, n), balance)
}

// Charge writes the ledger line of n points taken (Take) for reason ("email", "extraction").
func Charge(ctx context.Context, n int64, reason string, f For) error {
	if n <= 0 {
		return nil
	}
	return ledger(ctx, -n, reason, f)
}

// Refund gives n points back (a send or an extraction that failed for good) and writes the
// ledger line "refund" naming what it was for.
func Refund(ctx context.Context, n int64, f For) error {
	if n <= 0 {
		return nil
	}
	if _, err := tenancy.Client(ctx).CompanyPoints.Update().AddBalance(n).Save(ctx); err != nil {
		return fmt.Errorf("refund %d points: %w", n, err)
	}
	return ledger(ctx, n, "refund", f)
}

// ledger writes one line of the points ledger: a charge (negative) or a refund (positive);
// grants are the operator's.
func ledger(ctx context.Context, delta int64, reason string, f For) error {
	err := tenancy.Client(ctx).PointEntry.Create().SetDelta(delta).SetReason(reason).
		SetNillableEmailID(f.EmailID).SetNillableExtractionID(f.ExtractionID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("points ledger: %w", err)
	}
	return nil
}
