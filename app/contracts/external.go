package contracts

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Upsert creates or updates the contract that carries the external reference ref: created
// with in's fields and ref among its references, or updated with every field replaced by in's
// (a PUT), references replaced by in's when given (ref always stays). A contract carrying ref
// that the caller may not see (its contact is invisible) is never taken over: 409
// external_reference_taken. Concurrent calls for one reference are serialised (extref.Upsert).
func (s *Service) Upsert(ctx context.Context, ref schematype.ExternalRef, in Input) (Contract, bool, error) {
	return extref.Upsert[*ent.Contract, Input, Contract]{
		Resource: RefResource,
		Refs:     func(in *Input) *[]schematype.ExternalRef { return &in.ExternalReferences },
		Create: func(ctx context.Context, in Input) (Contract, error) {
			return s.Create(ctx, in, Extra{})
		},
		Lock: s.Lock,
		Merge: func(cur *ent.Contract, in Input) (Input, error) {
			if in.ExternalReferences == nil {
				in.ExternalReferences = cur.ExternalReferences
			}
			return in, nil
		},
		Update: func(ctx context.Context, cur *ent.Contract, in Input) (Contract, error) {
			return s.Update(ctx, cur, in, Extra{})
		},
		CountPathRef: true,
	}.Do(ctx, ref, in)
}

// upsert handles PUT /external/{source}/contracts/{externalId}: 201 created, 200 updated.
func (h *Handler) upsert(c *fiber.Ctx) error {
	return extref.Put[Input, Contract]{Upsert: h.svc.Upsert, Location: location,
		Version: func(ct Contract) int64 { return ct.Version }, View: httpx.View(Contract.View)}.Handle(c)
}
