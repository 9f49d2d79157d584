package emails

import (
	"context"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/points"
)

// Points pay for sending: one point per distinct recipient (to, cc and bcc together), taken in
// the transaction that stores the message and refunded when the SMTP server refuses it for
// good. The operator grants them (brokerdesk points grant); a correspondence case with an
// insurer costs none (Outgoing.Free). The balance and the ledger are app/platform/points,
// shared with contract extraction (one ledger).

// takePoints takes n points for an e-mail (402 when the balance is lower).
func takePoints(ctx context.Context, n int64) error {
	return points.Take(ctx, n, "sending this e-mail costs %d points (one per recipient)")
}

// refundPoints gives n points back (a send that failed for good) and writes the ledger line.
func refundPoints(ctx context.Context, n int64, emailID uuid.UUID) error {
	return points.Refund(ctx, n, points.For{EmailID: &emailID})
}

// chargePoints writes the ledger line of the n points taken for the stored e-mail.
func chargePoints(ctx context.Context, n int64, emailID uuid.UUID) error {
	return points.Charge(ctx, n, "email", points.For{EmailID: &emailID})
}
