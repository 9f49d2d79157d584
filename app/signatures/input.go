package signatures

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of SignatureRequestCreate (docs/decisions/signatures.md "The API").
const (
	MaxTitle     = 200
	MaxMessage   = 2000
	MaxDocuments = 10
	MaxSigners   = 10
	// MaxFields bounds explicit fields: ten signers with a few fields each on a long contract.
	MaxFields      = 100
	MaxSignerName  = 200
	MaxSignerEmail = 320
	// MaxTotalBytes and MaxTotalPages bound the merged PDF the signers see (the issue: a 50 MB
	// or 10,000-page document is refused with a clear error). 8 MiB: the sealed PDF (the
	// source, the signature images, the audit pages and the seal) is filed as a document, which
	// has at most documents.MaxSize (10 MB); a larger source could be signed but never completed.
	MaxTotalBytes = 8 << 20
	MaxTotalPages = 500
	// DefaultExpiry and MaxExpiry: how long the links work when the body says nothing, and at
	// most.
	DefaultExpiry = 14 * 24 * time.Hour
	MaxExpiry     = 90 * 24 * time.Hour
)

// CreateInput is the body of POST /signature-requests (SignatureRequestCreate).
type CreateInput struct {
	ContactID *string       `json:"contactId"`
	Title     *string       `json:"title"`
	Message   *string       `json:"message"`
	Documents []SourceInput `json:"documents"`
	Signers   []SignerInput `json:"signers"`
	Fields    []FieldInput  `json:"fields"`
	Provider  *string       `json:"provider"`
	MailboxID *string       `json:"mailboxId"`
	ExpiresAt *string       `json:"expiresAt"`

	contactID uuid.UUID
	mailboxID *uuid.UUID
	expiresAt *time.Time
	sources   []source
	signers   []signerIn
	fields    []schematype.SignatureField
}

// SourceInput is one document to sign: exactly one of documentId and standardDocumentId.
type SourceInput struct {
	DocumentID         *string `json:"documentId"`
	StandardDocumentID *string `json:"standardDocumentId"`
}

// SignerInput is one signer: role contact (name and e-mail from the contact), broker (a user
// of the company: userId, default the credential's user) or other (name and e-mail given).
type SignerInput struct {
	Role   *string `json:"role"`
	Name   *string `json:"name"`
	Email  *string `json:"email"`
	UserID *string `json:"userId"`
}

// FieldInput is an explicit signature field: signer (0-based index into signers), page
// (1-based, across the merged PDF), and a rectangle relative to the page (0–1, top left).
type FieldInput struct {
	Signer *int     `json:"signer"`
	Page   *int     `json:"page"`
	X      *float64 `json:"x"`
	Y      *float64 `json:"y"`
	Width  *float64 `json:"width"`
	Height *float64 `json:"height"`
}

// source is a checked SourceInput: one of the two ids.
type source struct {
	document, standard *uuid.UUID
}

// signerIn is a checked SignerInput; name and email are filled for role other only (the
// service reads them from the contact or user).
type signerIn struct {
	role        string
	name, email string
	userID      *uuid.UUID
}

