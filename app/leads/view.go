// Package leads serves the lead board of the Public API v1: leads, stages, conversion into
// contacts and attachments. The intake (app/intake) creates and merges leads through it.
package leads

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// View is the Lead resource.
type View struct {
	ID                 uuid.UUID                `json:"id"`
	FirstName          string                   `json:"firstName"`
	LastName           string                   `json:"lastName"`
	Email              *string                  `json:"email"`
	Phone              *string                  `json:"phone"`
	Source             *string                  `json:"source"`
	Notes              string                   `json:"notes"`
	AdditionalFields   map[string]string        `json:"additionalFields"`
	MetaURL            *string                  `json:"metaUrl"`
	StageID            uuid.UUID                `json:"stageId"`
	OwnerID            *uuid.UUID               `json:"ownerId"`
	Converted          bool                     `json:"converted"`
	ConvertedAt        *time.Time               `json:"convertedAt"`
	ContactID          *uuid.UUID               `json:"contactId"`
	Test               bool                     `json:"test"`
	Submissions        int                      `json:"submissions"`
	Attachments        []AttachmentView         `json:"attachments"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	CreatedAt          time.Time                `json:"createdAt"`
	UpdatedAt          time.Time                `json:"updatedAt"`
}

// AttachmentView describes a file of a lead; its content is at
// /leads/{leadId}/attachments/{attachmentId}/content.
type AttachmentView struct {
	ID          uuid.UUID `json:"id"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
}

// EventAbout makes lead events exactly as visible as the lead (lead_visibility): by its owner
// alone. Not by the contact a conversion made (issue 20 item 3): that contact may be a
// colleague's, who does not see the lead.
func (v View) EventAbout() events.About {
	return events.About{OwnerID: v.OwnerID, UserScoped: true}
}

// NewView is the Lead resource of l with its attachments (content not loaded).
func NewView(l *ent.Lead, attachments []*ent.LeadAttachment) View {
	v := View{ID: l.ID, FirstName: l.FirstName, LastName: l.LastName, Email: l.Email, Phone: l.Phone,
		Notes: l.Notes, AdditionalFields: l.AdditionalFields, MetaURL: l.MetaURL, StageID: l.StageID,
		OwnerID: l.OwnerID, Converted: l.Converted, ConvertedAt: l.ConvertedAt, ContactID: l.ContactID,
		Test: l.Test, Submissions: l.Submissions, Attachments: []AttachmentView{},
		ExternalReferences: l.ExternalReferences, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
	if l.Source != nil {
		s := string(*l.Source)
		v.Source = &s
	}
	if v.AdditionalFields == nil {
		v.AdditionalFields = map[string]string{}
	}
	if v.ExternalReferences == nil {
		v.ExternalReferences = []schematype.ExternalRef{}
	}
	for _, a := range attachments {
		v.Attachments = append(v.Attachments, AttachmentView{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size})
	}
	return v
}
