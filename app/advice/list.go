package advice

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/advicerecord"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /advice-records. Nil fields do not filter.
type ListFilter struct {
	UpdatedSince *time.Time
	ContactID    *uuid.UUID
}

// oldestFirst orders the list by (created_at, id), as documents and correspondence cases.
var oldestFirst = paging.ByCreated(func(a *ent.AdviceRecord) (time.Time, uuid.UUID) { return a.CreatedAt, a.ID })

// List returns a page of the records matching f the caller sees, oldest first.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]*ent.AdviceRecord, error) {
	return oldestFirst.Rows(page, "advice records", func(k paging.Query) ([]*ent.AdviceRecord, error) {
		q := tenancy.Client(ctx).AdviceRecord.Query()
		q.Where(paging.If(f.UpdatedSince, advicerecord.UpdatedAtGTE)...)
		q.Where(paging.If(f.ContactID, advicerecord.ContactID)...)
		return q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}
