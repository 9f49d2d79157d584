package leads

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Upsert creates or updates the lead that carries the external reference ref. Created is a
// lead with in's fields and ref among its references; updated is the existing lead with its
// data fields (names, e-mail, phone, source, notes, additional fields) replaced by in's, its
// stage and owner changed only when in names them, and its references replaced by in's when
// given (ref always stays). A lead carrying ref that the caller may not see is never taken
// over: 409 external_reference_taken (contacts.RefTaken). Concurrent calls for one reference
// are serialised by a transaction-scoped advisory lock, so the second updates what the first
// created.
func (s *Service) Upsert(ctx context.Context, ref schematype.ExternalRef, in Input) (Lead, bool, error) {
	db := tenancy.Client(ctx)
	company, _ := tenancy.CompanyID(ctx)
	sum := sha256.Sum256([]byte("lead-ref\x00" + company.String() + "\x00" + ref.Source + "\x00" + ref.ExternalID))
	lock := int64(binary.BigEndian.Uint64(sum[:8]))
	if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lock); err != nil {
		return Lead{}, false, fmt.Errorf("lock external reference: %w", err)
	}
	r, err := db.ExternalRef.Query().Where(externalref.Resource(refResource), externalref.Source(ref.Source),
		externalref.ExternalID(ref.ExternalID)).Only(ctx)
	if ent.IsNotFound(err) {
		if !slices.Contains(in.ExternalReferences, ref) {
			in.ExternalReferences = append(slices.Clone(in.ExternalReferences), ref)
		}
		if err := checkRefCount(in.ExternalReferences); err != nil {
			return Lead{}, false, err
		}
		l, err := s.create(ctx, in, lead.OriginExternal)
		return l, true, err
	}
	if err != nil {
		return Lead{}, false, fmt.Errorf("find lead by external reference: %w", err)
	}
	cur, err := s.Lock(ctx, r.ResourceID)
	if errors.Is(err, errs.ErrNotFound) {
		return Lead{}, false, contacts.RefTaken("lead", ref)
	}
	if err != nil {
		return Lead{}, false, err
	}
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
	if !slices.Contains(in.ExternalReferences, ref) {
		in.ExternalReferences = append(slices.Clone(in.ExternalReferences), ref)
	}
	if err := checkRefCount(in.ExternalReferences); err != nil {
		return Lead{}, false, err
	}
	l, err := s.Update(ctx, cur, in)
	return l, false, err
}

func checkRefCount(refs []schematype.ExternalRef) error {
	if len(refs) > MaxExternalRefs {
		return errs.InvalidField("externalReferences", "too_many",
			fmt.Sprintf("at most %d references, the one in the path included", MaxExternalRefs))
	}
	return nil
}

// upsert handles PUT /external/{source}/leads/{externalId}: 201 created, 200 updated.
func (h *Handler) upsert(c *fiber.Ctx) error {
	ref, perr := contacts.PathRef(c)
	var in Input
	err := httpx.Decode(c, &in)
	inv, invalid := err.(*errs.Invalid)
	switch {
	case err != nil && !invalid: // malformed body, wrong content type
		return err
	case perr != nil && invalid:
		perr.Errors = append(perr.Errors, inv.Errors...)
		return perr
	case perr != nil:
		return perr
	case err != nil:
		return err
	}
	l, created, err := h.svc.Upsert(c.UserContext(), ref, in)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, location(l), l.View(), l.Version)
	}
	return httpx.OK(c, l.View(), l.Version)
}
