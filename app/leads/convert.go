package leads

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/app/identity"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxDuplicates is how many matching contacts a dry run lists.
const MaxDuplicates = 20

// ConvertInput is the body of POST /leads/{leadId}/convert.
type ConvertInput struct {
	ContactType       *string          `json:"contactType"`
	ExistingContactID *string          `json:"existingContactId"`
	Overrides         *contacts.Fields `json:"overrides"`
	DryRun            bool             `json:"dryRun"`
}

// Validate checks the body of POST /leads/{leadId}/convert.
func (in ConvertInput) Validate() error {
	var v errs.Invalid
	switch {
	case in.ContactType == nil:
		v.Require("contactType", false)
	case *in.ContactType != contacts.TypePrivate && *in.ContactType != contacts.TypeBusiness:
		v.Add("contactType", "invalid_enum", "must be one of private, business")
	}
	checkUUID(&v, "existingContactId", in.ExistingContactID)
	in.Overrides.Check(&v, "overrides.")
	if in.Overrides != nil && in.Overrides.Business != nil && in.ContactType != nil && *in.ContactType == contacts.TypePrivate {
		v.Add("overrides.business", "not_applicable", "business fields apply to business contacts only")
	}
	return v.Err()
}

// Conflict is a field in which the lead and the existing contact hold different values.
type Conflict struct {
	Field        string  `json:"field"`
	LeadValue    *string `json:"leadValue"`
	ContactValue *string `json:"contactValue"`
}

// DryRunResult is the answer of a dry run: contacts that match the lead, and the conflicts
// with existingContactId that a conversion would refuse (those without an override).
type DryRunResult struct {
	Duplicates []contacts.Duplicate `json:"duplicates"`
	Conflicts  []Conflict           `json:"conflicts"`
}

// ConvertResult is the answer of a conversion.
type ConvertResult struct {
	Lead           View          `json:"lead"`
	Contact        contacts.View `json:"contact"`
	LinkedExisting bool          `json:"linkedExisting"`
}

