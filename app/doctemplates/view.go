package doctemplates

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
)

// TemplateView is the DocumentTemplate resource: the spec's fields plus signatureRoles (whose
// signature fields the template places, in order) and the times. The body is not shown: a
// client picks a template and fills it, the operator writes it.
type TemplateView struct {
	ID                 uuid.UUID `json:"id"`
	Name               string    `json:"name"`
	Category           string    `json:"category"`
	Placeholders       []string  `json:"placeholders"`
	HasSignatureFields bool      `json:"hasSignatureFields"`
	SignatureRoles     []string  `json:"signatureRoles"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
}

// NewTemplateView is the DocumentTemplate resource of t. Placeholders and roles are read from
// the body as stored, so a row written before a change of the markup still answers right.
func NewTemplateView(t *ent.DocumentTemplate) TemplateView {
	names, roles := pdf.Placeholders(t.Body), pdf.SignatureRoles(t.Body)
	if names == nil {
		names = []string{}
	}
	if roles == nil {
		roles = []string{}
	}
	return TemplateView{ID: t.ID, Name: t.Name, Category: string(t.Category), Placeholders: names,
		HasSignatureFields: len(roles) > 0, SignatureRoles: roles, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// StandardDocumentView is the StandardDocument resource: the spec's fields plus the times.
type StandardDocumentView struct {
	ID                 uuid.UUID `json:"id"`
	Name               string    `json:"name"`
	Filename           string    `json:"filename"`
	SizeBytes          int64     `json:"sizeBytes"`
	HasSignatureFields bool      `json:"hasSignatureFields"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
}

// NewStandardDocumentView is the StandardDocument resource of d.
func NewStandardDocumentView(d *ent.StandardDocument) StandardDocumentView {
	return StandardDocumentView{ID: d.ID, Name: d.Name, Filename: d.Filename, SizeBytes: d.Size,
		HasSignatureFields: len(d.SignatureFields) > 0, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}
