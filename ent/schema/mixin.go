package schema

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"
	"github.com/google/uuid"

	gen "github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// newID returns a time-ordered UUIDv7, so new rows land at the end of the primary key index.
func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// IDMixin gives an entity a UUID primary key.
type IDMixin struct{ mixin.Schema }

// Fields of IDMixin.
func (IDMixin) Fields() []ent.Field {
	return []ent.Field{field.UUID("id", uuid.UUID{}).Default(newID).Immutable()}
}

// TimeMixin adds created_at and updated_at (the API's createdAt, updatedAt).
type TimeMixin struct{ mixin.Schema }

// Fields of TimeMixin.
func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// VersionMixin adds version, bumped by every update; ETags are derived from it.
type VersionMixin struct{ mixin.Schema }

// Fields of VersionMixin.
func (VersionMixin) Fields() []ent.Field {
	return []ent.Field{field.Int64("version").Default(1)}
}

// Hooks of VersionMixin.
func (VersionMixin) Hooks() []ent.Hook {
	type versioned interface{ AddVersion(int64) }
	return []ent.Hook{func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if m.Op().Is(ent.OpUpdate | ent.OpUpdateOne) {
				if v, ok := m.(versioned); ok {
					v.AddVersion(1)
				}
			}
			return next.Mutate(ctx, m)
		})
	}}
}

// TenantMixin makes an entity company data: company_id is set from the pinned company, never
// from input, cannot change, and every query and mutation is filtered by it. Row-level security
// (migrations/) enforces the same boundary in PostgreSQL.
type TenantMixin struct{ mixin.Schema }

// Fields of TenantMixin.
func (TenantMixin) Fields() []ent.Field {
	return []ent.Field{field.UUID("company_id", uuid.UUID{}).Immutable()}
}

// Edges of TenantMixin.
func (TenantMixin) Edges() []ent.Edge {
	return []ent.Edge{edge.To("company", Company.Type).Field("company_id").Unique().Required().Immutable()}
}

// Indexes of TenantMixin.
func (TenantMixin) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id")}
}

// Policy of TenantMixin.
func (TenantMixin) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterByCompany()},
		Mutation: privacy.MutationPolicy{rule.FilterByCompany()},
	}
}

// Hooks of TenantMixin.
func (TenantMixin) Hooks() []ent.Hook {
	type tenantCreate interface {
		CompanyID() (uuid.UUID, bool)
		SetCompanyID(uuid.UUID)
	}
	return []ent.Hook{func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if !m.Op().Is(ent.OpCreate) {
				return next.Mutate(ctx, m)
			}
			tm, ok := m.(tenantCreate)
			if !ok {
				return nil, fmt.Errorf("tenant mixin: unexpected mutation %T", m)
			}
			pinned, ok := tenancy.CompanyID(ctx)
			given, set := tm.CompanyID()
			switch {
			case ok && set && given != pinned:
				return nil, fmt.Errorf("tenant mixin: company_id %s differs from the pinned company", given)
			case ok:
				tm.SetCompanyID(pinned)
			case !set:
				return nil, fmt.Errorf("tenant mixin: no company in context")
			}
			return next.Mutate(ctx, m)
		})
	}}
}

// ExternalRefMixin adds external_references: the ids a record has in callers' systems. A hook
// keeps the external_refs lookup table, unique per (company, resource, source, externalId), in
// the same transaction, so one external id never names two records.
type ExternalRefMixin struct {
	mixin.Schema
	// Resource is the API resource name stored in the lookup table, e.g. "user".
	Resource string
}

// Fields of ExternalRefMixin.
func (ExternalRefMixin) Fields() []ent.Field {
	return []ent.Field{field.JSON("external_references", []schematype.ExternalRef{}).Optional()}
}

// Hooks of ExternalRefMixin.
func (m ExternalRefMixin) Hooks() []ent.Hook {
	type refMutation interface {
		ent.Mutation
		ID() (uuid.UUID, bool)
		ExternalReferences() ([]schematype.ExternalRef, bool)
		ExternalReferencesCleared() bool
		Client() *gen.Client
	}
	return []ent.Hook{func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, mu ent.Mutation) (ent.Value, error) {
			rm, ok := mu.(refMutation)
			if !ok || !mu.Op().Is(ent.OpCreate|ent.OpUpdateOne|ent.OpDeleteOne) {
				return next.Mutate(ctx, mu)
			}
			refs, changed := rm.ExternalReferences()
			cleared := rm.ExternalReferencesCleared()
			id, hasID := rm.ID()
			// A new row has no references yet: only updates and deletes clear the old ones (the
			// DELETE was a round trip per created contact and contract, e.g. in portfolio commits).
			if mu.Op().Is(ent.OpDeleteOne) || cleared || changed {
				if hasID && !mu.Op().Is(ent.OpCreate) {
					if _, err := rm.Client().ExternalRef.Delete().
						Where(externalref.Resource(m.Resource), externalref.ResourceID(id)).Exec(ctx); err != nil {
						return nil, fmt.Errorf("clear external references: %w", err)
					}
				}
			}
			v, err := next.Mutate(ctx, mu)
			if err != nil || !changed || len(refs) == 0 {
				return v, err
			}
			if !hasID { // the id default is applied before hooks run, so this is a bug
				return nil, fmt.Errorf("external references: mutation has no id")
			}
			bulk := make([]*gen.ExternalRefCreate, 0, len(refs))
			for _, r := range refs {
				bulk = append(bulk, rm.Client().ExternalRef.Create().
					SetResource(m.Resource).SetResourceID(id).SetSource(r.Source).SetExternalID(r.ExternalID))
			}
			if err := rm.Client().ExternalRef.CreateBulk(bulk...).Exec(ctx); err != nil {
				return nil, fmt.Errorf("store external references: %w", err)
			}
			return v, nil
		})
	}}
}
