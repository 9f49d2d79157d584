package correspondence

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Bounds (spec: "String bounds", "Correspondence attachments"; docs/decisions/email.md).
const (
	MaxSubject        = 500
	MaxRecipientEmail = 320
	MaxBody           = 50000 // as a note's content: a letter, not a document
	MaxContracts      = 50
	MaxAttachments    = 5
	// MaxFormText bounds a string form field without a maxLength of its own.
	MaxFormText = 2000
)

// CreateInput is the body of POST /correspondence-cases.
type CreateInput struct {
	ContactID       *string        `json:"contactId"`
	ContractIDs     []string       `json:"contractIds"`
	TransactionType *string        `json:"transactionType"`
	FormData        map[string]any `json:"formData"`

	contactID   uuid.UUID
	contractIDs []uuid.UUID
	typ         *Type
}

// Validate checks the shape: contactId a UUID, 1 to MaxContracts distinct contract ids, a
// transaction type of the catalog and form data that fits it. Whether the contact and
// contracts exist is the service's check.
func (in *CreateInput) Validate() error {
	var v errs.Invalid
	if in.ContactID == nil {
		v.Add("contactId", "required", "is required")
	} else if id, err := uuid.Parse(*in.ContactID); err != nil {
		v.Add("contactId", "invalid_uuid", "must be a UUID")
	} else {
		in.contactID = id
	}
	switch {
	case in.ContractIDs == nil:
		v.Add("contractIds", "required", "name at least one contract")
	case len(in.ContractIDs) == 0:
		v.Add("contractIds", "too_short", "name at least one contract")
	case len(in.ContractIDs) > MaxContracts:
		v.Add("contractIds", "too_long", fmt.Sprintf("at most %d contracts", MaxContracts))
	default:
		for i, s := range in.ContractIDs {
			field := fmt.Sprintf("contractIds.%d", i)
			id, err := uuid.Parse(s)
			switch {
			case err != nil:
				v.Add(field, "invalid_uuid", "must be a UUID")
			case slices.Contains(in.contractIDs, id):
				v.Add(field, "duplicate", "names a contract given before")
			default:
				in.contractIDs = append(in.contractIDs, id)
			}
		}
	}
	if in.TransactionType == nil {
		v.Add("transactionType", "required", "is required")
	} else if t, ok := lookup(*in.TransactionType); !ok {
		v.Add("transactionType", "unknown_transaction_type", "is not a key of GET /correspondence/transaction-types")
	} else {
		in.typ = t
		in.FormData = checkForm(&v, t, in.FormData)
	}
	return v.Err()
}

// checkForm checks form data against the type's fields and adds each problem to v as
// formData.<key>: unknown keys, missing required fields (absent, null or blank), values of the
// wrong type or beyond their bounds. It returns the data to store: given values only (null and
// blank mean not given), numbers as float64.
func checkForm(v *errs.Invalid, t *Type, data map[string]any) map[string]any {
	out := map[string]any{}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys) // one order for the errors whatever the map's
	for _, k := range keys {
		if _, ok := t.field(k); !ok {
			v.Add("formData."+k, "unknown_field", "is not a form field of "+t.Key)
		}
	}
	for _, f := range t.Fields {
		field := "formData." + f.Key
		val := data[f.Key]
		if n, ok := val.(json.Number); ok { // a merge patch keeps numbers as json.Number
			x, err := n.Float64()
			if err != nil {
				v.Add(field, "invalid_type", "must be a number")
				continue
			}
			val = x
		}
		if s, ok := val.(string); val == nil || ok && strings.TrimSpace(s) == "" {
			if f.Required {
				v.Add(field, "required", "is required for "+t.Key)
			}
			continue
		}
		if code, detail := checkValue(f, val); code != "" {
			v.Add(field, code, detail)
			continue
		}
		out[f.Key] = val
	}
	return out
}

// checkValue checks one given value of field f: the code and detail of what is wrong, or "".
func checkValue(f Field, val any) (code, detail string) {
	switch f.Type {
	case FieldBoolean:
		if _, ok := val.(bool); !ok {
			return "invalid_type", "must be a boolean"
		}
	case FieldNumber:
		x, ok := val.(float64)
		if !ok {
			return "invalid_type", "must be a number"
		}
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "invalid_type", "must be a finite number"
		}
	default:
		s, ok := val.(string)
		if !ok {
			return "invalid_type", "must be a string"
		}
		if strings.ContainsRune(s, 0) {
			return "invalid_character", "must not contain NUL characters"
		}
		max := maxLength(f)
		if utf8.RuneCountInString(s) > max {
			return "too_long", fmt.Sprintf("at most %d characters", max)
		}
		switch f.Type {
		case FieldDate:
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return "invalid_date", "must be a date (YYYY-MM-DD)"
			}
		case FieldIBAN:
			if !check.ValidIBAN(s) {
				return "invalid_iban", "is not a valid IBAN"
			}
		case FieldEmail:
			if !check.ValidEmail(s) {
				return "invalid_email", "must be an e-mail address"
			}
		}
		if len(f.Options) > 0 && !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
			vals := make([]string, len(f.Options))
			for i, o := range f.Options {
				vals[i] = o.Value
			}
			return "invalid_enum", "must be one of " + strings.Join(vals, ", ")
		}
	}
	return "", ""
}

// PatchInput is a PATCH of a case: which members the merge patch named, and their values.
// FormData is the stored form data with the patch's formData merged in (RFC 7396: null removes
// a key).
type PatchInput struct {
	Subject, Body, RecipientEmail, Status *string
	FormData                              map[string]any

	// named are the members the patch carries; editing ones are refused on a sent case.
	named []string
}

