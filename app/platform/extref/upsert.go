package extref

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Upsert is the recipe of PUT /external/{source}/<resource>/{externalId}: create the record
// carrying the reference, or update the one that does. What differs between resources is the
// fields; the skeleton is the same for all:
//
//   - concurrent upserts of one reference are serialised by a transaction-scoped advisory lock,
//     so the second updates what the first created;
//   - the lookup sees every record's references (Owner), and a record carrying the reference
//     that the caller may not see is never taken over: Lock answers errs.ErrNotFound and the
//     upsert answers 409 external_reference_taken (Taken);
//   - the reference always stays: it is added to the input's references when they lack it,
//     after Merge, before Create or Update.
//
// C is the locked current record, I the input, R what Create and Update return.
type Upsert[C, I, R any] struct {
	Resource string                                      // name in external_refs ("lead"); names it in errors
	Refs     func(*I) *[]schematype.ExternalRef          // the input's references
	Create   func(context.Context, I) (R, error)         // no record carries the reference
	Lock     func(context.Context, uuid.UUID) (C, error) // the carrier, locked; ErrNotFound when not visible
	Merge    func(C, I) (I, error)                       // optional: the update's input from the record and the request
	Update   func(context.Context, C, I) (R, error)
	// CountPathRef refuses more than MaxRefs references once the path's is added, with a detail
	// that says so (leads, contracts). Without it the resource's own validation counts them.
	CountPathRef bool
}

// Do creates (created true) or updates the record carrying ref.
func (u Upsert[C, I, R]) Do(ctx context.Context, ref schematype.ExternalRef, in I) (res R, created bool, err error) {
	if err := lock(ctx, u.Resource, ref); err != nil {
		return res, false, err
	}
	id, found, err := Owner(ctx, u.Resource, ref)
	if err != nil {
		return res, false, err
	}
	if !found {
		if err := u.keep(&in, ref); err != nil {
			return res, false, err
		}
		res, err = u.Create(ctx, in)
		return res, true, err
	}
	cur, err := u.Lock(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return res, false, Taken(u.Resource, ref)
	}
	if err != nil {
		return res, false, err
	}
	if u.Merge != nil {
		if in, err = u.Merge(cur, in); err != nil {
			return res, false, err
		}
	}
	if err := u.keep(&in, ref); err != nil {
		return res, false, err
	}
	res, err = u.Update(ctx, cur, in)
	return res, false, err
}

// keep adds ref to the references of in unless they hold it already.
func (u Upsert[C, I, R]) keep(in *I, ref schematype.ExternalRef) error {
	refs := u.Refs(in)
	if !slices.Contains(*refs, ref) {
		*refs = append(slices.Clone(*refs), ref)
	}
	if u.CountPathRef && len(*refs) > MaxRefs {
		return errs.InvalidField("externalReferences", "too_many",
			fmt.Sprintf("at most %d references, the one in the path included", MaxRefs))
	}
	return nil
}

// lock takes the transaction-scoped advisory lock of (company, resource, ref): a hash, since
// advisory locks take one bigint.
func lock(ctx context.Context, resource string, ref schematype.ExternalRef) error {
	company, _ := tenancy.CompanyID(ctx)
	sum := sha256.Sum256([]byte(resource + "-ref\x00" + company.String() + "\x00" + ref.Source + "\x00" + ref.ExternalID))
	if _, err := tenancy.Client(ctx).ExecContext(ctx, lockRef, int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
		return fmt.Errorf("lock external reference: %w", err)
	}
	return nil
}
