package correspondence

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Case is a stored case as the service returns it, with the name of its insurer (the insurer
// catalog is platform data, read beside the case).
type Case struct {
	*ent.CorrespondenceCase
	InsurerName string
}

// View is the CorrespondenceCase resource.
type View struct {
	ID                    uuid.UUID      `json:"id"`
	ContactID             uuid.UUID      `json:"contactId"`
	InsurerID             uuid.UUID      `json:"insurerId"`
	InsurerName           string         `json:"insurerName"`
	ContractIDs           []uuid.UUID    `json:"contractIds"`
	TransactionType       string         `json:"transactionType"`
	Subject               string         `json:"subject"`
	Body                  string         `json:"body"`
	RecipientEmail        *string        `json:"recipientEmail"`
	FormData              map[string]any `json:"formData"`
	Status                string         `json:"status"`
	MailboxID             *uuid.UUID     `json:"mailboxId"`
	EmailID               *uuid.UUID     `json:"emailId"`
	ThreadID              *uuid.UUID     `json:"threadId"`
	AttachmentDocumentIDs []uuid.UUID    `json:"attachmentDocumentIds"`
	SentAt                *time.Time     `json:"sentAt"`
	CreatedAt             time.Time      `json:"createdAt"`
	UpdatedAt             time.Time      `json:"updatedAt"`
}

// NewView is the CorrespondenceCase resource of c.
func NewView(c Case) View {
	v := View{ID: c.ID, ContactID: c.ContactID, InsurerID: c.InsurerID, InsurerName: c.InsurerName,
		ContractIDs: c.ContractIds, TransactionType: c.TransactionType, Subject: c.Subject, Body: c.Body,
		FormData: c.FormData, Status: string(c.Status), MailboxID: c.MailboxID, EmailID: c.EmailID,
		ThreadID: c.ThreadID, AttachmentDocumentIDs: c.AttachmentDocumentIds, SentAt: c.SentAt,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.RecipientEmail != "" {
		s := c.RecipientEmail
		v.RecipientEmail = &s
	}
	if v.ContractIDs == nil {
		v.ContractIDs = []uuid.UUID{}
	}
	if v.AttachmentDocumentIDs == nil {
		v.AttachmentDocumentIDs = []uuid.UUID{}
	}
	if v.FormData == nil {
		v.FormData = map[string]any{}
	}
	return v
}

// EventAbout makes case events exactly as visible as the case: through its contact (whose
// owner at the time Record keeps, so a deleted case's event stays with it).
func (v View) EventAbout() events.About {
	id := v.ContactID
	return events.About{ContactID: &id, UserScoped: true}
}

// FieldView is a form field of the catalog.
type FieldView struct {
	Key       string       `json:"key"`
	Label     string       `json:"label"`
	Type      string       `json:"type"`
	Required  bool         `json:"required"`
	MaxLength *int         `json:"maxLength,omitempty"`
	Options   []OptionView `json:"options,omitempty"`
}

// OptionView is an allowed value of a string form field.
type OptionView struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// TypeView is a transaction type of the catalog.
type TypeView struct {
	Key                     string      `json:"key"`
	Label                   string      `json:"label"`
	Description             string      `json:"description"`
	FormFields              []FieldView `json:"formFields"`
	ApplicableContractTypes []string    `json:"applicableContractTypes"`
}

// NewTypeView is the catalog entry of t with its texts in lang ("de" or "en").
func NewTypeView(t *Type, lang string) TypeView {
	v := TypeView{Key: t.Key, Label: t.Label.in(lang), Description: t.Description.in(lang),
		FormFields: make([]FieldView, len(t.Fields)), ApplicableContractTypes: t.ContractTypes}
	for i, f := range t.Fields {
		fv := FieldView{Key: f.Key, Label: f.Label.in(lang), Type: f.Type, Required: f.Required}
		if f.Type == FieldString || f.Type == FieldEmail {
			n := maxLength(f)
			fv.MaxLength = &n
		}
		for _, o := range f.Options {
			fv.Options = append(fv.Options, OptionView{Value: o.Value, Label: o.Label.in(lang)})
		}
		v.FormFields[i] = fv
	}
	if v.ApplicableContractTypes == nil {
		v.ApplicableContractTypes = []string{}
	}
	return v
}
