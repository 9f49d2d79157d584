package extractions

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// View is the ContractExtraction resource. Fields are present once the extraction completed.
type View struct {
	ID           uuid.UUID                   `json:"id"`
	Status       string                      `json:"status"`
	DocumentID   uuid.UUID                   `json:"documentId"`
	ContactID    uuid.UUID                   `json:"contactId"`
	ContractID   *uuid.UUID                  `json:"contractId"`
	ContractType *string                     `json:"contractType"`
	AutoApply    bool                        `json:"autoApply"`
	Method       *string                     `json:"method"`
	Pages        int                         `json:"pages"`
	Points       int64                       `json:"points"`
	Fields       []schematype.ExtractedField `json:"fields"`
	Error        *string                     `json:"error"`
	CreatedAt    time.Time                   `json:"createdAt"`
	UpdatedAt    time.Time                   `json:"updatedAt"`
	CompletedAt  *time.Time                  `json:"completedAt"`
	AppliedAt    *time.Time                  `json:"appliedAt"`
}

// NewView is the view of e.
func NewView(e *ent.ContractExtraction) View {
	v := View{ID: e.ID, Status: string(e.Status), DocumentID: e.DocumentID, ContactID: e.ContactID, ContractID: e.ContractID,
		ContractType: e.ContractType, AutoApply: e.AutoApply, Pages: e.Pages, Points: e.Points,
		Fields: []schematype.ExtractedField{}, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
		CompletedAt: e.CompletedAt, AppliedAt: e.AppliedAt}
	if e.Method != "" {
		v.Method = &e.Method
	}
	if e.Error != "" {
		v.Error = &e.Error
	}
	if e.Status == "completed" && e.Fields != nil {
		v.Fields = e.Fields
	}
	return v
}

func version(e *ent.ContractExtraction) int64 { return int64(e.Version) }
