package contacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactphone"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// byRef finds the id of the contact carrying ref. References are the company's: the lookup
// sees every contact's, so that an upsert can tell "no contact" from "a contact you may not
// see" (which it must not take over).
func byRef(ctx context.Context, ref schematype.ExternalRef) (uuid.UUID, bool, error) {
	var r *ent.ExternalRef
	err := tenancy.ReadCompanyWide(ctx, func() (err error) {
		r, err = tenancy.Client(ctx).ExternalRef.Query().Where(externalref.Resource(refResource),
			externalref.Source(ref.Source), externalref.ExternalID(ref.ExternalID)).Only(ctx)
		return err
	})
	if ent.IsNotFound(err) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("find contact by external reference: %w", err)
	}
	return r.ResourceID, true, nil
}

// GetByRef reads the visible contact carrying ref (404 otherwise).
func (s *Service) GetByRef(ctx context.Context, ref schematype.ExternalRef) (*ent.Contact, []*ent.ContactPhone, error) {
	id, ok, err := byRef(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, errs.NotFound("no contact carries the external reference %s/%s", ref.Source, ref.ExternalID)
	}
	c, phones, err := s.Get(ctx, id)
	if err != nil {
		return nil, nil, errs.NotFound("no contact carries the external reference %s/%s", ref.Source, ref.ExternalID)
	}
	return c, phones, nil
}

// Upsert creates the contact carrying ref from d, or updates it: patch (the body as JSON)
// merges into the stored contact like a PATCH (writeMode honoured), phones in the body replace
// the contact's. A contact carrying ref that the caller may not see is never taken over: 409
// external_reference_taken (RefTaken). Concurrent upserts of one reference are serialised by an
// advisory lock.
func (s *Service) Upsert(ctx context.Context, ref schematype.ExternalRef, d Doc, patch map[string]any) (*ent.Contact, []*ent.ContactPhone, bool, error) {
	db := tenancy.Client(ctx)
	company, _ := tenancy.CompanyID(ctx)
	sum := sha256.Sum256([]byte("contact-ref\x00" + company.String() + "\x00" + ref.Source + "\x00" + ref.ExternalID))
	if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
		return nil, nil, false, fmt.Errorf("lock external reference: %w", err)
	}
	id, found, err := byRef(ctx, ref)
	if err != nil {
		return nil, nil, false, err
	}
	if !found {
		if !slices.Contains(d.ExternalReferences, ref) {
			d.ExternalReferences = append(slices.Clone(d.ExternalReferences), ref)
		}
		d.WriteMode = nil
		c, phones, err := s.CreateDoc(ctx, d)
		return c, phones, true, err
	}
	cur, phones, err := s.Lock(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, nil, false, RefTaken("contact", ref)
	}
	if err != nil {
		return nil, nil, false, err
	}
	doc, err := s.DocOf(cur)
	if err != nil {
		return nil, nil, false, err
	}
	newPhones, hasPhones := patch["phones"]
	delete(patch, "phones")
	var v errs.Invalid
	(&Fields{Phones: d.Phones}).Check(&v, "")
	if err := v.Err(); err != nil {
		return nil, nil, false, err
	}
	if patch, err = FillEmptyIfAsked(doc, patch); err != nil {
		return nil, nil, false, err
	}
	if err := httpx.ApplyPatch(&doc, patch); err != nil {
		return nil, nil, false, err
	}
	if !slices.Contains(doc.ExternalReferences, ref) {
		doc.ExternalReferences = append(slices.Clone(doc.ExternalReferences), ref)
	}
	saved, err := s.Update(ctx, cur, phones, doc)
	if err != nil {
		return nil, nil, false, err
	}
	if hasPhones && newPhones != nil {
		if phones, err = s.replacePhones(ctx, saved, d.Phones); err != nil {
			return nil, nil, false, err
		}
	}
	return saved, phones, false, nil
}

// replacePhones replaces the phones of c with in (already validated).
func (s *Service) replacePhones(ctx context.Context, c *ent.Contact, in []PhoneInput) ([]*ent.ContactPhone, error) {
	db := tenancy.Client(ctx)
	if _, err := db.ContactPhone.Delete().Where(contactphone.ContactID(c.ID)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("replace phones of contact %s: %w", c.ID, err)
	}
	phones := make([]Phone, len(in))
	for i, p := range in {
		phones[i] = Phone{Number: p.Number, Type: deref(p.Type), IsPrimary: p.IsPrimary}
	}
	return s.addPhones(ctx, c.ID, nil, phones)
}

// PathRef reads the path parameters source and externalId of an external upsert (percent-decoded,
// copied out of Fiber's buffers); errors name them path.source and path.externalId. Contacts,
// leads and contracts share it.
func PathRef(c *fiber.Ctx) (schematype.ExternalRef, *errs.Invalid) {
	var v errs.Invalid
	get := func(name, field string, max int) string {
		s, err := url.PathUnescape(c.Params(name))
		ok := err == nil && strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= max
		v.Check(field, ok, "invalid_length", fmt.Sprintf("must have 1 to %d characters", max))
		v.Check(field, !strings.ContainsRune(s, 0) && utf8.ValidString(s), "invalid_character",
			"must be UTF-8 text without NUL characters")
		return strings.Clone(s)
	}
	ref := schematype.ExternalRef{Source: get("source", "path.source", MaxRefSource),
		ExternalID: get("externalId", "path.externalId", MaxRefExternalID)}
	if len(v.Errors) > 0 {
		return ref, &v
	}
	return ref, nil
}

// getExternal handles GET /external/{source}/contacts/{externalId}.
func (h *Handler) getExternal(c *fiber.Ctx) error {
	ref, perr := PathRef(c)
	if perr != nil {
		return perr
	}
	sel, err := selection(c)
	if err != nil {
		return err
	}
	ct, phones, err := h.svc.GetByRef(c.UserContext(), ref)
	if err != nil {
		return err
	}
	v, err := h.svc.Render(ct, phones, sel)
	if err != nil {
		return err
	}
	return httpx.OK(c, v, ct.Version)
}

// putExternal handles PUT /external/{source}/contacts/{externalId}: 201 created, 200 updated.
func (h *Handler) putExternal(c *fiber.Ctx) error {
	ref, perr := PathRef(c)
	if perr != nil {
		return perr
	}
	sel, err := selection(c)
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
	ct, phones, created, err := h.svc.Upsert(c.UserContext(), ref, d, patch)
	if err != nil {
		return err
	}
	v, err := h.svc.Render(ct, phones, sel)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, location(ct.ID.String()), v, ct.Version)
	}
	return httpx.OK(c, v, ct.Version)
}
