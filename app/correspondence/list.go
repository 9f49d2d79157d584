package correspondence

import (
	"context"
	"encoding/json"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent/correspondencecase"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /correspondence-cases. Nil or empty fields do not filter.
type ListFilter struct {
	UpdatedSince *time.Time
	ContactID    *uuid.UUID
	ContractID   *uuid.UUID
	Statuses     []string
}

// oldestFirst orders the list by (created_at, id), as contracts and documents.
var oldestFirst = paging.ByCreated(func(c Case) (time.Time, uuid.UUID) { return c.CreatedAt, c.ID })

// List returns a page of the cases matching f, oldest first.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]Case, error) {
	return oldestFirst.Rows(page, "correspondence cases", func(k paging.Query) ([]Case, error) {
		q := tenancy.Client(ctx).CorrespondenceCase.Query()
		q.Where(paging.If(f.UpdatedSince, correspondencecase.UpdatedAtGTE)...)
		q.Where(paging.If(f.ContactID, correspondencecase.ContactID)...)
		q.Where(paging.If(f.ContractID, namesContract)...)
		q.Where(paging.In(f.Statuses, correspondencecase.StatusIn)...)
		rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
		if err != nil {
			return nil, err
		}
		return withInsurers(ctx, rows)
	})
}

// namesContract matches cases whose contract_ids hold id (jsonb containment of a one-element
// array: ent has no predicate for an element of a JSON array column).
func namesContract(id uuid.UUID) predicate.CorrespondenceCase {
	one, _ := json.Marshal([]uuid.UUID{id})
	return func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString(s.C(correspondencecase.FieldContractIds)).WriteString(" @> ").Arg(string(one)).WriteString("::jsonb")
		}))
	}
}
