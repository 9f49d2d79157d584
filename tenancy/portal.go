package tenancy

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/migrations"
)

// portalPin is the statement that pins a transaction to one contact of a customer's portal
// session: the role brokerdesk_portal and visibility 'portal' with the contact (row-level
// security then shows that contact and what hangs off it, nothing owned by users), no user.
// The contact travels in app.visibility ('portal:<id>'), a setting the pipeline sets in every
// transaction: the policies read no other (test/schema TestSchema_PoliciesReadOnlyPinnedSettings).
const portalPin = `SELECT set_config('role', $1, true), set_config('app.company_id', $2, true),
	set_config('app.user_id', '', true), set_config('app.visibility', $3, true)`

func portalPinArgs(company, contact uuid.UUID) []any {
	return []any{migrations.RolePortal, company.String(), VisibilityPortal + ":" + contact.String()}
}

// PinPortal pins the transaction of ctx (tenancy.WithTx, a company-level one of company) to
// contact for the rest of it, and returns ctx marked alike (WithPortal) for the ent rules:
// app/portal found the customer's session in that transaction and serves its page in it. The
// pin guards against a wrong predicate or a forgotten filter in the portal's code, not against
// SQL the portal would run on purpose: the login role brokerdesk_app is a member of
// brokerdesk_portal and could RESET ROLE, as it could set any setting. The portal runs only ent
// queries and fixed statements, never SQL built from input.
func PinPortal(ctx context.Context, company, contact uuid.UUID) (context.Context, error) {
	if id, ok := CompanyID(ctx); !ok || id != company {
		return nil, fmt.Errorf("tenancy: portal pin of company %s in a transaction of another", company)
	}
	if _, err := Client(ctx).ExecContext(ctx, portalPin, portalPinArgs(company, contact)...); err != nil {
		return nil, fmt.Errorf("pin portal session: %w", err)
	}
	pctx := WithPortal(ctx, company, contact)
	return pctx, nil
}
