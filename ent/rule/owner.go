package rule

import (
	"context"

	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/entql"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// credentialFilter is the filter of an entity that names the credential owning it: an API key
// (credential_id), or an OAuth client (oauth_client_id) and, for a user's grant, its user
// (oauth_user_id).
type credentialFilter interface {
	WhereCredentialID(entql.ValueP)
	WhereOauthClientID(entql.ValueP)
	WhereOauthUserID(entql.ValueP)
}

// FilterOwnCredential narrows queries, updates and deletes to the rows the credential of ctx
// owns (webhook endpoints, issue 20 §5): its key's rows for a key; for an OAuth token the rows
// of its client and user (no user: the client's client credentials). A credential that
// administers the company (policy.IsAdmin: admin:write, an admin's when user-bound) and work
// without a credential (the dispatcher, the delivery worker, operator commands) are not
// narrowed. The row-level security policy endpoint_owner says the same by user, the part the
// database knows (migrations/20261127130400_webhook_endpoint_owner.sql).
func FilterOwnCredential() privacy.QueryMutationRule {
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		p, ok := tenancy.PrincipalFrom(ctx)
		if !ok || policy.Default().IsAdmin(p) {
			return privacy.Skip
		}
		cf, ok := f.(credentialFilter)
		if !ok {
			return privacy.Denyf("unexpected filter type %T", f)
		}
		if p.Kind != tenancy.KindOAuth {
			cf.WhereCredentialID(entql.ValueEQ(p.KeyID))
			return privacy.Skip
		}
		cf.WhereCredentialID(entql.ValueNil())
		cf.WhereOauthClientID(entql.ValueEQ(p.ClientID))
		if p.HasUser() {
			cf.WhereOauthUserID(entql.ValueEQ(p.UserID))
		} else {
			cf.WhereOauthUserID(entql.ValueNil())
		}
		return privacy.Skip
	})
}

// FilterOwnCredentialEvents narrows the events about webhook endpoints (webhook_endpoint.*) as
// FilterOwnCredential narrows the endpoints: an event is visible to the credential the
// endpoint belonged to when it was recorded (its data's credentialId, or for OAuth its
// oauthClientId with the grant's user in owner_id) and to admin credentials; other events are
// not narrowed here. The policy event_endpoint_owner says the same by user
// (migrations/20261127130500_webhook_endpoint_events.sql).
func FilterOwnCredentialEvents() privacy.QueryMutationRule {
	return selectorRule(func(ctx context.Context) (func(*sql.Selector), bool) {
		p, ok := tenancy.PrincipalFrom(ctx)
		if !ok || policy.Default().IsAdmin(p) {
			return nil, false
		}
		return func(s *sql.Selector) {
			own := sql.P(func(b *sql.Builder) {
				if p.Kind != tenancy.KindOAuth {
					b.WriteString(s.C("data") + "->>'credentialId' = ").Arg(p.KeyID.String())
					return
				}
				b.WriteString(s.C("data") + "->>'credentialId' IS NULL AND " + s.C("data") + "->>'oauthClientId' = ").
					Arg(p.ClientID.String())
				if p.HasUser() {
					b.WriteString(" AND " + s.C("owner_id") + " = ").Arg(p.UserID)
				} else {
					b.WriteString(" AND " + s.C("owner_id") + " IS NULL")
				}
			})
			s.Where(sql.Or(sql.P(func(b *sql.Builder) {
				b.WriteString(s.C("type") + " NOT LIKE 'webhook\\_endpoint.%'")
			}), own))
		}, true
	})
}
