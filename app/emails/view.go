package emails

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/emaillink"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Body variants of GET /emails/{emailId}?body= (the spec's enumeration; default text).
const (
	BodyNone = "none"
	BodyText = "text"
	BodyHTML = "html"
)

// BodyVariants lists them.
var BodyVariants = []string{BodyNone, BodyText, BodyHTML}

// AttachmentView is one attachment of an Email.
type AttachmentView struct {
	ID          uuid.UUID `json:"id"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"contentType"`
	SizeBytes   int64     `json:"sizeBytes"`
	Inline      bool      `json:"inline"`
}

// View is the Email resource. Text and HTML carry the body variant asked for (both null for
// "none"; HTML null when the message has none); Bcc only on outbound mail.
type View struct {
	ID          uuid.UUID                `json:"id"`
	ThreadID    uuid.UUID                `json:"threadId"`
	MailboxID   uuid.UUID                `json:"mailboxId"`
	Direction   string                   `json:"direction"`
	Status      string                   `json:"status"`
	MessageID   string                   `json:"messageId"`
	InReplyTo   *string                  `json:"inReplyTo"`
	From        schematype.MailAddress   `json:"from"`
	To          []schematype.MailAddress `json:"to"`
	Cc          []schematype.MailAddress `json:"cc"`
	Bcc         []schematype.MailAddress `json:"bcc"`
	ReplyTo     *string                  `json:"replyTo"`
	Subject     string                   `json:"subject"`
	Text        *string                  `json:"text"`
	HTML        *string                  `json:"html"`
	SentAt      *time.Time               `json:"sentAt"`
	DeliveredAt *time.Time               `json:"deliveredAt"`
	OpenedAt    *time.Time               `json:"openedAt"`
	ClickedAt   *time.Time               `json:"clickedAt"`
	Error       *string                  `json:"error"`
	Marketing   bool                     `json:"marketing"`
	Tracking    bool                     `json:"tracking"`
	TemplateID  *uuid.UUID               `json:"templateId"`
	ContactIDs  []uuid.UUID              `json:"contactIds"`
	LeadIDs     []uuid.UUID              `json:"leadIds"`
	Attachments []AttachmentView         `json:"attachments"`
	CreatedAt   time.Time                `json:"createdAt"`
	UpdatedAt   time.Time                `json:"updatedAt"`
	about       events.About
}

// Loaded is a message with what its view shows beside its own columns: its attachments and
// the links the caller may see (both read under the caller's visibility).
type Loaded struct {
	Email       *ent.Email
	Attachments []*ent.EmailAttachment
	Links       []*ent.EmailLink
	// Mailbox is the message's mailbox when the caller sees it (events: who else may see it).
	Mailbox *ent.Mailbox
}

// NewView is the Email resource of l with the body variant asked for (BodyNone for events).
func NewView(l Loaded, body string) View {
	e := l.Email
	v := View{ID: e.ID, ThreadID: e.ThreadID, MailboxID: e.MailboxID, Direction: string(e.Direction),
		Status: string(e.Status), MessageID: e.MessageID, InReplyTo: nonEmpty(e.InReplyTo),
		From: schematype.MailAddress{Email: e.FromAddress, Name: e.FromName}, To: orEmpty(e.To), Cc: orEmpty(e.Cc),
		Bcc: []schematype.MailAddress{}, ReplyTo: nonEmpty(e.ReplyTo), Subject: e.Subject,
		SentAt: e.SentAt, DeliveredAt: e.DeliveredAt, OpenedAt: e.OpenedAt, ClickedAt: e.ClickedAt,
		Error: nonEmpty(e.Error), Marketing: e.Marketing, Tracking: e.Tracking, TemplateID: e.TemplateID,
		ContactIDs: []uuid.UUID{}, LeadIDs: []uuid.UUID{}, Attachments: []AttachmentView{},
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if e.Direction == "outbound" {
		v.Bcc = orEmpty(e.Bcc)
	}
	switch body {
	case BodyText:
		t := e.TextBody
		v.Text = &t
	case BodyHTML:
		v.HTML = e.HTMLBody
	}
	for _, a := range l.Attachments {
		v.Attachments = append(v.Attachments, AttachmentView{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType,
			SizeBytes: a.SizeBytes, Inline: a.Inline})
	}
	for _, k := range l.Links {
		if k.ContactID != nil {
			v.ContactIDs = append(v.ContactIDs, *k.ContactID)
		}
		if k.LeadID != nil {
			v.LeadIDs = append(v.LeadIDs, *k.LeadID)
		}
	}
	return v
}

// EventAbout: what an event about the message concerns (eventView); the zero About (every
// credential with emails:read) for a view not built for an event.
func (v View) EventAbout() events.About { return v.about }

// eventView is the Email resource as its events carry it (no bodies), with what the event
// concerns: an event reaches who may read the message's thread, as far as events.About can say
// it (docs/decisions/email.md "Events"). A shared mailbox's mail reaches everyone with
// emails:read. Otherwise the mailbox's owner (and delegates), and the parties the thread is
// linked to, read through the links of the whole thread (a reply from an unknown address is
// readable through its thread's link to the customer): the first linked contact (visible while
// it exists), and the owner of the next party, a lead or a second contact. A thread linked to
// three or more parties reaches the viewers of the first two only. ctx must see every link:
// events are recorded by the workers and tracking routes, which work company-wide.
func eventView(ctx context.Context, l Loaded) (View, error) {
	v := NewView(l, BodyNone)
	if l.Mailbox != nil && l.Mailbox.Shared {
		return v, nil
	}
	a := events.About{UserScoped: true}
	if l.Mailbox != nil {
		a.OwnerID = l.Mailbox.OwnerID
	}
	db := tenancy.Client(ctx)
	links, err := db.EmailLink.Query().Where(emaillink.ThreadID(l.Email.ThreadID)).
		Order(ent.Asc(emaillink.FieldCreatedAt), ent.Asc(emaillink.FieldID)).Limit(50).All(ctx)
	if err != nil {
		return v, fmt.Errorf("links of thread %s: %w", l.Email.ThreadID, err)
	}
	// The message's own links first, then the rest of the thread's.
	slices.SortStableFunc(links, func(x, y *ent.EmailLink) int {
		return cmp.Compare(boolRank(x.EmailID != l.Email.ID), boolRank(y.EmailID != l.Email.ID))
	})
	for _, k := range links {
		switch {
		case k.ContactID != nil && a.ContactID == nil:
			a.ContactID = k.ContactID
		case a.CoOwnerID != nil:
		case k.ContactID != nil && *k.ContactID != *a.ContactID:
			c, err := db.Contact.Query().Where(contact.ID(*k.ContactID)).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return v, fmt.Errorf("contact %s: %w", *k.ContactID, err)
			}
			if c != nil {
				a.CoOwnerID = c.OwnerID
			}
		case k.LeadID != nil:
			x, err := db.Lead.Query().Where(lead.ID(*k.LeadID)).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return v, fmt.Errorf("lead %s: %w", *k.LeadID, err)
			}
			if x != nil {
				a.CoOwnerID = x.OwnerID
			}
		}
	}
	v.about = a
	return v, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmpty(a []schematype.MailAddress) []schematype.MailAddress {
	if a == nil {
		return []schematype.MailAddress{}
	}
	return a
}
