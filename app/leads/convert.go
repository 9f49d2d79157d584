package leads

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadattachment"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxDuplicates is how many matching contacts a dry run lists.
const MaxDuplicates = 20

// ConvertInput is the body of POST /leads/{leadId}/convert. Overrides is a ContactPatch (a
// merge patch: absent keys keep the lead's or the contact's value, null clears one, groups and
// customFields merge key by key, tags and labels replace; no phones), checked as PATCH
// /contacts checks it, its errors named "overrides.<path>".
type ConvertInput struct {
	ContactType       *string        `json:"contactType"`
	ExistingContactID *string        `json:"existingContactId"`
	Overrides         map[string]any `json:"overrides"`
	DryRun            bool           `json:"dryRun"`
}

// Validate checks the body of POST /leads/{leadId}/convert: every value of overrides by the
// contact rules (what the contact must hold in the end is checked when it is written).
func (in ConvertInput) Validate() error {
	var v errs.Invalid
	typ := ""
	switch {
	case in.ContactType == nil:
		v.Require("contactType", false)
	case *in.ContactType != contacts.TypePrivate && *in.ContactType != contacts.TypeBusiness:
		v.Add("contactType", "invalid_enum", "must be one of private, business")
	default:
		typ = *in.ContactType
	}
	v.CheckUUID("existingContactId", in.ExistingContactID)
	contacts.CheckPatch(&v, "overrides.", typ, in.Overrides, time.Now())
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
	Duplicates []contacts.Duplicate
	Conflicts  []Conflict
}

// DryRunView is the answer of a dry run.
type DryRunView struct {
	Duplicates []contacts.DuplicateView `json:"duplicates"`
	Conflicts  []Conflict               `json:"conflicts"`
}

// NewDryRunView is the view of r.
func NewDryRunView(r *DryRunResult) DryRunView {
	v := DryRunView{Duplicates: make([]contacts.DuplicateView, len(r.Duplicates)), Conflicts: r.Conflicts}
	for i, d := range r.Duplicates {
		v.Duplicates[i] = contacts.NewDuplicateView(d)
	}
	return v
}

// Conversion is what Convert did: for a dry run its findings (Dry), otherwise the converted
// lead, the contact it became or was merged into (with its phones) and whether that contact
// existed before.
type Conversion struct {
	Dry            *DryRunResult
	Lead           Lead
	Contact        contacts.Contact
	LinkedExisting bool
}

// ConvertResult is the answer of a conversion.
type ConvertResult struct {
	Lead           View          `json:"lead"`
	Contact        contacts.View `json:"contact"`
	LinkedExisting bool          `json:"linkedExisting"`
}

