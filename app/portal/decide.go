package portal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalchangerequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Decisions of POST /portal-change-requests/{changeRequestId}/{decision}.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// ChangeFilter narrows GET /portal-change-requests: the contact (nil: all visible) and the
// status (the spec's default pending).
type ChangeFilter struct {
	ContactID *uuid.UUID
	Status    string
}

// changesOldestFirst orders change requests by (createdAt, id): the oldest waits longest.
var changesOldestFirst = paging.ByCreated(func(r *ent.PortalChangeRequest) (time.Time, uuid.UUID) {
	return r.CreatedAt, r.ID
})

// ListChanges returns a page of the change requests of contacts the caller sees, matching f.
func (s *Service) ListChanges(ctx context.Context, f ChangeFilter, page paging.Page) ([]*ent.PortalChangeRequest, error) {
	if err := licensed(ctx); err != nil {
		return nil, err
	}
	return changesOldestFirst.Rows(page, "portal change requests", func(k paging.Query) ([]*ent.PortalChangeRequest, error) {
		q := tenancy.Client(ctx).PortalChangeRequest.Query().
			Where(portalchangerequest.StatusEQ(portalchangerequest.Status(f.Status)))
		q.Where(paging.If(f.ContactID, portalchangerequest.ContactID)...)
		return q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// kindLabels name the kinds in the timeline.
var kindLabels = map[string]string{KindAddress: "Adresse", KindName: "Name", KindEmail: "E-Mail-Adresse",
	KindPhone: "Telefonnummer", KindBank: "Bankverbindung"}

// Decide approves or rejects the pending change request id (decision DecisionApprove or
// DecisionReject; the handler answers 404 for another). The reason is stored on either and
// shown to the customer. Approval applies the change to the contact as one update (the
// contact's version moves, contact.updated; a phone is added as the primary number, or made
// primary when the contact has it) and writes a timeline entry saying the customer changed it
// in the portal.
//
// Stale rule: the request's baseline (the contact's values of the kind's fields when it was
// made) must still be the contact's values, else 409 contact_changed naming the fields, unless
// in.Confirm (the broker has looked and approves anyway). 404 when the request's contact is
// not visible; 409 change_request_decided when it is not pending.
func (s *Service) Decide(ctx context.Context, id uuid.UUID, decision string, in DecideInput) (*ent.PortalChangeRequest, error) {
	if err := licensed(ctx); err != nil {
		return nil, err
	}
	m := s.m
	r, err := tenancy.Client(ctx).PortalChangeRequest.Query().Where(portalchangerequest.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "change request %s", id)
	}
	if r.Status != portalchangerequest.StatusPending {
		return nil, errs.Conflict("change_request_decided", "change request %s is %s, not pending", id, r.Status)
	}
	status, event := portalchangerequest.StatusRejected, "portal_change_request.rejected"
	if decision == DecisionApprove {
		status, event = portalchangerequest.StatusApproved, "portal_change_request.approved"
		if err := m.apply(ctx, r, in.Confirm); err != nil {
			return nil, err
		}
	}
	r, err = r.Update().SetStatus(status).SetReason(strings.TrimSpace(ptr.Deref(in.Reason))).
		SetDecidedAt(m.d.Now()).SetNillableDecidedBy(tenancy.ActingUser(ctx)).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("decide change request %s: %w", id, err)
	}
	if err := m.recordChange(ctx, event, r); err != nil {
		return nil, err
	}
	return r, nil
}

// apply writes the change of r into its contact (locked), after the stale check.
func (m *Module) apply(ctx context.Context, r *ent.PortalChangeRequest, confirm bool) error {
	cs := m.d.Contacts
	c, err := cs.LockContact(ctx, r.ContactID)
	if err != nil {
		return err
	}
	changes, baseline, err := m.openChange(r)
	if err != nil {
		return err
	}
	kind := string(r.Kind)
	now, err := m.baselineOf(c, kind)
	if err != nil {
		return err
	}
	if moved := changedFields(kind, baseline, now); len(moved) > 0 && !confirm {
		return errs.Conflict("contact_changed", "the contact's %s changed since the request was made; "+
			"approve with {\"confirm\": true} to apply it anyway", strings.Join(moved, ", "))
	}
	if kind == KindPhone {
		if err := m.applyPhone(ctx, c, changes); err != nil {
			return err
		}
	} else {
		d, err := cs.DocOf(c.Contact)
		if err != nil {
			return err
		}
		switch kind {
		case KindAddress:
			d.Address = setFields(d.Address, kindFields[kind], changes)
		case KindBank:
			d.Bank = setFields(d.Bank, kindFields[kind], changes)
		case KindName:
			first, last := changes["firstName"], changes["lastName"]
			d.FirstName, d.LastName = &first, &last
			if c.Type == "private" {
				d.Personal = setFields(d.Personal, []string{"salutation"}, changes)
			}
		case KindEmail:
			e := changes["email"]
			d.Email = &e
		}
		if _, err := cs.SaveWith(ctx, c, d, nil, true); err != nil {
			return err
		}
	}
	return cs.RecordActivity(ctx, c.ID, "portal_change_request.approved",
		kindLabels[kind]+" vom Kunden im Kundenportal geändert (Änderungsanfrage genehmigt)")
}

// setFields is group with fields set from changes: a value replaces, "" removes the field.
func setFields(group map[string]any, fields []string, changes map[string]string) map[string]any {
	if group == nil {
		group = map[string]any{}
	}
	for _, k := range fields {
		if v := changes[k]; v != "" {
			group[k] = v
		} else {
			delete(group, k)
		}
	}
	return group
}

// applyPhone makes the requested number the contact's primary one: added when the contact does
// not have it, else made primary with the requested type. The earlier number stays as a
// secondary one (the broker removes it when it is gone).
func (m *Module) applyPhone(ctx context.Context, c contacts.Contact, changes map[string]string) error {
	number, typ, primary := changes["number"], changes["type"], true
	key, _ := identity.PhoneKey(number)
	body := contacts.PhoneBody{Type: &typ, IsPrimary: &primary}
	for _, p := range c.Phones {
		if p.NumberKey == key {
			_, err := m.d.Contacts.UpdatePhone(ctx, c.ID, p.ID, body)
			return err
		}
	}
	body.Number = &number
	_, err := m.d.Contacts.CreatePhone(ctx, c.ID, body)
	return err
}
