package signatures

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /signature-requests. Nil or empty fields do not filter.
type ListFilter struct {
	UpdatedSince *time.Time
	ContactID    *uuid.UUID
	Statuses     []string
}

// oldestFirst orders the list by (created_at, id), as documents and correspondence cases.
var oldestFirst = paging.ByCreated(func(v View) (time.Time, uuid.UUID) { return v.CreatedAt, v.ID })

// List returns a page of the requests matching f, oldest first, with their signers (one query
// for the page's signers). Requests of the page that are due are expired first, so the page
// never shows a pending request past its expiry; a status filter applies to the rows as
// stored, so such a request can appear on a page filtered by pending, shown expired, once.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]View, error) {
	return oldestFirst.Rows(page, "signature requests", func(k paging.Query) ([]View, error) {
		q := tenancy.Client(ctx).SignatureRequest.Query()
		q.Where(paging.If(f.UpdatedSince, signaturerequest.UpdatedAtGTE)...)
		q.Where(paging.If(f.ContactID, signaturerequest.ContactID)...)
		q.Where(paging.In(f.Statuses, signaturerequest.StatusIn)...)
		rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
		if err != nil {
			return nil, err
		}
		return s.views(ctx, rows)
	})
}

// views are the views of rows, due ones expired first, with their signers in one query.
func (s *Service) views(ctx context.Context, rows []*ent.SignatureRequest) ([]View, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		var err error
		if rows[i], err = s.m.expireDue(ctx, r); err != nil {
			return nil, err
		}
		ids[i] = r.ID
	}
	signers, err := tenancy.Client(ctx).SignatureSigner.Query().Where(signaturesigner.RequestIDIn(ids...)).
		Order(ent.Asc(signaturesigner.FieldRequestID), ent.Asc(signaturesigner.FieldPosition)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load signers of signature requests: %w", err)
	}
	by := map[uuid.UUID][]*ent.SignatureSigner{}
	for _, sg := range signers {
		by[sg.RequestID] = append(by[sg.RequestID], sg)
	}
	out := make([]View, len(rows))
	for i, r := range rows {
		out[i] = newView(r, by[r.ID])
	}
	return out, nil
}
