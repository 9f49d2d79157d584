package emails

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/linked"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Outgoing is one message to send from a company mailbox: what POST /emails and the other
// areas (correspondence cases, later portal invitations, signatures, funnels) hand to Send.
type Outgoing struct {
	MailboxID uuid.UUID
	To, Cc    []schematype.MailAddress
	Bcc       []schematype.MailAddress
	Subject   string
	Text      string
	HTML      *string
	// DocumentIDs are documents of the company attached to the message (25 MB in all).
	DocumentIDs []uuid.UUID
	// ContactID and LeadID link the message (and its thread) and put it on the timeline.
	ContactID, LeadID *uuid.UUID
	// ReplyToEmailID makes the message a reply in that message's thread.
	ReplyToEmailID *uuid.UUID
	// TemplateID fills subject, text and HTML from a company template; Subject, Text and HTML
	// given beside it win over the template's.
	TemplateID *uuid.UUID
	// Placeholders add to and override the values a template is filled with (contact.*,
	// lead.*, user.*, company.*, recipient.*).
	Placeholders map[string]string
	Marketing    bool
	Tracking     bool
	// Free sends without taking points (correspondence with insurers, signing links).
	Free bool
	// Secrets are strings of the bodies that only the recipient may read (a signing link, a
	// one-time code): the message is sent with them, but the copy the API shows and searches
	// has each replaced by "[entfernt]", so nobody of the company can sign for the recipient
	// by reading the sent mail through the API.
	Secrets []string

	// defaultMarketing and defaultTracking: POST /emails left the flag out; marketing then
	// follows the template, tracking follows marketing. Other areas say both.
	defaultMarketing, defaultTracking bool
}

// Send checks o, takes its points, composes and stores the message as queued in its thread
// (linked, on the timeline) in the transaction of ctx, and queues its delivery after the
// commit. Every bad field is one 422 (codes as POST /emails documents them); too few points
// are a 402 insufficient_points. The send worker delivers it (worker.go).
func (s *Service) Send(ctx context.Context, o Outgoing) (*ent.Email, error) {
	l, err := s.send(ctx, o)
	if err != nil {
		return nil, err
	}
	return l.Email, nil
}

// sendInput is POST /emails: the body's Outgoing, answered with the message as its view shows it.
func (s *Service) sendInput(ctx context.Context, in SendInput) (Loaded, error) {
	return s.send(ctx, in.outgoing())
}

// prepared is an Outgoing checked against the database: the rows it names and the content to
// send.
type prepared struct {
	o         Outgoing
	mailbox   *ent.Mailbox
	template  *ent.EmailTemplate
	parent    *ent.Email
	documents []*ent.Document
	subject   string
	text      string
	html      string
	marketing bool
	tracking  bool
}

// send is Send, answering with what the view needs.
func (s *Service) send(ctx context.Context, o Outgoing) (Loaded, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return Loaded{}, tenancy.ErrNoCompany
	}
	p, err := s.prepare(ctx, o)
	if err != nil {
		return Loaded{}, err
	}
	cost := int64(0)
	if !o.Free {
		cost = int64(len(recipients(o)))
		if err := takePoints(ctx, cost); err != nil {
			return Loaded{}, err
		}
	}
	c, err := s.m.compose(ctx, company, p)
	if err != nil {
		return Loaded{}, err
	}
	l, err := s.store(ctx, company, p, c, cost)
	if err != nil {
		return Loaded{}, err
	}
	if err := s.m.enqueue(ctx, company, l.Email.ID); err != nil {
		return Loaded{}, err
	}
	return l, nil
}

