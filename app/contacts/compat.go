package contacts

import (
	"context"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
)

// The tuple forms of the aggregate methods that lead conversion (app/leads/convert.go, rewritten
// on another branch at the same time, issue 19) calls: they keep it compiling until it switches
// to LockContact, Create, SaveWith and View, and this file goes.

// Lock is LockContact as a contact and its phones.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Contact, []*ent.ContactPhone, error) {
	c, err := s.LockContact(ctx, id)
	return c.Contact, c.Phones, err
}

// CreateDoc is Create as a contact and its phones.
func (s *Service) CreateDoc(ctx context.Context, d Doc) (*ent.Contact, []*ent.ContactPhone, error) {
	c, err := s.Create(ctx, d)
	return c.Contact, c.Phones, err
}

// UpdateWith is SaveWith of c with its phones.
func (s *Service) UpdateWith(ctx context.Context, c *ent.Contact, phones []*ent.ContactPhone, d Doc, add []Phone, touch bool) (*ent.Contact, []*ent.ContactPhone, error) {
	out, err := s.SaveWith(ctx, Contact{Contact: c, Phones: phones}, d, add, touch)
	return out.Contact, out.Phones, err
}

// Render is View of c with its phones.
func (s *Service) Render(c *ent.Contact, phones []*ent.ContactPhone, sel Selection) (View, error) {
	return s.View(Contact{Contact: c, Phones: phones}, sel)
}
