package emails

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of POST /emails (docs/decisions/email.md "Sending").
const (
	// MaxRecipients is the most addresses of each of to, cc and bcc.
	MaxRecipients = 50
	// MaxSubject is RFC 5322's line limit: a longer subject needs folding, which no sender
	// writes on purpose.
	MaxSubject = 998
	// MaxAttachments is how many documents one message may carry.
	MaxAttachments = 10
	// MaxAttachmentBytes is their total size: 25 MB, what the common providers accept.
	MaxAttachmentBytes = 25_000_000
	// maxAddressName bounds a display name.
	maxAddressName = 200
	// maxAddress is RFC 5321's limit of a forward path.
	maxAddress = 320
	// maxPlaceholders bounds the placeholders object (keys) and each value (characters).
	maxPlaceholders     = 100
	maxPlaceholderValue = 10_000
)

// AddressInput is one recipient of EmailSend.
type AddressInput struct {
	Email *string `json:"email"`
	Name  *string `json:"name,omitempty"`
}

// SendInput is EmailSend, the body of POST /emails. Ids are strings so that a malformed one is
// a 422 naming the field.
type SendInput struct {
	MailboxID             *string           `json:"mailboxId"`
	To                    []AddressInput    `json:"to"`
	Cc                    []AddressInput    `json:"cc,omitempty"`
	Bcc                   []AddressInput    `json:"bcc,omitempty"`
	Subject               *string           `json:"subject,omitempty"`
	Text                  *string           `json:"text,omitempty"`
	HTML                  *string           `json:"html,omitempty"`
	TemplateID            *string           `json:"templateId,omitempty"`
	Placeholders          map[string]string `json:"placeholders,omitempty"`
	ContactID             *string           `json:"contactId,omitempty"`
	LeadID                *string           `json:"leadId,omitempty"`
	ReplyToEmailID        *string           `json:"replyToEmailId,omitempty"`
	AttachmentDocumentIDs []string          `json:"attachmentDocumentIds,omitempty"`
	Marketing             *bool             `json:"marketing,omitempty"`
	Tracking              *bool             `json:"tracking,omitempty"`
}

// Validate checks the shape of EmailSend; every bad field is listed. What needs the database
// (mailbox, contact, lead, template, documents, the replied message, opt-outs) is checked by
// Send, in one 422 of its own.
func (in *SendInput) Validate() error {
	var v errs.Invalid
	v.Require("mailboxId", in.MailboxID != nil)
	v.CheckUUID("mailboxId", in.MailboxID)
	v.Check("to", len(in.To) > 0, "required", "at least one recipient")
	checkAddressInputs(&v, "to", in.To)
	checkAddressInputs(&v, "cc", in.Cc)
	checkAddressInputs(&v, "bcc", in.Bcc)
	if in.TemplateID == nil {
		v.Check("subject", in.Subject != nil && strings.TrimSpace(*in.Subject) != "", "required",
			"is required unless a templateId is given")
		v.Check("text", in.Text != nil && *in.Text != "" || in.HTML != nil && *in.HTML != "", "required",
			"give text or html (or a templateId)")
	}
	if in.Subject != nil {
		checkSubject(&v, "subject", *in.Subject)
	}
	check.Len(&v, "text", in.Text, 5_000_000)
	check.Len(&v, "html", in.HTML, 5_000_000)
	v.CheckUUID("templateId", in.TemplateID)
	v.CheckUUID("contactId", in.ContactID)
	v.CheckUUID("leadId", in.LeadID)
	v.CheckUUID("replyToEmailId", in.ReplyToEmailID)
	v.Check("attachmentDocumentIds", len(in.AttachmentDocumentIDs) <= MaxAttachments, "too_many",
		fmt.Sprintf("at most %d documents", MaxAttachments))
	for i, id := range in.AttachmentDocumentIDs {
		_, err := uuid.Parse(id)
		v.Check(fmt.Sprintf("attachmentDocumentIds.%d", i), err == nil, "invalid_uuid", "must be a UUID")
	}
	v.Check("placeholders", len(in.Placeholders) <= maxPlaceholders, "too_many",
		fmt.Sprintf("at most %d placeholders", maxPlaceholders))
	for k, val := range in.Placeholders {
		v.Check("placeholders."+k, validKey(k), "invalid_key",
			"a key is letters, digits, '_' and '.', starting with a letter (e.g. contact.firstName)")
		check.Len(&v, "placeholders."+k, &val, maxPlaceholderValue)
	}
	return v.Err()
}

