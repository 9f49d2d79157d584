package correspondence

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/correspondencecase"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs the correspondence use cases in the request's transaction.
type Service struct {
	events *events.Service
	mail   *emails.Service
}

// NewService returns the service; mail sends a case.
func NewService(ev *events.Service, mail *emails.Service) *Service {
	return &Service{events: ev, mail: mail}
}

// The 409 codes of the case's states (spec: "State transitions").
const (
	codeNotDraft = "case_not_draft" // edited, deleted or sent after it was sent
	codeNotSent  = "case_not_sent"  // a draft's status patched: /send sends it
)

// Get reads one case. A case of another company, or of a contact the caller may not see, is
// not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Case, error) {
	c, err := tenancy.Client(ctx).CorrespondenceCase.Get(ctx, id)
	if err != nil {
		return Case{}, errs.FromEnt(err, "correspondence case %s", id)
	}
	return withInsurer(ctx, c)
}

// Lock reads one case and locks its row to the end of the transaction.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (Case, error) {
	c, err := tenancy.Client(ctx).CorrespondenceCase.Query().Where(correspondencecase.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return Case{}, errs.FromEnt(err, "correspondence case %s", id)
	}
	return withInsurer(ctx, c)
}

func withInsurer(ctx context.Context, c *ent.CorrespondenceCase) (Case, error) {
	cs, err := withInsurers(ctx, []*ent.CorrespondenceCase{c})
	if err != nil {
		return Case{}, err
	}
	return cs[0], nil
}

// withInsurers pairs cases with their insurers' names in one query.
func withInsurers(ctx context.Context, rows []*ent.CorrespondenceCase) ([]Case, error) {
	ids := make([]uuid.UUID, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.InsurerID)
	}
	names := map[uuid.UUID]string{}
	if len(ids) > 0 {
		ins, err := tenancy.Client(ctx).Insurer.Query().Where(insurer.IDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read insurers of correspondence cases: %w", err)
		}
		for _, i := range ins {
			names[i.ID] = i.Name
		}
	}
	out := make([]Case, len(rows))
	for i, r := range rows {
		out[i] = Case{CorrespondenceCase: r, InsurerName: names[r.InsurerID]}
	}
	return out, nil
}

