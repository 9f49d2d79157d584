package emails

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/companypoints"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Points pay for sending: one point per distinct recipient (to, cc and bcc together), taken in
// the transaction that stores the message and refunded when the SMTP server refuses it for
// good. The operator grants them (brokerdesk points grant); a correspondence case with an
// insurer costs none (Outgoing.Free).

// takePoints takes n points from the company's balance with one conditional UPDATE
// (balance = balance - n WHERE balance >= n): concurrent sends queue on the row and each sees
// the balance the one before left, so the balance never goes below zero (the CHECK
// tenant_company_points_not_negative is the floor beneath). No row changed: 402.
func takePoints(ctx context.Context, n int64) error {
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
	return errs.PaymentRequired("insufficient_points",
		"sending this e-mail costs %d points (one per recipient); the company has %d", n, balance)
}

// refundPoints gives n points back (a send that failed for good) and writes the ledger line.
func refundPoints(ctx context.Context, n int64, emailID uuid.UUID) error {
	if n <= 0 {
		return nil
	}
	if _, err := tenancy.Client(ctx).CompanyPoints.Update().AddBalance(n).Save(ctx); err != nil {
		return fmt.Errorf("refund %d points: %w", n, err)
	}
	return ledger(ctx, n, "refund", &emailID)
}

// ledger writes one line of the points ledger: a charge (negative) or a refund (positive) of an
// e-mail; grants are the operator's.
func ledger(ctx context.Context, delta int64, reason string, emailID *uuid.UUID) error {
	err := tenancy.Client(ctx).PointEntry.Create().SetDelta(delta).SetReason(reason).SetNillableEmailID(emailID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("points ledger: %w", err)
	}
	return nil
}
