package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactphone"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// PhoneBody is the body of POST /contacts/{contactId}/phones (number required) and of PATCH
// .../phones/{phoneId} (every field optional: what is given changes).
type PhoneBody struct {
	Number    *string `json:"number"`
	Type      *string `json:"type"`
	IsPrimary *bool   `json:"isPrimary"`
	create    bool
}

// Validate checks the body; a number must be a phone number libphonenumber can read (German
// without a country code).
func (in PhoneBody) Validate() error {
	var v errs.Invalid
	if in.create {
		v.Require("number", in.Number != nil)
	}
	if in.Number != nil {
		_, ok := identity.PhoneKey(*in.Number)
		v.Check("number", ok, "invalid_phone", "must be a phone number (E.164, or German without a country code)")
		check.Len(&v, "number", in.Number, check.MaxPhone)
	}
	v.Check("type", in.Type == nil || slices.Contains(PhoneTypes, *in.Type), "invalid_enum",
		"must be one of "+strings.Join(PhoneTypes, ", "))
	return v.Err()
}

// NewPhoneView is the Phone resource of p.
func NewPhoneView(p *ent.ContactPhone) PhoneView {
	return PhoneView{ID: p.ID, Number: p.Number, Type: p.Type, IsPrimary: p.IsPrimary, CreatedAt: p.CreatedAt,
		UpdatedAt: p.UpdatedAt}
}

// CreatePhone adds a number to the contact: 404 for a contact the credential cannot see, 409
// phone_exists when the contact has the number (compared in E.164), 409 too_many_phones beyond
// MaxPhones. The contact's first number, or one sent with isPrimary, becomes its primary one.
func (s *Service) CreatePhone(ctx context.Context, contactID uuid.UUID, in PhoneBody) (PhoneView, int64, error) {
	c, phones, err := s.Lock(ctx, contactID)
	if err != nil {
		return PhoneView{}, 0, err
	}
	key, _ := identity.PhoneKey(*in.Number)
	if slices.ContainsFunc(phones, func(p *ent.ContactPhone) bool { return p.NumberKey == key }) {
		return PhoneView{}, 0, errs.Conflict("phone_exists", "the contact has the number %s already", key)
	}
	if len(phones) >= MaxPhones {
		return PhoneView{}, 0, errs.Conflict("too_many_phones", "a contact has at most %d phone numbers", MaxPhones)
	}
	primary := len(phones) == 0 || (in.IsPrimary != nil && *in.IsPrimary)
	db := tenancy.Client(ctx)
	if primary {
		if err := db.ContactPhone.Update().Where(contactphone.ContactID(contactID)).SetIsPrimary(false).Exec(ctx); err != nil {
			return PhoneView{}, 0, fmt.Errorf("add phone to contact %s: %w", contactID, err)
		}
	}
	typ := PhoneType(*in.Number)
	if in.Type != nil {
		typ = *in.Type
	}
	p, err := db.ContactPhone.Create().SetContactID(contactID).SetNumber(strings.TrimSpace(*in.Number)).
		SetNumberKey(key).SetType(typ).SetIsPrimary(primary).Save(ctx)
	if err != nil {
		return PhoneView{}, 0, fmt.Errorf("add phone to contact %s: %w", contactID, err)
	}
	version, err := s.phonesChanged(ctx, c, "phone.created", "Telefonnummer hinzugefügt: "+key)
	if err != nil {
		return PhoneView{}, 0, err
	}
	return NewPhoneView(p), version, nil
}