// Convert turns the lead into a contact: it creates one from the lead's data with the
// overrides applied, or merges the lead into in.ExistingContactID (the lead fills what the
// contact lacks, then the overrides apply as a PATCH would), moves the lead's attachments to
// the contact, and moves the lead to the final stage converted. A dry run changes nothing and
// returns matches and conflicts instead (Conversion.Dry). Both answer 409 for a converted lead.
func (s *Service) Convert(ctx context.Context, id uuid.UUID, in ConvertInput) (Conversion, error) {
	l, err := s.Lock(ctx, id)
	if err != nil {
		return Conversion{}, err
	}
	if l.Converted {
		return Conversion{}, errs.Conflict("lead_already_converted", "lead %s was converted already", l.ID)
	}
	typ, patch := *in.ContactType, in.Overrides
	var existing *contacts.Contact
	conflicts := []Conflict{}
	if in.ExistingContactID != nil {
		cur, err := s.contacts.LockContact(ctx, uuid.MustParse(*in.ExistingContactID))
		if errors.Is(err, errs.ErrNotFound) {
			// 404 like every other way of naming a contact the caller cannot see (issue 8): an
			// invisible contact answers exactly as one that does not exist.
			return Conversion{}, errs.NotFound("contact %s (existingContactId) not found", *in.ExistingContactID)
		}
		if err != nil {
			return Conversion{}, err
		}
		existing = &cur
		if string(existing.Type) != typ {
			return Conversion{}, errs.Conflict("contact_type_mismatch", "contact %s is a %s contact, not %s",
				existing.ID, existing.Type, typ)
		}
		conflicts = conflictsWith(l, patch, existing.Contact)
	}
	// who is the lead as a new contact: its data with the overrides applied.
	who, err := leadDoc(l, typ, patch)
	if err != nil {
		return Conversion{}, err
	}
	phones := leadPhones(l)
	if in.DryRun {
		if existing == nil {
			if err := checkDryRun(who); err != nil {
				return Conversion{}, err
			}
		}
		dups, err := s.duplicates(ctx, who, phones)
		if err != nil {
			return Conversion{}, err
		}
		return Conversion{Dry: &DryRunResult{Duplicates: dups, Conflicts: conflicts}}, nil
	}
	if len(conflicts) > 0 {
		fields := make([]string, len(conflicts))
		for i, c := range conflicts {
			fields[i] = c.Field
		}
		return Conversion{}, errs.Conflict("contact_conflict", "the lead and contact %s differ in %s; give overrides for these fields "+
			"(a dry run shows both values)", existing.ID, strings.Join(fields, ", "))
	}
	var c contacts.Contact
	var out Lead
	// The lead and the existing contact were read through the visibility layer (Lock); the
	// contact may go to another owner than the caller (the lead's), which is allowed: the
	// writes run with the SQL visibility lifted (tenancy.HandOver).
	err = tenancy.HandOver(ctx, func() error {
		var err error
		if existing != nil {
			c, err = s.mergeInto(ctx, l, *existing, patch, phones)
		} else {
			who.Phones = make([]contacts.PhoneInput, len(phones))
			for i, p := range phones {
				who.Phones[i] = contacts.PhoneInput{Number: p.Number, IsPrimary: p.IsPrimary}
			}
			c, err = s.contacts.Create(ctx, who)
		}
		if err != nil {
			return errs.Prefixed(err, "overrides.")
		}
		out, err = s.markConverted(ctx, l, c.ID)
		return err
	})
	if err != nil {
		return Conversion{}, err
	}
	return Conversion{Lead: out, Contact: c, LinkedExisting: existing != nil}, nil
}

// leadDoc is the contact of type typ the lead becomes: its names, e-mail and owner, with the
// overrides applied (a merge patch).
func leadDoc(l *ent.Lead, typ string, overrides map[string]any) (contacts.Doc, error) {
	d := contacts.NewDoc(typ, l.FirstName, l.LastName, l.Email, l.OwnerID)
	if err := jsondoc.ApplyPatch(&d, overrides); err != nil {
		return contacts.Doc{}, errs.Prefixed(err, "overrides.")
	}
	return d, nil
}

// mergeInto writes the lead into the existing contact c (locked, with its phones): the
// lead's names and e-mail where the contact has none, its owner when the contact has none, then
// the overrides as a PATCH of the contact (writeMode fill_empty_only honoured), and the lead's
// phone unless the contact has the number. It always records contact.updated: the lead's files
// move to the contact.
func (s *Service) mergeInto(ctx context.Context, l *ent.Lead, c contacts.Contact, overrides map[string]any,
	phones []contacts.Phone) (contacts.Contact, error) {
	d, err := s.contacts.DocOf(c.Contact)
	if err != nil {
		return contacts.Contact{}, err
	}
	fill := func(cur **string, lead string) {
		if strings.TrimSpace(ptr.Deref(*cur)) == "" && strings.TrimSpace(lead) != "" {
			*cur = &lead
		}
	}
	fill(&d.FirstName, l.FirstName)
	fill(&d.LastName, l.LastName)
	fill(&d.Email, ptr.Deref(l.Email))
	if d.OwnerID == nil && l.OwnerID != nil {
		o := l.OwnerID.String()
		d.OwnerID = &o
	}
	if overrides, err = contacts.FillEmptyIfAsked(d, overrides); err != nil {
		return contacts.Contact{}, err
	}
	if err := jsondoc.ApplyPatch(&d, overrides); err != nil {
		return contacts.Contact{}, err
	}
	return s.contacts.SaveWith(ctx, c, d, phones, true)
}