// patchMembers are the members a PATCH may carry, in the order errors name them.
var patchMembers = []string{"subject", "body", "recipientEmail", "formData", "status"}

// PatchStatuses are the statuses a PATCH may set: draft becomes sent only through /send.
var PatchStatuses = []string{"sent", "completed", "follow_up"}

// edits reports whether the patch changes the letter (anything but status).
func (p PatchInput) edits() bool {
	return slices.ContainsFunc(p.named, func(m string) bool { return m != "status" })
}

// SendInput is the body of POST /correspondence-cases/{caseId}/send.
type SendInput struct {
	MailboxID             *string  `json:"mailboxId"`
	RecipientEmail        *string  `json:"recipientEmail"`
	AttachmentDocumentIDs []string `json:"attachmentDocumentIds"`

	mailboxID   uuid.UUID
	documentIDs []uuid.UUID
}

// Validate checks the shape: a mailbox id, an e-mail address when a recipient is given, at
// most MaxAttachments distinct document ids.
func (in *SendInput) Validate() error {
	var v errs.Invalid
	if in.MailboxID == nil {
		v.Add("mailboxId", "required", "name the mailbox to send from (GET /mailboxes)")
	} else if id, err := uuid.Parse(*in.MailboxID); err != nil {
		v.Add("mailboxId", "invalid_uuid", "must be a UUID")
	} else {
		in.mailboxID = id
	}
	checkRecipient(&v, in.RecipientEmail)
	if len(in.AttachmentDocumentIDs) > MaxAttachments {
		v.Add("attachmentDocumentIds", "too_long", fmt.Sprintf("at most %d documents", MaxAttachments))
	} else {
		for i, s := range in.AttachmentDocumentIDs {
			field := fmt.Sprintf("attachmentDocumentIds.%d", i)
			id, err := uuid.Parse(s)
			switch {
			case err != nil:
				v.Add(field, "invalid_uuid", "must be a UUID")
			case slices.Contains(in.documentIDs, id):
				v.Add(field, "duplicate", "names a document given before")
			default:
				in.documentIDs = append(in.documentIDs, id)
			}
		}
	}
	return v.Err()
}

// checkRecipient adds recipientEmail when it is given and not one plain address of at most
// MaxRecipientEmail characters (which also keeps CR and LF out of the To header).
func checkRecipient(v *errs.Invalid, s *string) {
	if s == nil {
		return
	}
	check.Len(v, "recipientEmail", s, MaxRecipientEmail)
	v.Check("recipientEmail", check.ValidEmail(*s), "invalid_email", "must be an e-mail address")
}

// patchOf reads a merge patch of case c (decoded JSON, numbers as json.Number): 422 for an
// empty patch, an unknown or read-only member, a value of the wrong type or out of bounds, and
// form data that, merged into the stored one, does not fit the case's transaction type.
// Whether the case may still be edited is Update's question (409).
func patchOf(c *ent.CorrespondenceCase, patch map[string]any) (PatchInput, error) {
	var v errs.Invalid
	var p PatchInput
	if len(patch) == 0 {
		v.Add("subject", "empty_patch", "name at least one of "+strings.Join(patchMembers, ", "))
		return p, v.Err()
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(patchMembers, k) {
			v.Add(k, "unknown_field", "cannot be patched (patch "+strings.Join(patchMembers, ", ")+")")
		}
	}
	text := func(name string, nullable bool) *string {
		raw, ok := patch[name]
		if !ok {
			return nil
		}
		p.named = append(p.named, name)
		switch x := raw.(type) {
		case string:
			return &x
		case nil:
			if nullable {
				empty := ""
				return &empty
			}
			v.Add(name, "not_nullable", "must not be null")
		default:
			v.Add(name, "invalid_type", "must be a string")
		}
		return nil
	}
	p.Subject = text("subject", false)
	p.Body = text("body", false)
	p.RecipientEmail = text("recipientEmail", true) // null clears the routed address
	p.Status = text("status", false)
	check.Len(&v, "subject", p.Subject, MaxSubject)
	if p.Subject != nil {
		v.Check("subject", !strings.ContainsAny(*p.Subject, "\r\n"), "invalid_character", "must be one line")
		v.Check("subject", strings.TrimSpace(*p.Subject) != "", "required", "must not be empty")
	}
	check.Len(&v, "body", p.Body, MaxBody)
	if p.RecipientEmail != nil && *p.RecipientEmail != "" {
		checkRecipient(&v, p.RecipientEmail)
	}
	if p.Status != nil {
		v.Check("status", slices.Contains(PatchStatuses, *p.Status), "invalid_enum",
			"must be one of "+strings.Join(PatchStatuses, ", ")+" (a draft is sent by POST …/send)")
	}
	if raw, ok := patch["formData"]; ok {
		p.named = append(p.named, "formData")
		switch x := raw.(type) {
		case map[string]any, nil:
			t, known := lookup(c.TransactionType)
			if !known {
				return p, fmt.Errorf("case %s has transaction type %q, which the catalog lacks", c.ID, c.TransactionType)
			}
			merged, _ := jsondoc.Merge(clone(c.FormData), x).(map[string]any)
			if x == nil {
				merged = map[string]any{}
			}
			p.FormData = checkForm(&v, t, merged)
		default:
			v.Add("formData", "invalid_type", "must be an object")
		}
	}
	return p, v.Err()
}

// clone is a shallow copy of stored form data (Merge writes into its target).
func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// maxLength is the bound of a text field: its own, else the address bound for e-mail fields and
// MaxFormText for the others.
func maxLength(f Field) int {
	switch {
	case f.MaxLength > 0:
		return f.MaxLength
	case f.Type == FieldEmail:
		return MaxRecipientEmail
	}
	return MaxFormText
}
