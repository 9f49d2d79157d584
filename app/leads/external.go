package leads

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Upsert creates or updates the lead that carries the external reference ref. Created is a
// lead with in's fields and ref among its references; updated is the existing lead with its
// data fields (names, e-mail, phone, source, notes, additional fields) replaced by in's, its
// stage and owner changed only when in names them, and its references replaced by in's when
// given (ref always stays). A lead carrying ref that the caller may not see is never taken
// over: 409 external_reference_taken. Concurrent calls for one reference are serialised, so
// the second updates what the first created (extref.Upsert).
func (s *Service) Upsert(ctx context.Context, ref schematype.ExternalRef, in Input) (Lead, bool, error) {
	return extref.Upsert[*ent.Lead, Input, Lead]{
		Resource: refResource,
		Refs:     func(in *Input) *[]schematype.ExternalRef { return &in.ExternalReferences },
		Create: func(ctx context.Context, in Input) (Lead, error) {
			return s.create(ctx, in, lead.OriginExternal)
		},
		Lock:         s.Lock,
		Merge:        mergeUpsert,
		Update:       s.Update,
		CountPathRef: true,
	}.Do(ctx, ref, in)
}

// mergeUpsert keeps the stage, owner and references of cur that in does not name.
func mergeUpsert(cur *ent.Lead, in Input) (Input, error) {
	old := inputOf(cur)
	if in.StageID == nil {
		in.StageID = old.StageID
	}
	if in.OwnerID == nil {
		in.OwnerID = old.OwnerID
	}
	if in.ExternalReferences == nil {
		in.ExternalReferences = old.ExternalReferences
	}
	return in, nil
}

// upsert handles PUT /external/{source}/leads/{externalId}: 201 created, 200 updated.
func (h *Handler) upsert(c *fiber.Ctx) error {
	return extref.Put[Input, Lead]{Upsert: h.svc.Upsert, Location: location,
		Version: func(l Lead) int64 { return l.Version }, View: httpx.View(Lead.View)}.Handle(c)
}
