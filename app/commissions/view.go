package commissions

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// StatementView is the CommissionStatement resource.
type StatementView struct {
	ID           uuid.UUID                    `json:"id"`
	Format       string                       `json:"format"`
	Status       string                       `json:"status"`
	ImportStatus string                       `json:"importStatus"`
	InsurerID    *uuid.UUID                   `json:"insurerId"`
	File         FileView                     `json:"file"`
	Mapping      map[string]string            `json:"mapping"`
	PeriodFrom   *string                      `json:"periodFrom"`
	PeriodTo     *string                      `json:"periodTo"`
	Note         *string                      `json:"note"`
	EntryCount   int                          `json:"entryCount"`
	MatchedCount int                          `json:"matchedCount"`
	Total        *schematype.Money            `json:"total"`
	Issues       []schematype.CommissionIssue `json:"issues"`
	Error        *string                      `json:"error"`
	CreatorID    *uuid.UUID                   `json:"creatorId"`
	ProcessedAt  *time.Time                   `json:"processedAt"`
	CreatedAt    time.Time                    `json:"createdAt"`
	UpdatedAt    time.Time                    `json:"updatedAt"`
}

// FileView describes the stored file of a statement.
type FileView struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

func date(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format(time.DateOnly)
	return &s
}

// NewStatementView is the resource of s.
func NewStatementView(s *ent.CommissionStatement) StatementView {
	v := StatementView{ID: s.ID, Format: string(s.Format), Status: string(s.Status), ImportStatus: string(s.ImportStatus),
		InsurerID: s.InsurerID, File: FileView{Filename: s.Filename, Size: s.Size, SHA256: s.Sha256},
		Mapping: s.Mapping, PeriodFrom: date(s.PeriodFrom), PeriodTo: date(s.PeriodTo), Note: s.Note,
		EntryCount: s.EntryCount, MatchedCount: s.MatchedCount, Total: s.Total, Issues: s.Issues,
		CreatorID: s.CreatorID, ProcessedAt: s.ProcessedAt, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if len(v.Mapping) == 0 {
		v.Mapping = nil
	}
	if v.Issues == nil {
		v.Issues = []schematype.CommissionIssue{}
	}
	if s.Error != "" {
		e := s.Error
		v.Error = &e
	}
	return v
}

// EntryView is the CommissionEntry resource.
type EntryView struct {
	ID           uuid.UUID        `json:"id"`
	StatementID  uuid.UUID        `json:"statementId"`
	InsurerID    *uuid.UUID       `json:"insurerId"`
	ContractID   *uuid.UUID       `json:"contractId"`
	ContactID    *uuid.UUID       `json:"contactId"`
	PolicyNumber string           `json:"policyNumber"`
	Type         string           `json:"type"`
	Code         string           `json:"code"`
	Amount       schematype.Money `json:"amount"`
	BookedOn     string           `json:"bookedOn"`
	Description  string           `json:"description"`
	Note         *string          `json:"note"`
	MatchedBy    *string          `json:"matchedBy"`
	Line         int              `json:"line"`
	CreatedAt    time.Time        `json:"createdAt"`
	UpdatedAt    time.Time        `json:"updatedAt"`
}

// NewEntryView is the resource of e.
func NewEntryView(e *ent.CommissionEntry) EntryView {
	v := EntryView{ID: e.ID, StatementID: e.StatementID, InsurerID: e.InsurerID, ContractID: e.ContractID,
		ContactID: e.ContactID, PolicyNumber: e.PolicyNumber, Type: string(e.Type), Code: e.Code, Amount: e.Amount,
		BookedOn: e.BookedOn.Format(time.DateOnly), Description: e.Description, Note: e.Note, Line: e.Line,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if e.MatchedBy != nil {
		m := string(*e.MatchedBy)
		v.MatchedBy = &m
	}
	return v
}

// EventAbout makes commission_entry.updated as visible as the entry itself: a matched entry's
// event to who sees its contact, an unmatched one's to every commissions reader (the entry's
// own rule, migrations/…_commissions_tenancy.sql).
func (v EntryView) EventAbout() events.About {
	if v.ContactID == nil {
		return events.About{}
	}
	return events.About{ContactID: v.ContactID, UserScoped: true}
}
