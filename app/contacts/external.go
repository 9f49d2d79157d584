package contacts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactphone"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// GetByRef reads the visible contact carrying ref (404 otherwise).
func (s *Service) GetByRef(ctx context.Context, ref schematype.ExternalRef) (Contact, error) {
	id, ok, err := extref.Owner(ctx, refResource, ref)
	if err != nil {
		return Contact{}, err
	}
	if !ok {
		return Contact{}, errs.NotFound("no contact carries the external reference %s/%s", ref.Source, ref.ExternalID)
	}
	c, err := s.Find(ctx, id)
	if err != nil {
		return Contact{}, errs.NotFound("no contact carries the external reference %s/%s", ref.Source, ref.ExternalID)
	}
	return c, nil
}

// upsertInput is the body of an external upsert: as a document (d) and as the merge patch it
// is for an existing contact (patch, without its phones, which replace the contact's when the
// body names them).
type upsertInput struct {
	d             Doc
	patch         map[string]any
	phones        []PhoneInput
	replacePhones bool
}

// Upsert creates the contact carrying ref from d, or updates it: patch (the body as JSON)
// merges into the stored contact like a PATCH (writeMode honoured), phones in the body replace
// the contact's. A contact carrying ref that the caller may not see is never taken over: 409
// external_reference_taken (extref.Taken). Concurrent upserts of one reference are serialised
// by an advisory lock (extref.Upsert).
func (s *Service) Upsert(ctx context.Context, ref schematype.ExternalRef, d Doc, patch map[string]any) (Contact, bool, error) {
	newPhones, hasPhones := patch["phones"]
	delete(patch, "phones")
	in := upsertInput{d: d, patch: patch, phones: d.Phones, replacePhones: hasPhones && newPhones != nil}
	return extref.Upsert[Contact, upsertInput, Contact]{
		Resource: refResource,
		Refs:     func(in *upsertInput) *[]schematype.ExternalRef { return &in.d.ExternalReferences },
		Create: func(ctx context.Context, in upsertInput) (Contact, error) {
			in.d.WriteMode = nil
			return s.Create(ctx, in.d)
		},
		Lock:  s.LockContact,
		Merge: s.mergeUpsert,
		Update: func(ctx context.Context, cur Contact, in upsertInput) (Contact, error) {
			saved, err := s.Save(ctx, cur, in.d)
			if err != nil || !in.replacePhones {
				return saved, err
			}
			saved.Phones, err = s.replacePhones(ctx, saved.Contact, in.phones)
			return saved, err
		},
	}.Do(ctx, ref, in)
}

// mergeUpsert merges the upsert's patch into the stored contact cur like a PATCH; in.d becomes
// the merged document. The body's phones are checked here, since they bypass the merge.
func (s *Service) mergeUpsert(cur Contact, in upsertInput) (upsertInput, error) {
	doc, err := s.DocOf(cur.Contact)
	if err != nil {
		return in, err
	}
	var v errs.Invalid
	(&Fields{Phones: in.phones}).Check(&v, "")
	if err := v.Err(); err != nil {
		return in, err
	}
	patch, err := FillEmptyIfAsked(doc, in.patch)
	if err != nil {
		return in, err
	}
	if err := jsondoc.ApplyPatch(&doc, patch); err != nil {
		return in, err
	}
	in.d = doc
	return in, nil
}

// replacePhones replaces the phones of c with in (already validated).
func (s *Service) replacePhones(ctx context.Context, c *ent.Contact, in []PhoneInput) ([]*ent.ContactPhone, error) {
	db := tenancy.Client(ctx)
	if _, err := db.ContactPhone.Delete().Where(contactphone.ContactID(c.ID)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("replace phones of contact %s: %w", c.ID, err)
	}
	return s.addPhones(ctx, c.ID, nil, phonesOf(in))
}

// external reads the path reference and the field selection of an /external/… request; a bad
// path is refused before the body is read.
func external(c *fiber.Ctx) (schematype.ExternalRef, Selection, error) {
	ref, err := extref.FromPath(c)
	if err != nil {
		return ref, nil, err
	}
	sel, err := selection(c)
	return ref, sel, err
}

// answer renders the contact a read or write found with the request's selection: 201 at its URL
// when the request created it, 200 otherwise.
func (h *Handler) answer(c *fiber.Ctx, sel Selection, ct Contact, created bool) error {
	v, err := h.svc.View(ct, sel)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, location(ct.ID.String()), v, ct.Version)
	}
	return httpx.OK(c, v, ct.Version)
}

// putExternal handles PUT /external/{source}/contacts/{externalId}: 201 created, 200 updated.
func (h *Handler) putExternal(c *fiber.Ctx) error {
	ref, sel, err := external(c)
	if err != nil {
		return err
	}
	var d Doc
	if err := httpx.Decode(c, &d); err != nil {
		return err
	}
	var patch map[string]any
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.UseNumber()
	if err := dec.Decode(&patch); err != nil || patch == nil {
		return errs.BadRequest("malformed_json", "the body must be a JSON object")
	}
	ct, created, err := h.svc.Upsert(c.UserContext(), ref, d, patch)
	if err != nil {
		return err
	}
	return h.answer(c, sel, ct, created)
}