// UpdatePhone changes a number of the contact: 404 for an unknown phone or invisible contact,
// 409 phone_exists when another phone of the contact has the new number, 422 primary_required
// when the body takes isPrimary from the primary number (make another one primary instead).
func (s *Service) UpdatePhone(ctx context.Context, contactID, phoneID uuid.UUID, in PhoneBody) (PhoneView, int64, error) {
	c, phones, err := s.Lock(ctx, contactID)
	if err != nil {
		return PhoneView{}, 0, err
	}
	i := slices.IndexFunc(phones, func(p *ent.ContactPhone) bool { return p.ID == phoneID })
	if i < 0 {
		return PhoneView{}, 0, errs.NotFound("phone %s not found", phoneID)
	}
	cur := phones[i]
	if in.Number == nil && in.Type == nil && in.IsPrimary == nil {
		return NewPhoneView(cur), c.Version, nil // nothing to change: no new version, no event
	}
	db := tenancy.Client(ctx)
	u := db.ContactPhone.UpdateOneID(phoneID)
	if in.Number != nil {
		key, _ := identity.PhoneKey(*in.Number)
		if slices.ContainsFunc(phones, func(p *ent.ContactPhone) bool { return p.ID != phoneID && p.NumberKey == key }) {
			return PhoneView{}, 0, errs.Conflict("phone_exists", "the contact has the number %s already", key)
		}
		u.SetNumber(strings.TrimSpace(*in.Number)).SetNumberKey(key)
		if in.Type == nil && key != cur.NumberKey {
			u.SetType(PhoneType(*in.Number))
		}
	}
	if in.Type != nil {
		u.SetType(*in.Type)
	}
	if in.IsPrimary != nil {
		if !*in.IsPrimary && cur.IsPrimary {
			return PhoneView{}, 0, errs.InvalidField("isPrimary", "primary_required",
				"a contact with phone numbers has one primary number; make another number primary instead")
		}
		if *in.IsPrimary && !cur.IsPrimary {
			if err := db.ContactPhone.Update().Where(contactphone.ContactID(contactID)).SetIsPrimary(false).Exec(ctx); err != nil {
				return PhoneView{}, 0, fmt.Errorf("update phone %s: %w", phoneID, err)
			}
			u.SetIsPrimary(true)
		}
	}
	p, err := u.Save(ctx)
	if err != nil {
		return PhoneView{}, 0, fmt.Errorf("update phone %s: %w", phoneID, err)
	}
	version, err := s.phonesChanged(ctx, c, "phone.updated", "Telefonnummer geändert: "+p.NumberKey)
	if err != nil {
		return PhoneView{}, 0, err
	}
	return NewPhoneView(p), version, nil
}

// DeletePhone removes a number of the contact; when it was the primary one, the oldest
// remaining number becomes primary. 404 for an unknown phone or invisible contact.
func (s *Service) DeletePhone(ctx context.Context, contactID, phoneID uuid.UUID) error {
	c, phones, err := s.Lock(ctx, contactID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(phones, func(p *ent.ContactPhone) bool { return p.ID == phoneID })
	if i < 0 {
		return errs.NotFound("phone %s not found", phoneID)
	}
	gone := phones[i]
	db := tenancy.Client(ctx)
	if err := db.ContactPhone.DeleteOneID(phoneID).Exec(ctx); err != nil {
		return fmt.Errorf("delete phone %s: %w", phoneID, err)
	}
	if gone.IsPrimary {
		var next *ent.ContactPhone
		for _, p := range phones { // phonesOf: primary first, then oldest first
			if p.ID != phoneID {
				next = p
				break
			}
		}
		if next != nil {
			if err := db.ContactPhone.UpdateOneID(next.ID).SetIsPrimary(true).Exec(ctx); err != nil {
				return fmt.Errorf("delete phone %s: %w", phoneID, err)
			}
		}
	}
	_, err = s.phonesChanged(ctx, c, "phone.deleted", "Telefonnummer entfernt: "+gone.NumberKey)
	return err
}

// phonesChanged moves the contact's version and updatedAt (its phones are part of it, so its
// ETag changes), records contact.updated with the contact as it is now and a system entry in
// its timeline. It returns the contact's new version: a Phone answer carries the contact's ETag,
// as a phone is part of its contact (and has no version of its own).
func (s *Service) phonesChanged(ctx context.Context, c *ent.Contact, activity, summary string) (int64, error) {
	id := c.ID
	c, err := c.Update().Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("touch contact %s: %w", id, err)
	}
	phones, err := s.phonesOf(ctx, id)
	if err != nil {
		return 0, err
	}
	if err := s.events.Record(ctx, "contact.updated", NewView(c, phones[id])); err != nil {
		return 0, err
	}
	return c.Version, s.RecordActivity(ctx, id, activity, summary)
}
