// Package extref holds what every resource with externalReferences shares: the bounds and
// checks of a reference, the company-wide uniqueness check (Free), the path reference of
// /external/{source}/<resource>/{externalId} and the upsert by reference (Upsert). Contacts,
// leads, contracts and tasks carry references; ExternalRefMixin (ent/schema) keeps the
// external_refs lookup table in step with them, and this package reads it. It imports no area.
package extref

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Bounds of external references: how many one record carries, and the characters of a source
// and of an external id (the columns of external_refs).
const (
	MaxRefs       = 20
	MaxSource     = 100
	MaxExternalID = 255
)

// Check adds every invalid external reference of refs to v, named externalReferences.<i>.
func Check(v *errs.Invalid, refs []schematype.ExternalRef) {
	v.Check("externalReferences", len(refs) <= MaxRefs, "too_many",
		fmt.Sprintf("at most %d references", MaxRefs))
	seen := map[schematype.ExternalRef]bool{}
	for i, r := range refs {
		name := fmt.Sprintf("externalReferences.%d.", i)
		v.Check(name+"source", r.Source != "" && utf8.RuneCountInString(r.Source) <= MaxSource, "invalid_length",
			fmt.Sprintf("must have 1 to %d characters", MaxSource))
		v.Check(name+"externalId", r.ExternalID != "" && utf8.RuneCountInString(r.ExternalID) <= MaxExternalID,
			"invalid_length", fmt.Sprintf("must have 1 to %d characters", MaxExternalID))
		check.Text(v, name+"source", r.Source)
		check.Text(v, name+"externalId", r.ExternalID)
		v.Check(name+"externalId", !seen[r], "duplicate_reference", "names the same reference as an earlier item")
		seen[r] = true
	}
}

// Free answers 409 external_reference_taken when another record than self of resource (its
// name in the external_refs lookup table, which also names it in the detail: "contact",
// "lead", "contract", "task") carries one of refs. Records the caller cannot see count too: a
// reference is the company's, not the user's, and saying "taken" names no data of the other
// record. The unique index decides races; this gives the usual case a clear answer.
func Free(ctx context.Context, resource string, refs []schematype.ExternalRef, self uuid.UUID) error {
	for _, r := range refs {
		var taken bool
		err := tenancy.ReadCompanyWide(ctx, func() (err error) {
			taken, err = tenancy.Client(ctx).ExternalRef.Query().Where(externalref.Resource(resource),
				externalref.Source(r.Source), externalref.ExternalID(r.ExternalID), externalref.ResourceIDNEQ(self)).Exist(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("check external reference: %w", err)
		}
		if taken {
			return errs.Conflict("external_reference_taken",
				"another %s carries the external reference %s/%s", resource, r.Source, r.ExternalID)
		}
	}
	return nil
}

// Taken is the answer of an external upsert whose reference a record of resource carries that
// the credential may not see (issue 20 item 8): 409 external_reference_taken, as when a create
// names a taken reference (Free), never 404, which claimed that nothing carries it (and the
// next create would be refused with 409 anyway). It says the reference is taken and nothing of
// the record: references are the company's identifiers, their existence is not hidden from
// its users; the record's data and id are.
func Taken(resource string, ref schematype.ExternalRef) error {
	return errs.Conflict("external_reference_taken",
		"the external reference %s/%s is carried by a %s this credential may not see or change", ref.Source, ref.ExternalID, resource)
}

// Owner finds the id of the record of resource carrying ref. References are the company's: the
// lookup sees every record's, so that an upsert can tell "no record" from "a record you may not
// see" (which it must not take over).
func Owner(ctx context.Context, resource string, ref schematype.ExternalRef) (uuid.UUID, bool, error) {
	var r *ent.ExternalRef
	err := tenancy.ReadCompanyWide(ctx, func() (err error) {
		r, err = tenancy.Client(ctx).ExternalRef.Query().Where(externalref.Resource(resource),
			externalref.Source(ref.Source), externalref.ExternalID(ref.ExternalID)).Only(ctx)
		return err
	})
	if ent.IsNotFound(err) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("find %s by external reference: %w", resource, err)
	}
	return r.ResourceID, true, nil
}

// FromPath reads the path parameters source and externalId of /external/{source}/…/{externalId}
// (percent-decoded, copied out of Fiber's buffers), checked like a body's references; errors
// name them path.source and path.externalId.
func FromPath(c *fiber.Ctx) (schematype.ExternalRef, error) {
	ref, v := fromPath(c)
	if v != nil {
		return ref, v
	}
	return ref, nil
}

func fromPath(c *fiber.Ctx) (schematype.ExternalRef, *errs.Invalid) {
	var v errs.Invalid
	get := func(name, field string, max int) string {
		s, err := url.PathUnescape(c.Params(name))
		ok := err == nil && strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= max
		v.Check(field, ok, "invalid_length", fmt.Sprintf("must have 1 to %d characters", max))
		v.Check(field, !strings.ContainsRune(s, 0) && utf8.ValidString(s), "invalid_character",
			"must be UTF-8 text without NUL characters")
		return strings.Clone(s)
	}
	ref := schematype.ExternalRef{Source: get("source", "path.source", MaxSource),
		ExternalID: get("externalId", "path.externalId", MaxExternalID)}
	if len(v.Errors) > 0 {
		return ref, &v
	}
	return ref, nil
}

// Decode reads the path reference and the body of an upsert (PUT /external/…) into in (as
// httpx.Decode). A body that cannot be read (not JSON, wrong content type) answers alone;
// otherwise the path's and the body's field errors answer together in one 422.
func Decode(c *fiber.Ctx, in any) (schematype.ExternalRef, error) {
	ref, perr := fromPath(c)
	err := httpx.Decode(c, in)
	var inv *errs.Invalid
	invalid := errors.As(err, &inv)
	switch {
	case err != nil && !invalid: // malformed body, wrong content type
		return ref, err
	case perr != nil && invalid:
		perr.Errors = append(perr.Errors, inv.Errors...)
		return ref, perr
	case perr != nil:
		return ref, perr
	}
	return ref, err
}

// Put is the handler recipe of PUT /external/{source}/<resource>/{externalId} for a resource
// whose body is its input (leads, contracts): the path reference and the body as Decode reads
// them, the upsert, then 201 with Location when it created the record, 200 when it updated it.
type Put[I, R any] struct {
	Upsert   func(context.Context, schematype.ExternalRef, I) (R, bool, error)
	Location func(R) string
	Version  func(R) int64
	View     func(*fiber.Ctx, R) (any, error)
}

// Handle serves the PUT.
func (p Put[I, R]) Handle(c *fiber.Ctx) error {
	var in I
	ref, err := Decode(c, &in)
	if err != nil {
		return err
	}
	r, created, err := p.Upsert(c.UserContext(), ref, in)
	if err != nil {
		return err
	}
	v, err := p.View(c, r)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, p.Location(r), v, p.Version(r))
	}
	return httpx.OK(c, v, p.Version(r))
}