// checkDryRun checks that a dry run without existingContactId has what it looks for duplicates
// of: a private contact a last name (no first name needed), a business one a company name
// (which a lead never has).
func checkDryRun(who contacts.Doc) error {
	var v errs.Invalid
	if who.Type == contacts.TypePrivate {
		v.Check("overrides.lastName", strings.TrimSpace(ptr.Deref(who.LastName)) != "", "required",
			"the lead has no last name; give overrides.lastName")
	} else {
		v.Check("overrides.business.companyName", who.CompanyName() != "", "required",
			"a business contact needs a company name; give overrides.business.companyName")
	}
	return v.Err()
}

// duplicates are the contacts that are who (the lead with its overrides) by the one matching
// rule: same e-mail, or same phone without disagreeing on identity.
func (s *Service) duplicates(ctx context.Context, who contacts.Doc, phones []contacts.Phone) ([]contacts.Duplicate, error) {
	var emails, keys []string
	if who.Email != nil && strings.TrimSpace(*who.Email) != "" {
		emails = append(emails, identity.EmailKey(*who.Email))
	}
	for _, p := range phones {
		if k, ok := identity.PhoneKey(p.Number); ok {
			keys = append(keys, k)
		}
	}
	found, err := s.contacts.Duplicates(ctx, emails, keys, MaxDuplicates)
	if err != nil {
		return nil, err
	}
	person := identity.Person{FirstName: ptr.Deref(who.FirstName), LastName: ptr.Deref(who.LastName), PhoneKeys: keys}
	if len(emails) > 0 {
		person.EmailKey = emails[0]
	}
	return samePerson(person, found), nil
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
	return s.recorded(ctx, "lead.converted", saved)
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
		by := identity.MatchedBy(who, identity.Of(ptr.Deref(c.Email), c.FirstName, c.LastName, numbers...))
		if len(by) > 0 {
			d.MatchedBy = by
			out = append(out, d)
		}
	}
	return out
}

// leadPhones is the lead's phone as the contact's primary number, if it is a phone number
// (one stored before validation existed, or by the intake, may not be).
func leadPhones(l *ent.Lead) []contacts.Phone {
	if l.Phone == nil {
		return nil
	}
	if _, ok := identity.PhoneKey(*l.Phone); !ok {
		return nil
	}
	return []contacts.Phone{{Number: *l.Phone, IsPrimary: true}}
}

// conflictsWith lists the fields in which the lead and contact c both hold a value and the
// values differ (names case-insensitively, e-mail by its key), leaving out fields the
// overrides name (a value or null decides the field).
func conflictsWith(l *ent.Lead, overrides map[string]any, c *ent.Contact) []Conflict {
	out := []Conflict{}
	add := func(field string, leadValue, contactValue string, same func(a, b string) bool) {
		_, decided := overrides[field]
		lv, cv := strings.TrimSpace(leadValue), strings.TrimSpace(contactValue)
		if !decided && lv != "" && cv != "" && !same(lv, cv) {
			out = append(out, Conflict{Field: field, LeadValue: &lv, ContactValue: &cv})
		}
	}
	add("firstName", l.FirstName, c.FirstName, strings.EqualFold)
	add("lastName", l.LastName, c.LastName, strings.EqualFold)
	add("email", ptr.Deref(l.Email), ptr.Deref(c.Email), func(a, b string) bool { return identity.EmailKey(a) == identity.EmailKey(b) })
	return out
}

// convert handles POST /leads/{leadId}/convert: 200 with the dry run's findings, or 201 with
// the converted lead and its contact.
func (h *Handler) convert(c *fiber.Ctx) error {
	id, err := httpx.UUIDParam(c, "leadId")
	if err != nil {
		return err
	}
	conv, err := httpx.Call(c, func(ctx context.Context, in ConvertInput) (Conversion, error) {
		return h.svc.Convert(ctx, id, in)
	})
	if err != nil {
		return err
	}
	if conv.Dry != nil {
		return c.JSON(NewDryRunView(conv.Dry))
	}
	ct, err := h.svc.contacts.View(conv.Contact, contacts.Readable(c))
	if err != nil {
		return err
	}
	// The contact is the resource the conversion created (or linked): Location names it.
	return httpx.Created(c, httpx.URL("contacts", ct.ID.String()),
		ConvertResult{Lead: conv.Lead.View(), Contact: ct, LinkedExisting: conv.LinkedExisting}, 0)
}
