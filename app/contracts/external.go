package contracts

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Upsert creates or updates the contract that carries the external reference ref: created
// with in's fields and ref among its references, or updated with every field replaced by in's
// (a PUT), references replaced by in's when given (ref always stays). A contract carrying ref
// that the caller may not see (its contact is invisible) is never taken over: 409
// external_reference_taken (contacts.RefTaken). Concurrent calls for one reference are
// serialised by a transaction-scoped advisory lock.
func (s *Service) Upsert(ctx context.Context, ref schematype.ExternalRef, in Input) (Contract, bool, error) {
	db := tenancy.Client(ctx)
	company, _ := tenancy.CompanyID(ctx)
	sum := sha256.Sum256([]byte("contract-ref\x00" + company.String() + "\x00" + ref.Source + "\x00" + ref.ExternalID))
	if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
		return Contract{}, false, fmt.Errorf("lock external reference: %w", err)
	}
	r, err := db.ExternalRef.Query().Where(externalref.Resource(RefResource), externalref.Source(ref.Source),
		externalref.ExternalID(ref.ExternalID)).Only(ctx)
	if ent.IsNotFound(err) {
		if !slices.Contains(in.ExternalReferences, ref) {
			in.ExternalReferences = append(slices.Clone(in.ExternalReferences), ref)
		}
		if err := checkRefCount(in.ExternalReferences); err != nil {
			return Contract{}, false, err
		}
		c, err := s.Create(ctx, in, Extra{})
		return c, true, err
	}
	if err != nil {
		return Contract{}, false, fmt.Errorf("find contract by external reference: %w", err)
	}
	cur, err := s.Lock(ctx, r.ResourceID)
	if errors.Is(err, errs.ErrNotFound) {
		return Contract{}, false, contacts.RefTaken("contract", ref)
	}
	if err != nil {
		return Contract{}, false, err
	}
	if in.ExternalReferences == nil {
		in.ExternalReferences = cur.ExternalReferences
	}
	if !slices.Contains(in.ExternalReferences, ref) {
		in.ExternalReferences = append(slices.Clone(in.ExternalReferences), ref)
	}
	if err := checkRefCount(in.ExternalReferences); err != nil {
		return Contract{}, false, err
	}
	c, _, err := s.Update(ctx, cur, in, Extra{})
	return c, false, err
}

func checkRefCount(refs []schematype.ExternalRef) error {
	if len(refs) > MaxExternalRefs {
		return invalidRefs()
	}
	return nil
}