// Create makes one draft per insurer of the contracts in: each names that insurer's contracts,
// its subject and body are the type's letter filled from the contact, the contracts, the form
// data and the company, its recipient the insurer's correspondence address (empty when the
// catalog has none). Every contract must be one of the contact's (both visible to the caller):
// 422 names each that is not, and each the type does not apply to. Records
// correspondence_case.created per case.
func (s *Service) Create(ctx context.Context, in CreateInput) ([]Case, error) {
	db := tenancy.Client(ctx)
	ct, err := db.Contact.Get(ctx, in.contactID)
	if ent.IsNotFound(err) {
		return nil, errs.InvalidField("contactId", "unknown_contact", "is not a contact of this company")
	}
	if err != nil {
		return nil, fmt.Errorf("read contact %s: %w", in.contactID, err)
	}
	found, err := db.Contract.Query().Where(contract.IDIn(in.contractIDs...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read contracts: %w", err)
	}
	byID := map[uuid.UUID]*ent.Contract{}
	for _, c := range found {
		byID[c.ID] = c
	}
	var v errs.Invalid
	var order []uuid.UUID // insurers in the order their first contract was named
	groups := map[uuid.UUID][]*ent.Contract{}
	for i, id := range in.contractIDs {
		field := fmt.Sprintf("contractIds.%d", i)
		c, ok := byID[id]
		switch {
		case !ok || c.ContactID != ct.ID:
			v.Add(field, "unknown_contract", "is not a contract of contact "+ct.ID.String())
		case !in.typ.appliesTo(c.Type):
			v.Add(field, "not_applicable", fmt.Sprintf("%s does not apply to contract type %s", in.typ.Key, c.Type))
		default:
			if _, seen := groups[c.InsurerID]; !seen {
				order = append(order, c.InsurerID)
			}
			groups[c.InsurerID] = append(groups[c.InsurerID], c)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	insurers := map[uuid.UUID]*ent.Insurer{}
	ins, err := db.Insurer.Query().Where(insurer.IDIn(order...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read insurers: %w", err)
	}
	for _, i := range ins {
		insurers[i.ID] = i
	}
	sender, company := signature(ctx)
	out := make([]Case, 0, len(order))
	for _, insID := range order {
		contracts, i := groups[insID], insurers[insID]
		subject, body, err := render(in.typ, newLetter(in.typ, ct, contracts, i.Name, sender, company, in.FormData))
		if err != nil {
			return nil, err
		}
		ids := make([]uuid.UUID, len(contracts))
		for k, c := range contracts {
			ids[k] = c.ID
		}
		row, err := db.CorrespondenceCase.Create().SetContactID(ct.ID).SetInsurerID(insID).SetContractIds(ids).
			SetTransactionType(in.typ.Key).SetSubject(subject).SetBody(body).SetRecipientEmail(i.CorrespondenceEmail).
			SetFormData(in.FormData).SetNillableCreatorID(tenancy.ActingUser(ctx)).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("create correspondence case: %w", err)
		}
		c := Case{CorrespondenceCase: row, InsurerName: i.Name}
		if err := s.events.Record(ctx, "correspondence_case.created", NewView(c)); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// signature is who signs a letter: the acting user's name (none for a company key) and the
// company's name, both read with the credential.
func signature(ctx context.Context) (sender, company string) {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok {
		return "", ""
	}
	return strings.TrimSpace(p.UserFirstName + " " + p.UserLastName), p.CompanyName
}

// Update applies a PATCH to c (locked by Lock). A draft takes edits of its subject, body,
// recipient and form data, but no status (409 case_not_sent: POST …/send sends it); a sent
// case takes only a status among sent, completed and follow_up (409 case_not_draft for an
// edit). The form data is stored as patched; subject and body stay as they are (the broker's
// text is never rewritten behind their back). A patch that changes nothing keeps the version
// and records nothing; otherwise correspondence_case.updated.
func (s *Service) Update(ctx context.Context, c Case, p PatchInput) (Case, error) {
	draft := c.Status == correspondencecase.StatusDraft
	switch {
	case draft && p.Status != nil:
		return Case{}, errs.Conflict(codeNotSent, "correspondence case %s is a draft: send it with POST /correspondence-cases/%s/send", c.ID, c.ID)
	case !draft && p.edits():
		return Case{}, errs.Conflict(codeNotDraft, "correspondence case %s was sent: only its status can change", c.ID)
	}
	q := tenancy.Client(ctx).CorrespondenceCase.UpdateOne(c.CorrespondenceCase)
	changed := false
	set := func(cur string, next *string, apply func(string)) {
		if next != nil && *next != cur {
			apply(*next)
			changed = true
		}
	}
	set(c.Subject, p.Subject, func(x string) { q.SetSubject(x) })
	set(c.Body, p.Body, func(x string) { q.SetBody(x) })
	set(c.RecipientEmail, trimmed(p.RecipientEmail), func(x string) { q.SetRecipientEmail(x) })
	set(string(c.Status), p.Status, func(x string) { q.SetStatus(correspondencecase.Status(x)) })
	if p.FormData != nil && !reflect.DeepEqual(normalForm(c.FormData), normalForm(p.FormData)) {
		q.SetFormData(p.FormData)
		changed = true
	}
	if !changed {
		return c, nil
	}
	row, err := q.Save(ctx)
	if err != nil {
		return Case{}, fmt.Errorf("update correspondence case %s: %w", c.ID, err)
	}
	out := Case{CorrespondenceCase: row, InsurerName: c.InsurerName}
	if err := s.events.Record(ctx, "correspondence_case.updated", NewView(out)); err != nil {
		return Case{}, err
	}
	return out, nil
}

// normalForm makes stored (JSON-decoded) and patched form data comparable.
func normalForm(m map[string]any) map[string]any {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

// Delete removes a draft and records correspondence_case.deleted; a sent case is the record of
// a letter that went out (409 case_not_draft).
func (s *Service) Delete(ctx context.Context, c Case) error {
	if c.Status != correspondencecase.StatusDraft {
		return errs.Conflict(codeNotDraft, "correspondence case %s was sent and is kept", c.ID)
	}
	if err := tenancy.Client(ctx).CorrespondenceCase.DeleteOne(c.CorrespondenceCase).Exec(ctx); err != nil {
		return fmt.Errorf("delete correspondence case %s: %w", c.ID, err)
	}
	return s.events.Record(ctx, "correspondence_case.deleted", NewView(c))
}

// Send sends draft id from the mailbox in names: to in's recipientEmail, else the routed
// address (422 when there is neither), with up to five documents of the case's contact
// attached (422 naming each that is not one). The e-mail goes through the e-mail area (linked
// to the contact, on its timeline, in a thread of the mailbox, so the insurer's reply threads
// there; its errors pass through as they are: an unknown mailbox, a mailbox the caller may not
// use, ...). The case becomes sent, names the mailbox, e-mail and thread, and records
// correspondence_case.sent. Only a draft is sent (409 case_not_draft).
func (s *Service) Send(ctx context.Context, id uuid.UUID, in SendInput) (Case, error) {
	c, err := s.Lock(ctx, id)
	if err != nil {
		return Case{}, err
	}
	if c.Status != correspondencecase.StatusDraft {
		return Case{}, errs.Conflict(codeNotDraft, "correspondence case %s was sent already", c.ID)
	}
	recipient := c.RecipientEmail
	if r := trimmed(in.RecipientEmail); r != nil {
		recipient = *r
	}
	var v errs.Invalid
	v.Check("recipientEmail", recipient != "", "required",
		"the insurer has no correspondence address: give recipientEmail (or set it by PATCH)")
	if err := s.checkDocuments(ctx, &v, c.ContactID, in.documentIDs); err != nil {
		return Case{}, err
	}
	if err := v.Err(); err != nil {
		return Case{}, err
	}
	contact := c.ContactID
	mail, err := s.mail.Send(ctx, emails.Outgoing{MailboxID: in.mailboxID,
		To: []schematype.MailAddress{{Email: recipient, Name: c.InsurerName}}, Subject: c.Subject, Text: c.Body,
		DocumentIDs: in.documentIDs, ContactID: &contact, Free: true})
	if err != nil {
		return Case{}, err
	}
	sentAt := time.Now()
	if mail.SentAt != nil {
		sentAt = *mail.SentAt
	}
	row, err := tenancy.Client(ctx).CorrespondenceCase.UpdateOne(c.CorrespondenceCase).
		SetStatus(correspondencecase.StatusSent).SetRecipientEmail(recipient).SetMailboxID(in.mailboxID).
		SetEmailID(mail.ID).SetThreadID(mail.ThreadID).SetAttachmentDocumentIds(nonNil(in.documentIDs)).
		SetSentAt(sentAt).Save(ctx)
	if err != nil {
		return Case{}, fmt.Errorf("mark correspondence case %s sent: %w", c.ID, err)
	}
	out := Case{CorrespondenceCase: row, InsurerName: c.InsurerName}
	if err := s.events.Record(ctx, "correspondence_case.sent", NewView(out)); err != nil {
		return Case{}, err
	}
	return out, nil
}

// checkDocuments adds attachmentDocumentIds.<i> to v for each id that is not a document of the
// contact the caller sees (a document of one of its contracts belongs to the contact too).
func (s *Service) checkDocuments(ctx context.Context, v *errs.Invalid, contactID uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	docs, err := tenancy.Client(ctx).Document.Query().
		Where(document.IDIn(ids...), document.ContactID(contactID)).IDs(ctx)
	if err != nil {
		return fmt.Errorf("read attachment documents: %w", err)
	}
	for i, id := range ids {
		found := false
		for _, d := range docs {
			found = found || d == id
		}
		v.Check(fmt.Sprintf("attachmentDocumentIds.%d", i), found, "unknown_document",
			"is not a document of contact "+contactID.String())
	}
	return nil
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}