// checkAddressInputs checks a recipient list of the body: its length, each address present,
// an e-mail address, without line breaks (header injection) in address or name.
func checkAddressInputs(v *errs.Invalid, field string, list []AddressInput) {
	v.Check(field, len(list) <= MaxRecipients, "too_many", fmt.Sprintf("at most %d recipients", MaxRecipients))
	for i, a := range list {
		f := fmt.Sprintf("%s.%d.", field, i)
		if a.Email == nil || strings.TrimSpace(*a.Email) == "" {
			v.Add(f+"email", "required", "is required")
		} else {
			checkAddress(v, f+"email", *a.Email)
		}
		if a.Name != nil {
			checkName(v, f+"name", *a.Name)
		}
	}
}

// checkAddresses is checkAddressInputs for an Outgoing of another area (a correspondence case,
// later funnels): the same checks under the same field names.
func checkAddresses(v *errs.Invalid, field string, list []schematype.MailAddress) {
	v.Check(field, len(list) <= MaxRecipients, "too_many", fmt.Sprintf("at most %d recipients", MaxRecipients))
	for i, a := range list {
		f := fmt.Sprintf("%s.%d.", field, i)
		if strings.TrimSpace(a.Email) == "" {
			v.Add(f+"email", "required", "is required")
		} else {
			checkAddress(v, f+"email", a.Email)
		}
		checkName(v, f+"name", a.Name)
	}
}

// hasLineBreak reports a CR, LF or NUL: written into a header it would end the field and start
// another (a Bcc smuggled in through a subject or a name).
func hasLineBreak(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

const injectionDetail = "must not contain line breaks or NUL characters (header injection)"

func checkAddress(v *errs.Invalid, field, s string) {
	switch {
	case hasLineBreak(s):
		v.Add(field, "header_injection", injectionDetail)
	case utf8.RuneCountInString(s) > maxAddress:
		v.Add(field, "too_long", fmt.Sprintf("at most %d characters", maxAddress))
	case !check.ValidEmail(s):
		v.Add(field, "invalid_email", "is not an e-mail address")
	}
}

func checkName(v *errs.Invalid, field, s string) {
	if hasLineBreak(s) {
		v.Add(field, "header_injection", injectionDetail)
		return
	}
	v.Check(field, utf8.RuneCountInString(s) <= maxAddressName, "too_long", fmt.Sprintf("at most %d characters", maxAddressName))
}

func checkSubject(v *errs.Invalid, field, s string) {
	if hasLineBreak(s) {
		v.Add(field, "header_injection", injectionDetail)
		return
	}
	v.Check(field, utf8.RuneCountInString(s) <= MaxSubject, "too_long", fmt.Sprintf("at most %d characters", MaxSubject))
}

// outgoing is the Outgoing of a checked body. marketing and tracking left out take their
// defaults in Send (the template's marketing flag; tracking as marketing).
func (in SendInput) outgoing() Outgoing {
	o := Outgoing{MailboxID: uuid.MustParse(*in.MailboxID), To: addressesOf(in.To), Cc: addressesOf(in.Cc),
		Bcc: addressesOf(in.Bcc), ContactID: idOf(in.ContactID), LeadID: idOf(in.LeadID),
		ReplyToEmailID: idOf(in.ReplyToEmailID), TemplateID: idOf(in.TemplateID), Placeholders: in.Placeholders,
		HTML: in.HTML, defaultMarketing: in.Marketing == nil, defaultTracking: in.Tracking == nil}
	if in.Subject != nil {
		o.Subject = *in.Subject
	}
	if in.Text != nil {
		o.Text = *in.Text
	}
	if in.Marketing != nil {
		o.Marketing = *in.Marketing
	}
	if in.Tracking != nil {
		o.Tracking = *in.Tracking
	}
	for _, id := range in.AttachmentDocumentIDs {
		o.DocumentIDs = append(o.DocumentIDs, uuid.MustParse(id))
	}
	return o
}

func addressesOf(list []AddressInput) []schematype.MailAddress {
	out := make([]schematype.MailAddress, 0, len(list))
	for _, a := range list {
		m := schematype.MailAddress{Email: strings.TrimSpace(*a.Email)}
		if a.Name != nil {
			m.Name = strings.TrimSpace(*a.Name)
		}
		out = append(out, m)
	}
	return out
}

func idOf(s *string) *uuid.UUID {
	if s == nil {
		return nil
	}
	id := uuid.MustParse(*s) // validated
	return &id
}
