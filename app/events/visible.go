package events

import (
	"context"
	"slices"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/event"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Visible returns the query of the committed events the credential of ctx may receive, of the
// types want (every type when want is empty). GET /events pages through it and every webhook
// delivery reads its event through it (app/webhooks), so a credential's feed and its endpoints
// carry the same events. This is the one place that decides it:
//
//   - scope: only types whose scope (GET /event-types) the credential holds, allowed by its
//     user's role and the company's license (policy.Check);
//   - visibility: the transaction of ctx is pinned as the credential (a request's by the auth
//     middleware; a delivery's by the webhook worker, tenancy.WithPrincipal + Driver.BeginTx),
//     so row-level security and the ent privacy rules of events narrow the rows further for a
//     user-bound credential (the contacts visibility layer). Should that layer need a predicate
//     on the query as well, it goes here.
func Visible(ctx context.Context, authz *policy.Enforcer, want []string) (*ent.EventQuery, error) {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok {
		return nil, errs.Unauthenticated("missing_credential", "no credential")
	}
	allowed := make([]string, 0, len(Types))
	for _, t := range Types {
		if (len(want) == 0 || slices.Contains(want, t.Type)) && authz.Check(p, t.Scope) == nil {
			allowed = append(allowed, t.Type)
		}
	}
	return tenancy.Client(ctx).Event.Query().Where(event.TypeIn(allowed...), event.SeqNotNil()), nil
}
