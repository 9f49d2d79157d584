package contracts

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /contracts. Nil fields do not filter.
type ListFilter struct {
	ContactID    *uuid.UUID
	InsurerID    *uuid.UUID
	Type         *string
	Status       *string
	UpdatedSince *time.Time
}

// oldestFirst orders GET /contracts: createdAt, then id.
var oldestFirst = paging.ByCreated(func(c Contract) (time.Time, uuid.UUID) { return c.CreatedAt, c.ID })

// List returns a page of the contracts matching f, oldest first (createdAt, then id), each with
// its insurer.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]Contract, error) {
	return oldestFirst.Rows(page, "contracts", func(k paging.Query) ([]Contract, error) {
		q := tenancy.Client(ctx).Contract.Query()
		q.Where(paging.If(f.ContactID, contract.ContactID)...)
		q.Where(paging.If(f.InsurerID, contract.InsurerID)...)
		q.Where(paging.If(f.Type, contract.Type)...)
		q.Where(paging.Enum(f.Status, contract.StatusEQ)...)
		q.Where(paging.If(f.UpdatedSince, contract.UpdatedAtGTE)...)
		rows, err := q.WithInsurer().Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
		out := make([]Contract, len(rows))
		for i, c := range rows {
			out[i] = Contract{c}
		}
		return out, err
	})
}

// Insurers returns the catalog, by name, optionally only the entry of one VU number.
func (s *Service) Insurers(ctx context.Context, vuNumber string) ([]*ent.Insurer, error) {
	q := tenancy.Client(ctx).Insurer.Query()
	if vuNumber != "" {
		q.Where(insurer.VuNumber(vuNumber))
	}
	rows, err := q.Order(ent.Asc(insurer.FieldName), ent.Asc(insurer.FieldVuNumber)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list insurers: %w", err)
	}
	return rows, nil
}

// Types returns the contract types: the GDV Sparten with their labels.
func Types() []TypeView {
	sp := gdv.Sparten()
	out := make([]TypeView, len(sp))
	for i, c := range sp {
		out[i] = TypeView{Code: c.Code, Label: c.De, LabelEn: c.En}
	}
	return out
}

// jsonRound is v after a JSON round trip, as a JSON column gives it back.
func jsonRound(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
