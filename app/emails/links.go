package emails

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactactivity"
	"github.com/brokerdesk/brokerdesk/ent/emaillink"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Targets are the contacts and leads a message is linked to.
type Targets struct {
	Contacts []uuid.UUID
	Leads    []uuid.UUID
}

// ByAddress finds the contacts and leads (that ctx may see) whose e-mail is one of addrs, by
// the matching key identity.EmailKey (as intake and contacts match), and adds them to t.
func ByAddress(ctx context.Context, t Targets, addrs []string) (Targets, error) {
	keys := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if k := identity.EmailKey(a); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return t, nil
	}
	db := tenancy.Client(ctx)
	cs, err := db.Contact.Query().Where(contact.EmailKeyIn(keys...)).IDs(ctx)
	if err != nil {
		return t, fmt.Errorf("contacts by address: %w", err)
	}
	ls, err := db.Lead.Query().Where(lead.EmailKeyIn(keys...)).IDs(ctx)
	if err != nil {
		return t, fmt.Errorf("leads by address: %w", err)
	}
	for _, id := range cs {
		if !slices.Contains(t.Contacts, id) {
			t.Contacts = append(t.Contacts, id)
		}
	}
	for _, id := range ls {
		if !slices.Contains(t.Leads, id) {
			t.Leads = append(t.Leads, id)
		}
	}
	return t, nil
}

// link records that e concerns t's contacts and leads (a link each, none twice) and puts e on
// each contact's timeline (an activity of kind email whose content is the subject). The one
// way a message gets linked: sends and the sync both call it.
func link(ctx context.Context, e *ent.Email, t Targets) ([]*ent.EmailLink, error) {
	db := tenancy.Client(ctx)
	have, err := db.EmailLink.Query().Where(emaillink.EmailID(e.ID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("links of email %s: %w", e.ID, err)
	}
	linked := func(contactID, leadID *uuid.UUID) bool {
		return slices.ContainsFunc(have, func(l *ent.EmailLink) bool {
			return (contactID != nil && l.ContactID != nil && *l.ContactID == *contactID) ||
				(leadID != nil && l.LeadID != nil && *l.LeadID == *leadID)
		})
	}
	at := e.CreatedAt
	if e.SentAt != nil {
		at = *e.SentAt
	}
	for _, id := range t.Contacts {
		if linked(&id, nil) {
			continue
		}
		l, err := db.EmailLink.Create().SetEmailID(e.ID).SetThreadID(e.ThreadID).SetContactID(id).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("link email %s to contact %s: %w", e.ID, id, err)
		}
		have = append(have, l)
		_, err = db.ContactActivity.Create().SetContactID(id).SetKind(contactactivity.KindEmail).
			SetEvent("email." + string(e.Direction)).SetContent(e.Subject).SetOccurredAt(at).
			SetNillableAuthorID(e.CreatorID).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("timeline entry of email %s: %w", e.ID, err)
		}
	}
	for _, id := range t.Leads {
		if linked(nil, &id) {
			continue
		}
		l, err := db.EmailLink.Create().SetEmailID(e.ID).SetThreadID(e.ThreadID).SetLeadID(id).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("link email %s to lead %s: %w", e.ID, id, err)
		}
		have = append(have, l)
	}
	return have, nil
}
