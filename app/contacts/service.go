package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactphone"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service creates, reads, matches and merges contacts of the company pinned in ctx.
type Service struct {
	events   *events.Service
	keys     *datakeys.Keyring
	now      func() time.Time
	onDelete []DeleteHook
}

// DeleteHook runs in the transaction of a contact's deletion, with the contact locked, before
// its row goes: an area that keeps rows of the contact (contracts) deletes them itself and
// records their events, which the database's cascade could not.
type DeleteHook func(ctx context.Context, contactID uuid.UUID) error

// OnDelete adds a hook to every deletion of a contact (wiring, before serving).
func (s *Service) OnDelete(h DeleteHook) { s.onDelete = append(s.onDelete, h) }

// NewService returns the service. keys seal the sensitive groups; now is the clock.
func NewService(ev *events.Service, keys *datakeys.Keyring, now func() time.Time) *Service {
	return &Service{events: ev, keys: keys, now: now}
}

// Phone is a phone number to store; Type is one of PhoneTypes.
type Phone struct {
	Number    string
	Type      string
	IsPrimary bool
}

// addPhones stores the numbers of phones not among have (by E.164 key). The first number of a
// contact without a primary one becomes primary.
func (s *Service) addPhones(ctx context.Context, contactID uuid.UUID, have []*ent.ContactPhone, phones []Phone) ([]*ent.ContactPhone, error) {
	seen := map[string]bool{}
	primary := false
	for _, p := range have {
		seen[p.NumberKey] = true
		primary = primary || p.IsPrimary
	}
	for _, p := range phones {
		primary = primary || p.IsPrimary
	}
	out := have
	db := tenancy.Client(ctx)
	for _, p := range phones {
		key, _ := identity.PhoneKey(p.Number)
		if seen[key] {
			continue
		}
		seen[key] = true
		typ := p.Type
		if typ == "" {
			typ = PhoneType(p.Number)
		}
		isPrimary := p.IsPrimary || !primary
		primary = true
		ph, err := db.ContactPhone.Create().SetContactID(contactID).SetNumber(strings.TrimSpace(p.Number)).
			SetNumberKey(key).SetType(typ).SetIsPrimary(isPrimary).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("add phone to contact %s: %w", contactID, err)
		}
		out = append(out, ph)
	}
	return out, nil
}

// Contact is the aggregate the service reads and writes: a contact with its phone numbers,
// primary first, then in the order they were added. Handlers make its View (View, NewView).
type Contact struct {
	*ent.Contact
	Phones []*ent.ContactPhone
}

// phoneOrder orders the phones edge as a Contact holds them (WithPhones(phoneOrder)).
func phoneOrder(q *ent.ContactPhoneQuery) {
	q.Order(ent.Desc(contactphone.FieldIsPrimary), ent.Asc(contactphone.FieldCreatedAt), ent.Asc(contactphone.FieldID))
}

// aggregate is the Contact of c, read WithPhones(phoneOrder).
func aggregate(c *ent.Contact) Contact { return Contact{Contact: c, Phones: c.Edges.Phones} }

// Find reads one contact with its phones. Another company's contact, or one the credential may
// not see, is not found.
func (s *Service) Find(ctx context.Context, id uuid.UUID) (Contact, error) {
	c, err := tenancy.Client(ctx).Contact.Query().Where(contact.ID(id)).WithPhones(phoneOrder).Only(ctx)
	if err != nil {
		return Contact{}, errs.FromEnt(err, "contact %s", id)
	}
	return aggregate(c), nil
}

// LockContact reads a contact with its phones and locks the contact row to the end of the
// transaction (the phones change only under that lock). Another company's contact is not found.
func (s *Service) LockContact(ctx context.Context, id uuid.UUID) (Contact, error) {
	c, err := tenancy.Client(ctx).Contact.Query().Where(contact.ID(id)).ForUpdate().WithPhones(phoneOrder).Only(ctx)
	if err != nil {
		return Contact{}, errs.FromEnt(err, "contact %s", id)
	}
	return aggregate(c), nil
}

// Duplicate is a contact that matches by e-mail or phone, with what matched ("email",
// "phone").
type Duplicate struct {
	Contact
	MatchedBy []string
}

// DuplicateView is the view of a Duplicate, as lead conversion's dry run lists it.
type DuplicateView struct {
	Contact   View     `json:"contact"`
	MatchedBy []string `json:"matchedBy"`
}

// NewDuplicateView is the view of d.
func NewDuplicateView(d Duplicate) DuplicateView {
	return DuplicateView{Contact: NewView(d.Contact), MatchedBy: d.MatchedBy}
}

// Duplicates finds up to limit contacts (oldest first) with one of the e-mail keys or one of
// the phone keys.
func (s *Service) Duplicates(ctx context.Context, emailKeys, phoneKeys []string, limit int) ([]Duplicate, error) {
	out := []Duplicate{}
	if len(emailKeys) == 0 && len(phoneKeys) == 0 {
		return out, nil
	}
	var preds []predicate.Contact
	if len(emailKeys) > 0 {
		preds = append(preds, contact.EmailKeyIn(emailKeys...))
	}
	if len(phoneKeys) > 0 {
		preds = append(preds, contact.HasPhonesWith(contactphone.NumberKeyIn(phoneKeys...)))
	}
	found, err := tenancy.Client(ctx).Contact.Query().Where(contact.Or(preds...)).WithPhones(phoneOrder).
		Order(ent.Asc(contact.FieldCreatedAt), ent.Asc(contact.FieldID)).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("match contacts: %w", err)
	}
	for _, c := range found {
		d := Duplicate{Contact: aggregate(c), MatchedBy: []string{}}
		if c.EmailKey != nil && slices.Contains(emailKeys, *c.EmailKey) {
			d.MatchedBy = append(d.MatchedBy, "email")
		}
		if slices.ContainsFunc(d.Phones, func(p *ent.ContactPhone) bool { return slices.Contains(phoneKeys, p.NumberKey) }) {
			d.MatchedBy = append(d.MatchedBy, "phone")
		}
		out = append(out, d)
	}
	return out, nil
}
