package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Company is a brokerage: the tenant. Every live company has a sandbox twin (sandbox=true,
// live_company_id pointing back) that sk_test_ keys act on, with data of its own.
type Company struct{ ent.Schema }

// Mixin of Company.
func (Company) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TimeMixin{}, VersionMixin{}}
}

// Fields of Company.
func (Company) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxRuneLen(200),
		field.JSON("address", schematype.Address{}).Optional(),
		field.JSON("links", schematype.Links{}).Optional(),
		field.Strings("features").Default([]string{}),
		field.Enum("status").Values("active", "inactive").Default("active"),
		field.Bool("sandbox").Default(false).Immutable(),
		field.UUID("live_company_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// lead_rules: how intake recognises a duplicate of an open lead (docs/decisions/leads-and-intake.md).
		field.JSON("lead_rules", schematype.LeadRules{}).Default(schematype.DefaultLeadRules()),
		// email_tracking: whether open and click tracking may be used for the company's mail
		// (docs/decisions/email.md); a send asks for it, this allows it.
		field.Bool("email_tracking").Default(true),
	}
}

// Edges of Company.
func (Company) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("sandbox_twin", Company.Type).Unique().
			From("live_company").Field("live_company_id").Unique().Immutable(),
	}
}

// Policy of Company: a request sees its own company only; only the operator changes companies.
func (Company) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterOwnCompany()},
		Mutation: privacy.MutationPolicy{rule.OperatorOnly()},
	}
}
