// Package rule holds the ent privacy rules. Each constructor decides one thing and says what.
// Row-level security in PostgreSQL enforces the same company boundary underneath: a bug in one
// layer must not leak data.
package rule

import (
	"context"

	"entgo.io/ent/entql"

	"github.com/brokerdesk/brokerdesk/ent"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// FilterByCompany narrows every query and mutation of a tenant entity to the company ctx is
// pinned to. With no company it denies, except for operator work (the CLI), which may act on
// every company and is still narrowed when it pinned one. It returns Skip, never Allow, so the
// schema's own policy still runs (an Allow in a mixin would end the evaluation).
func FilterByCompany() privacy.QueryMutationRule {
	return privacy.FilterFunc(filterByCompany)
}

func filterByCompany(ctx context.Context, f privacy.Filter) error {
	type companyFilter interface{ WhereCompanyID(entql.ValueP) }
	id, ok := tenancy.CompanyID(ctx)
	if !ok {
		if tenancy.IsOperator(ctx) {
			return privacy.Skip
		}
		return privacy.Denyf("no company in context")
	}
	cf, ok := f.(companyFilter)
	if !ok {
		return privacy.Denyf("unexpected filter type %T", f)
	}
	cf.WhereCompanyID(entql.ValueEQ(id))
	return privacy.Skip
}

// FilterOwnCompany narrows queries of the companies table to the pinned company itself.
func FilterOwnCompany() privacy.QueryMutationRule {
	type idFilter interface{ WhereID(entql.ValueP) }
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		id, ok := tenancy.CompanyID(ctx)
		if !ok {
			if tenancy.IsOperator(ctx) {
				return privacy.Skip
			}
			return privacy.Denyf("no company in context")
		}
		cf, ok := f.(idFilter)
		if !ok {
			return privacy.Denyf("unexpected filter type %T", f)
		}
		cf.WhereID(entql.ValueEQ(id))
		return privacy.Skip
	})
}

// OperatorOnly denies a mutation unless it is operator work: companies are activated and
// changed by the operator, never through the API.
func OperatorOnly() privacy.MutationRule {
	return privacy.MutationRuleFunc(func(ctx context.Context, _ ent.Mutation) error {
		if tenancy.IsOperator(ctx) {
			return privacy.Skip
		}
		return privacy.Denyf("only the operator changes companies")
	})
}