// Convert turns the lead into a contact: it creates one from the lead's data (overrides win)
// or merges into in.ExistingContactID, moves the lead's attachments to the contact, and moves
// the lead to the final stage converted. A dry run changes nothing and returns matches and
// conflicts instead (dry is nil otherwise). Both answer 409 for a converted lead.
func (s *Service) Convert(ctx context.Context, id uuid.UUID, in ConvertInput) (res *ConvertResult, dry *DryRunResult, err error) {
	l, err := s.Lock(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if l.Converted {
		return nil, nil, errs.Conflict("lead_already_converted", "lead %s was converted already", l.ID)
	}
	o := in.Overrides
	if o == nil {
		o = &contacts.Fields{}
	}
	owner, err := overrideOwner(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if owner == nil {
		owner = l.OwnerID
	}
	if owner == nil && in.ExistingContactID == nil {
		// Neither overrides nor the lead name one: the acting user, else the company admin.
		if owner, err = s.contacts.DefaultOwner(ctx); err != nil {
			return nil, nil, err
		}
	}
	phones := leadPhones(l, o)
	var existing *ent.Contact
	var have []*ent.ContactPhone
	conflicts := []Conflict{}
	if in.ExistingContactID != nil {
		existing, have, err = s.contacts.Lock(ctx, uuid.MustParse(*in.ExistingContactID))
		if errors.Is(err, errs.ErrNotFound) {
			return nil, nil, errs.InvalidField("existingContactId", "unknown_contact", "is not a contact of this company")
		}
		if err != nil {
			return nil, nil, err
		}
		if string(existing.Type) != *in.ContactType {
			return nil, nil, errs.Conflict("contact_type_mismatch", "contact %s is a %s contact, not %s",
				existing.ID, existing.Type, *in.ContactType)
		}
		conflicts = conflictsWith(l, o, existing)
	} else if err := checkNewContact(l, o, *in.ContactType, in.DryRun); err != nil {
		return nil, nil, err
	}
	if in.DryRun {
		var emails, keys []string
		if e := pick(o.Email, l.Email); e != nil {
			emails = append(emails, EmailKey(*e))
		}
		for _, p := range phones {
			if k, ok := PhoneKey(p.Number); ok {
				keys = append(keys, k)
			}
		}
		found, err := s.contacts.Duplicates(ctx, emails, keys, MaxDuplicates)
		if err != nil {
			return nil, nil, err
		}
		who := identity.Person{FirstName: deref(pick(o.FirstName, &l.FirstName)), LastName: deref(pick(o.LastName, &l.LastName))}
		if len(emails) > 0 {
			who.EmailKey = emails[0]
		}
		who.PhoneKeys = keys
		return nil, &DryRunResult{Duplicates: samePerson(who, found), Conflicts: conflicts}, nil
	}
	if len(conflicts) > 0 {
		fields := make([]string, len(conflicts))
		for i, c := range conflicts {
			fields[i] = c.Field
		}
		return nil, nil, errs.Conflict("contact_conflict", "the lead and contact %s differ in %s; give overrides for these fields "+
			"(a dry run shows both values)", existing.ID, strings.Join(fields, ", "))
	}
	var ct contacts.View
	var out Lead
	// The lead and the existing contact were read through the visibility layer (Lock); the
	// contact may go to another owner than the caller (the lead's), which is allowed: the
	// writes run with the SQL visibility lifted (tenancy.LiftVisibility).
	err = tenancy.LiftVisibility(ctx, func() error {
		var err error
		if existing != nil {
			ct, err = s.contacts.Merge(ctx, existing, have, mergeInput(l, o, existing, owner, phones))
		} else {
			ct, err = s.contacts.Create(ctx, contacts.CreateInput{Type: *in.ContactType,
				FirstName: deref(pick(o.FirstName, &l.FirstName)), LastName: deref(pick(o.LastName, &l.LastName)),
				CompanyName: companyName(o), Email: pick(o.Email, l.Email), Phones: phones, OwnerID: owner})
		}
		if err != nil {
			return err
		}
		out, err = s.markConverted(ctx, l, ct.ID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return &ConvertResult{Lead: out.View(), Contact: ct, LinkedExisting: existing != nil}, nil, nil
}

// markConverted moves the lead's attachments to the contact and the lead to the stage
// converted, and records lead.converted.
func (s *Service) markConverted(ctx context.Context, l *ent.Lead, contactID uuid.UUID) (Lead, error) {
	db := tenancy.Client(ctx)
	if err := db.LeadAttachment.Update().Where(leadattachment.LeadID(l.ID), leadattachment.ContactIDIsNil()).
		SetContactID(contactID).Exec(ctx); err != nil {
		return Lead{}, fmt.Errorf("move attachments of lead %s: %w", l.ID, err)
	}
	stage, err := db.LeadStage.Query().Where(leadstage.Key(StageConverted)).Only(ctx)
	if err != nil {
		return Lead{}, fmt.Errorf("stage converted: %w", err)
	}
	saved, err := l.Update().SetStageID(stage.ID).SetConverted(true).SetConvertedAt(s.now()).
		SetContactID(contactID).Save(ctx)
	if err != nil {
		return Lead{}, fmt.Errorf("convert lead %s: %w", l.ID, err)
	}
	out, err := withAttachments(ctx, saved)
	if err != nil {
		return Lead{}, err
	}
	if err := s.events.Record(ctx, "lead.converted", out.View()); err != nil {
		return Lead{}, err
	}
	return out, nil
}

// samePerson keeps the contacts that are the person who by the one matching rule (identity), with
// matchedBy as the rule says: a contact sharing only a phone number with the lead, but holding
// another e-mail address or another name, is someone else (a household's landline).
func samePerson(who identity.Person, found []contacts.Duplicate) []contacts.Duplicate {
	out := []contacts.Duplicate{}
	for _, d := range found {
		c := d.Contact
		numbers := make([]string, len(c.Phones))
		for i, p := range c.Phones {
			numbers[i] = p.Number
		}
		by := identity.MatchedBy(who, identity.Of(deref(c.Email), c.FirstName, c.LastName, numbers...))
		if len(by) > 0 {
			d.MatchedBy = by
			out = append(out, d)
		}
	}
	return out
}

// overrideOwner checks overrides.ownerId: a user of the company, else 422.
func overrideOwner(ctx context.Context, o *contacts.Fields) (*uuid.UUID, error) {
	if o.OwnerID == nil {
		return nil, nil
	}
	id := uuid.MustParse(*o.OwnerID)
	ok, err := tenancy.Client(ctx).User.Query().Where(user.ID(id)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("read contact owner: %w", err)
	}
	if !ok {
		return nil, errs.InvalidField("overrides.ownerId", "unknown_user", "is not a user of this company")
	}
	return &id, nil
}

// leadPhones are the phones the contact gets: overrides.phones when given, else the lead's.
func leadPhones(l *ent.Lead, o *contacts.Fields) []contacts.Phone {
	if o.Phones != nil {
		out := make([]contacts.Phone, len(o.Phones))
		for i, p := range o.Phones {
			out[i] = contacts.Phone{Number: p.Number, Type: deref(p.Type), IsPrimary: p.IsPrimary}
		}
		return out
	}
	if l.Phone == nil {
		return nil
	}
	if _, ok := PhoneKey(*l.Phone); !ok { // stored before validation existed, or by the intake
		return nil
	}
	return []contacts.Phone{{Number: *l.Phone, IsPrimary: true}}
}

// checkNewContact checks that the new contact has what its type needs: a private one a last
// name, a business one a company name (which a lead never has).
//
// A private contact needs a first name too, except in a dry run: a dry run looks for the
// duplicates the lead may be merged into, where no first name is needed.
func checkNewContact(l *ent.Lead, o *contacts.Fields, typ string, dryRun bool) error {
	var v errs.Invalid
	if typ == contacts.TypePrivate {
		v.Check("overrides.firstName", dryRun || strings.TrimSpace(deref(pick(o.FirstName, &l.FirstName))) != "", "required",
			"the lead has no first name; give overrides.firstName")
		v.Check("overrides.lastName", strings.TrimSpace(deref(pick(o.LastName, &l.LastName))) != "", "required",
			"the lead has no last name; give overrides.lastName")
	} else {
		v.Check("overrides.business.companyName", companyName(o) != "", "required",
			"a business contact needs a company name; give overrides.business.companyName")
	}
	return v.Err()
}

func companyName(o *contacts.Fields) string {
	if o.Business == nil {
		return ""
	}
	return strings.TrimSpace(deref(o.Business.CompanyName))
}

// pick is the override when given, else the lead's value.
func pick(override, leadValue *string) *string {
	if override != nil {
		return override
	}
	return leadValue
}

// conflictsWith lists the fields in which the lead and contact c both hold a value and the
// values differ (names case-insensitively, e-mail by its key), leaving out fields the
// overrides decide.
func conflictsWith(l *ent.Lead, o *contacts.Fields, c *ent.Contact) []Conflict {
	out := []Conflict{}
	add := func(field string, override *string, leadValue, contactValue string, same func(a, b string) bool) {
		lv, cv := strings.TrimSpace(leadValue), strings.TrimSpace(contactValue)
		if override == nil && lv != "" && cv != "" && !same(lv, cv) {
			out = append(out, Conflict{Field: field, LeadValue: &lv, ContactValue: &cv})
		}
	}
	add("firstName", o.FirstName, l.FirstName, c.FirstName, strings.EqualFold)
	add("lastName", o.LastName, l.LastName, c.LastName, strings.EqualFold)
	add("email", o.Email, deref(l.Email), deref(c.Email), func(a, b string) bool { return EmailKey(a) == EmailKey(b) })
	return out
}

// mergeInput is what a conversion writes into an existing contact: the overrides, and the
// lead's values where the contact has none. Phones are added unless the contact has them.
func mergeInput(l *ent.Lead, o *contacts.Fields, c *ent.Contact, owner *uuid.UUID, phones []contacts.Phone) contacts.MergeInput {
	fill := func(override *string, leadValue, contactValue string) *string {
		if override != nil {
			return override
		}
		if strings.TrimSpace(contactValue) == "" && strings.TrimSpace(leadValue) != "" {
			return &leadValue
		}
		return nil
	}
	in := contacts.MergeInput{Touch: true,
		FirstName: fill(o.FirstName, l.FirstName, c.FirstName),
		LastName:  fill(o.LastName, l.LastName, c.LastName),
		Email:     fill(o.Email, deref(l.Email), deref(c.Email)),
		Phones:    phones,
	}
	if o.Business != nil {
		in.CompanyName = o.Business.CompanyName
	}
	switch {
	case o.OwnerID != nil:
		in.OwnerID = owner
	case c.OwnerID == nil:
		in.OwnerID = l.OwnerID
	}
	return in
}

// convert handles POST /leads/{leadId}/convert: 200 with the dry run's findings, or 201 with
// the converted lead and its contact.
func (h *Handler) convert(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "leadId")
	if err != nil {
		return err
	}
	var in ConvertInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	res, dry, err := h.svc.Convert(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	if dry != nil {
		return c.JSON(dry)
	}
	// The contact is the resource the conversion created (or linked); the contacts issue adds
	// its GET route.
	return httpx.Created(c, "/api/public/v1/contacts/"+res.Contact.ID.String(), res, 0)
}