// prepare runs the checks that need the database, in the order of the body, and lists every bad
// field in one 422: the mailbox (one the caller may send from), contact and lead, template,
// replied message and documents the caller sees; then the content (the template filled), the
// marketing rules and the opt-out list.
func (s *Service) prepare(ctx context.Context, o Outgoing) (*prepared, error) {
	var v errs.Invalid
	// Other areas hand Outgoing without the body's checks: the same rules, once more.
	v.Check("to", len(o.To) > 0, "required", "at least one recipient")
	checkAddresses(&v, "to", o.To)
	checkAddresses(&v, "cc", o.Cc)
	checkAddresses(&v, "bcc", o.Bcc)
	checkSubject(&v, "subject", o.Subject)
	v.Check("attachmentDocumentIds", len(o.DocumentIDs) <= MaxAttachments, "too_many",
		fmt.Sprintf("at most %d documents", MaxAttachments))
	if err := v.Err(); err != nil {
		return nil, err
	}

	db := tenancy.Client(ctx)
	p := &prepared{o: o}
	var err error
	// The mailbox under the caller's visibility: shared ones, the caller's own (and its
	// delegators'), all for a company-level key.
	if p.mailbox, err = db.Mailbox.Query().Where(mailbox.ID(o.MailboxID)).Only(ctx); ent.IsNotFound(err) {
		v.Add("mailboxId", "unknown_mailbox", "is not a mailbox you may send from (see GET /mailboxes)")
	} else if err != nil {
		return nil, fmt.Errorf("read mailbox %s: %w", o.MailboxID, err)
	}
	if err := linked.Check(ctx, &v, linked.Contact("contactId", o.ContactID), linked.Lead("leadId", o.LeadID)); err != nil {
		return nil, err
	}
	if o.TemplateID != nil {
		if p.template, err = db.EmailTemplate.Get(ctx, *o.TemplateID); ent.IsNotFound(err) {
			v.Add("templateId", "unknown_template", "is not a template of this company (see GET /email-templates)")
		} else if err != nil {
			return nil, fmt.Errorf("read template %s: %w", *o.TemplateID, err)
		}
	}
	if o.ReplyToEmailID != nil {
		if p.parent, err = db.Email.Get(ctx, *o.ReplyToEmailID); ent.IsNotFound(err) {
			v.Add("replyToEmailId", "unknown_email", "is not an e-mail you may see")
		} else if err != nil {
			return nil, fmt.Errorf("read email %s: %w", *o.ReplyToEmailID, err)
		}
	}
	if err := s.attachable(ctx, &v, p); err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}

	if err := s.content(ctx, &v, p); err != nil {
		return nil, err
	}
	p.marketing = o.Marketing
	if o.defaultMarketing {
		p.marketing = p.template != nil && p.template.Marketing
	}
	p.tracking = o.Tracking
	if o.defaultTracking {
		p.tracking = p.marketing
	}
	if p.marketing {
		if pr, ok := tenancy.PrincipalFrom(ctx); ok && !pr.HasFeature("marketing") {
			return nil, errs.Forbidden("feature_not_licensed", "a marketing e-mail needs the feature marketing (opt-outs, unsubscribe)")
		}
		// The unsubscribe link names one person: a marketing mail goes to one recipient.
		v.Check("to", len(o.To) == 1 && len(o.Cc) == 0 && len(o.Bcc) == 0, "marketing_single_recipient",
			"a marketing e-mail goes to exactly one recipient in to, without cc or bcc")
		if len(o.To) == 1 {
			out, err := s.OptedOut(ctx, []string{o.To[0].Email})
			if err != nil {
				return nil, err
			}
			v.Check("to.0.email", len(out) == 0, "opted_out", "the address is on the company's opt-out list (see GET /email-opt-outs)")
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// attachable reads the documents o attaches (as the caller sees them) and checks their number
// and total size.
func (s *Service) attachable(ctx context.Context, v *errs.Invalid, p *prepared) error {
	if len(p.o.DocumentIDs) == 0 {
		return nil
	}
	docs, err := tenancy.Client(ctx).Document.Query().Where(document.IDIn(p.o.DocumentIDs...)).All(ctx)
	if err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	var total int64
	for i, id := range p.o.DocumentIDs {
		j := slices.IndexFunc(docs, func(d *ent.Document) bool { return d.ID == id })
		if j < 0 {
			v.Add(fmt.Sprintf("attachmentDocumentIds.%d", i), "unknown_document", "is not a document you may see")
			continue
		}
		p.documents = append(p.documents, docs[j])
		total += docs[j].Size
	}
	v.Check("attachmentDocumentIds", total <= MaxAttachmentBytes, "attachments_too_large",
		fmt.Sprintf("the documents have %d bytes, at most %d (25 MB) may be attached", total, MaxAttachmentBytes))
	return nil
}

// content fills subject, text and HTML: the template's, filled with the values of the contact,
// lead, acting user and company plus the caller's placeholders, each part given by the caller
// winning over the template's.
func (s *Service) content(ctx context.Context, v *errs.Invalid, p *prepared) error {
	o := p.o
	p.subject, p.text = o.Subject, o.Text
	if o.HTML != nil {
		p.html = *o.HTML
	}
	if t := p.template; t != nil {
		values, err := s.placeholderValues(ctx, p)
		if err != nil {
			return err
		}
		if p.subject == "" {
			// A value's line breaks become blanks in the subject: a header has one line.
			flat := make(map[string]string, len(values))
			for k, val := range values {
				flat[k] = strings.Join(strings.FieldsFunc(val, func(r rune) bool { return r == '\r' || r == '\n' || r == 0 }), " ")
			}
			p.subject = strings.TrimSpace(Fill(t.Subject, flat))
		}
		if p.text == "" && p.html == "" {
			p.text = Fill(t.BodyText, values)
			if t.BodyHTML != nil {
				p.html = Fill(*t.BodyHTML, htmlEscaped(values))
			}
		}
	}
	v.Check("subject", strings.TrimSpace(p.subject) != "", "required", "is required (the template has no subject)")
	checkSubject(v, "subject", p.subject)
	v.Check("text", p.text != "" || p.html != "", "required", "give text or html (the template has no body)")
	return v.Err()
}

// store writes the message: the raw message and the attachments to blob storage (removed again
// when the transaction rolls back), its thread, the row (queued), its attachments, the ledger
// line of its points and its links (the contact and lead given, and whoever the recipients'
// addresses name).
func (s *Service) store(ctx context.Context, company uuid.UUID, p *prepared, c *composed, cost int64) (Loaded, error) {
	db := tenancy.Client(ctx)
	if err := s.m.writeBlob(ctx, c.rawKey, c.raw, "message/rfc822"); err != nil {
		return Loaded{}, err
	}
	now := s.now()
	thread, err := s.outboundThread(ctx, p, now)
	if err != nil {
		return Loaded{}, err
	}
	o := p.o
	e, err := db.Email.Create().SetID(c.id).SetThreadID(thread.ID).SetMailboxID(p.mailbox.ID).
		SetDirection(email.DirectionOutbound).SetStatus(email.StatusQueued).SetMessageID(c.messageID).
		SetInReplyTo(c.inReplyTo).SetReferences(c.references).SetFromAddress(p.mailbox.Email).
		SetFromName(p.mailbox.Label).SetTo(orEmpty(o.To)).SetCc(orEmpty(o.Cc)).SetBcc(orEmpty(o.Bcc)).
		SetSubject(p.subject).SetTextBody(c.storedText).SetNillableHTMLBody(c.storedHTML).
		SetSearchText(searchText(p.subject, mail.Address{Email: p.mailbox.Email, Name: p.mailbox.Label}, o.To, o.Cc, c.storedText)).SetRawKey(c.rawKey).
		SetSizeBytes(int64(len(c.raw))).SetMarketing(p.marketing).SetTracking(c.tracked).
		SetNillableTemplateID(o.TemplateID).SetNillableCreatorID(tenancy.ActingUser(ctx)).SetPoints(int(cost)).
		SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return Loaded{}, fmt.Errorf("store email: %w", err)
	}
	if err := chargePoints(ctx, cost, e.ID); err != nil {
		return Loaded{}, err
	}
	l := Loaded{Email: e, Mailbox: p.mailbox}
	for i, d := range p.documents {
		a, err := s.m.attachDocument(ctx, company, e, d, c.files[i])
		if err != nil {
			return Loaded{}, err
		}
		l.Attachments = append(l.Attachments, a)
	}
	var t Targets
	if o.ContactID != nil {
		t.Contacts = append(t.Contacts, *o.ContactID)
	}
	if o.LeadID != nil {
		t.Leads = append(t.Leads, *o.LeadID)
	}
	if t, err = ByAddress(ctx, t, recipients(o)); err != nil {
		return Loaded{}, err
	}
	if l.Links, err = link(ctx, e, t); err != nil {
		return Loaded{}, err
	}
	return l, nil
}

// outboundThread is the thread of a new outbound message: the replied message's when it is of
// the same mailbox (its count and time move on), else a new one. A reply from another mailbox
// starts a thread of that mailbox (a thread belongs to one mailbox) and still carries
// In-Reply-To and References, so the recipient's client threads it.
func (s *Service) outboundThread(ctx context.Context, p *prepared, now time.Time) (*ent.EmailThread, error) {
	db := tenancy.Client(ctx)
	if p.parent != nil && p.parent.MailboxID == p.mailbox.ID {
		if err := addToThread(ctx, p.parent.ThreadID, now, now); err != nil {
			return nil, err
		}
		return db.EmailThread.Get(ctx, p.parent.ThreadID)
	}
	t, err := db.EmailThread.Create().SetMailboxID(p.mailbox.ID).SetSubject(p.subject).
		SetSubjectKey(SubjectKey(p.subject)).SetLastMessageAt(now).SetMessageCount(1).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create thread: %w", err)
	}
	return t, nil
}

// recipients are the distinct addresses of to, cc and bcc (compared in lower case), each as
// first given: the envelope, and what a send costs (one point each).
func recipients(o Outgoing) []string {
	var out, seen []string
	for _, list := range [][]schematype.MailAddress{o.To, o.Cc, o.Bcc} {
		for _, a := range list {
			k := strings.ToLower(strings.TrimSpace(a.Email))
			if k == "" || slices.Contains(seen, k) {
				continue
			}
			seen = append(seen, k)
			out = append(out, strings.TrimSpace(a.Email))
		}
	}
	return out
}

// headerError turns Compose's refusal into the 422 of the field it names (the checks above
// catch these first; this is the net beneath them).
func headerError(err error) error {
	var he *mail.HeaderError
	if !errors.As(err, &he) {
		return err
	}
	field := strings.ToLower(he.Field)
	switch {
	case field == "to", field == "cc", field == "bcc", field == "subject":
	case strings.HasPrefix(field, "attachment"):
		field = "attachmentDocumentIds"
	default:
		field = "subject"
	}
	return errs.InvalidField(field, "header_injection", he.Reason)
}