// Validate checks the shape of the body; what the ids name is the service's check. Every bad
// field is listed in one 422.
func (in *CreateInput) Validate() error {
	var v errs.Invalid
	if in.ContactID == nil {
		v.Add("contactId", "required", "is required")
	} else if id, err := uuid.Parse(*in.ContactID); err != nil {
		v.Add("contactId", "invalid_uuid", "must be a UUID")
	} else {
		in.contactID = id
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		in.Title = &t
		v.Check("title", t != "", "blank", "must not be blank; leave it out for the first document's name")
		check.Len(&v, "title", in.Title, MaxTitle)
	}
	check.Len(&v, "message", in.Message, MaxMessage)
	if in.MailboxID != nil {
		if id, err := uuid.Parse(*in.MailboxID); err != nil {
			v.Add("mailboxId", "invalid_uuid", "must be a UUID")
		} else {
			in.mailboxID = &id
		}
	}
	if in.ExpiresAt != nil {
		if t, ok := httpx.ParseTime(*in.ExpiresAt); ok {
			in.expiresAt = &t
		} else {
			v.Add("expiresAt", "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
		}
	}
	in.validateDocuments(&v)
	in.validateSigners(&v)
	in.validateFields(&v)
	return v.Err()
}

func (in *CreateInput) validateDocuments(v *errs.Invalid) {
	switch {
	case in.Documents == nil:
		v.Add("documents", "required", "name at least one document")
		return
	case len(in.Documents) == 0:
		v.Add("documents", "too_short", "name at least one document")
		return
	case len(in.Documents) > MaxDocuments:
		v.Add("documents", "too_long", fmt.Sprintf("at most %d documents", MaxDocuments))
		return
	}
	for i, d := range in.Documents {
		field := fmt.Sprintf("documents.%d", i)
		if (d.DocumentID == nil) == (d.StandardDocumentID == nil) {
			v.Add(field, "one_of", "give exactly one of documentId and standardDocumentId")
			continue
		}
		var s source
		if d.DocumentID != nil {
			id, err := uuid.Parse(*d.DocumentID)
			v.Check(field+".documentId", err == nil, "invalid_uuid", "must be a UUID")
			s.document = &id
		} else {
			id, err := uuid.Parse(*d.StandardDocumentID)
			v.Check(field+".standardDocumentId", err == nil, "invalid_uuid", "must be a UUID")
			s.standard = &id
		}
		in.sources = append(in.sources, s)
	}
}

func (in *CreateInput) validateSigners(v *errs.Invalid) {
	if in.Signers == nil {
		// The usual request: the contact signs what the broker sends.
		in.signers = []signerIn{{role: "contact"}}
		return
	}
	switch {
	case len(in.Signers) == 0:
		v.Add("signers", "too_short", "name at least one signer, or leave signers out for the contact")
		return
	case len(in.Signers) > MaxSigners:
		v.Add("signers", "too_long", fmt.Sprintf("at most %d signers", MaxSigners))
		return
	}
	contacts := 0
	for i, s := range in.Signers {
		field := fmt.Sprintf("signers.%d", i)
		var out signerIn
		role := "contact"
		if s.Role != nil {
			role = *s.Role
		}
		out.role = role
		// Who a contact or broker signer is comes from their record: a name or address given
		// beside it would be a second truth the audit page could not tell apart.
		notGiven := func(name string, p *string, why string) {
			v.Check(field+"."+name, p == nil, "not_allowed", why)
		}
		switch role {
		case "contact":
			contacts++
			v.Check(field+".role", contacts == 1, "duplicate", "the contact signs once")
			notGiven("name", s.Name, "a contact signer's name is the contact's")
			notGiven("email", s.Email, "a contact signer's e-mail is the contact's")
			notGiven("userId", s.UserID, "only a broker signer names a user")
		case "broker":
			notGiven("name", s.Name, "a broker signer's name is the user's")
			notGiven("email", s.Email, "a broker signer's e-mail is the user's")
			if s.UserID != nil {
				if id, err := uuid.Parse(*s.UserID); err != nil {
					v.Add(field+".userId", "invalid_uuid", "must be a UUID")
				} else {
					out.userID = &id
				}
			}
		case "other":
			notGiven("userId", s.UserID, "only a broker signer names a user")
			if s.Name == nil || strings.TrimSpace(*s.Name) == "" {
				v.Add(field+".name", "required", "is required for a signer of role other")
			} else {
				out.name = strings.TrimSpace(*s.Name)
				check.Len(v, field+".name", &out.name, MaxSignerName)
			}
			if s.Email == nil || strings.TrimSpace(*s.Email) == "" {
				v.Add(field+".email", "required", "is required for a signer of role other")
			} else {
				out.email = strings.TrimSpace(*s.Email)
				v.Check(field+".email", len(out.email) <= MaxSignerEmail && check.ValidEmail(out.email), "invalid_email",
					"must be an e-mail address")
			}
		default:
			v.Add(field+".role", "invalid_enum", "must be one of contact, broker, other")
		}
		in.signers = append(in.signers, out)
	}
}

// epsilon absorbs the rounding of decimal coordinates (0.7 + 0.3 is not exactly 1 in binary).
const epsilon = 1e-9

func (in *CreateInput) validateFields(v *errs.Invalid) {
	if in.Fields == nil {
		return
	}
	if len(in.Fields) > MaxFields {
		v.Add("fields", "too_long", fmt.Sprintf("at most %d fields", MaxFields))
		return
	}
	// An explicit empty list means no field at all: every signer signs on the audit page only.
	in.fields = []schematype.SignatureField{}
	for i, f := range in.Fields {
		field := fmt.Sprintf("fields.%d", i)
		ok := true
		req := func(name string, given bool) {
			if !given {
				v.Add(field+"."+name, "required", "is required")
				ok = false
			}
		}
		req("signer", f.Signer != nil)
		req("page", f.Page != nil)
		req("x", f.X != nil)
		req("y", f.Y != nil)
		req("width", f.Width != nil)
		req("height", f.Height != nil)
		if !ok {
			continue
		}
		if *f.Signer < 0 || *f.Signer >= max(len(in.signers), 1) {
			v.Add(field+".signer", "out_of_range", fmt.Sprintf("must be the index of a signer (0 to %d)", max(len(in.signers), 1)-1))
			ok = false
		}
		if *f.Page < 1 {
			// The upper bound is the merged PDF's page count: the service checks it.
			v.Add(field+".page", "out_of_range", "must be 1 or more")
			ok = false
		}
		unit := func(name string, x float64, positive bool) {
			bad := math.IsNaN(x) || x < 0 || x > 1 || positive && x == 0
			if bad {
				v.Add(field+"."+name, "out_of_range", "must be between 0 and 1 (relative to the page)")
				ok = false
			}
		}
		unit("x", *f.X, false)
		unit("y", *f.Y, false)
		unit("width", *f.Width, true)
		unit("height", *f.Height, true)
		if !ok {
			continue
		}
		if *f.X+*f.Width > 1+epsilon {
			v.Add(field+".width", "out_of_range", "x + width must be at most 1: the field must lie on the page")
			continue
		}
		if *f.Y+*f.Height > 1+epsilon {
			v.Add(field+".height", "out_of_range", "y + height must be at most 1: the field must lie on the page")
			continue
		}
		in.fields = append(in.fields, schematype.SignatureField{Signer: *f.Signer, Page: *f.Page,
			X: *f.X, Y: *f.Y, Width: *f.Width, Height: *f.Height})
	}
}
