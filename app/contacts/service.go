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

// Lock reads a contact and its phones and locks the contact row to the end of the
// transaction. Another company's contact is not found.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Contact, []*ent.ContactPhone, error) {
	db := tenancy.Client(ctx)
	c, err := db.Contact.Query().Where(contact.ID(id)).ForUpdate().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil, errs.NotFound("contact %s not found", id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("lock contact %s: %w", id, err)
	}
	phones, err := s.phonesOf(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return c, phones[id], nil
}

// Duplicate is a contact that matches by e-mail or phone.
type Duplicate struct {
	Contact   View     `json:"contact"`
	MatchedBy []string `json:"matchedBy"`
}

// Duplicates finds up to limit contacts (oldest first) with one of the e-mail keys or one of
// the phone keys, each with what matched ("email", "phone").
func (s *Service) Duplicates(ctx context.Context, emailKeys, phoneKeys []string, limit int) ([]Duplicate, error) {
	out := []Duplicate{}
	if len(emailKeys) == 0 && len(phoneKeys) == 0 {
		return out, nil
	}
	db := tenancy.Client(ctx)
	var byPhone []uuid.UUID
	if len(phoneKeys) > 0 {
		if err := db.ContactPhone.Query().Where(contactphone.NumberKeyIn(phoneKeys...)).
			Select(contactphone.FieldContactID).Scan(ctx, &byPhone); err != nil {
			return nil, fmt.Errorf("match contacts by phone: %w", err)
		}
	}
	var preds []predicate.Contact
	if len(emailKeys) > 0 {
		preds = append(preds, contact.EmailKeyIn(emailKeys...))
	}
	if len(byPhone) > 0 {
		preds = append(preds, contact.IDIn(byPhone...))
	}
	if len(preds) == 0 {
		return out, nil
	}
	found, err := db.Contact.Query().Where(contact.Or(preds...)).
		Order(ent.Asc(contact.FieldCreatedAt), ent.Asc(contact.FieldID)).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("match contacts: %w", err)
	}
	ids := make([]uuid.UUID, len(found))
	for i, c := range found {
		ids[i] = c.ID
	}
	phones, err := s.phonesOf(ctx, ids...)
	if err != nil {
		return nil, err
	}
	for _, c := range found {
		d := Duplicate{Contact: NewView(c, phones[c.ID]), MatchedBy: []string{}}
		if c.EmailKey != nil && slices.Contains(emailKeys, *c.EmailKey) {
			d.MatchedBy = append(d.MatchedBy, "email")
		}
		if slices.ContainsFunc(phones[c.ID], func(p *ent.ContactPhone) bool { return slices.Contains(phoneKeys, p.NumberKey) }) {
			d.MatchedBy = append(d.MatchedBy, "phone")
		}
		out = append(out, d)
	}
	return out, nil
}

// phonesOf loads the phones of contacts, primary first, then in the order they were added.
func (s *Service) phonesOf(ctx context.Context, ids ...uuid.UUID) (map[uuid.UUID][]*ent.ContactPhone, error) {
	out := map[uuid.UUID][]*ent.ContactPhone{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tenancy.Client(ctx).ContactPhone.Query().Where(contactphone.ContactIDIn(ids...)).
		Order(ent.Desc(contactphone.FieldIsPrimary), ent.Asc(contactphone.FieldCreatedAt), ent.Asc(contactphone.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load contact phones: %w", err)
	}
	for _, p := range rows {
		out[p.ContactID] = append(out[p.ContactID], p)
	}
	return out, nil
}
