package portfolio

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
)

// View is the PortfolioTransfer resource.
type View struct {
	ID          uuid.UUID        `json:"id"`
	Status      string           `json:"status"`
	Format      string           `json:"format"`
	Source      string           `json:"source"`
	OwnerID     *uuid.UUID       `json:"ownerId"`
	MappingID   *uuid.UUID       `json:"mappingId"`
	AutoCommit  bool             `json:"autoCommit"`
	WriteMode   string           `json:"writeMode"`
	Encoding    *string          `json:"encoding"`
	File        FileView         `json:"file"`
	Summary     map[string]any   `json:"summary"`
	Issues      []map[string]any `json:"issues"`
	Progress    Progress         `json:"progress"`
	Error       *string          `json:"error"`
	ValidatedAt *time.Time       `json:"validatedAt"`
	CommittedAt *time.Time       `json:"committedAt"`
	CreatedAt   time.Time        `json:"createdAt"`
	UpdatedAt   time.Time        `json:"updatedAt"`
}

// FileView describes the stored file.
type FileView struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// Progress is how far a commit has come: contracts of the file handled and what became of them.
type Progress struct {
	Total     int64 `json:"total"`
	Done      int64 `json:"done"`
	Created   int64 `json:"created"`
	Updated   int64 `json:"updated"`
	Unchanged int64 `json:"unchanged"`
	Skipped   int64 `json:"skipped"`
	Contacts  int64 `json:"contactsCreated"`
}

func progressOf(m map[string]int64) Progress {
	return Progress{Total: m["total"], Done: m["done"], Created: m["created"], Updated: m["updated"],
		Unchanged: m["unchanged"], Skipped: m["skipped"], Contacts: m["contactsCreated"]}
}

// NewView is the resource of t.
func NewView(t *ent.PortfolioTransfer) View {
	v := View{ID: t.ID, Status: string(t.Status), Format: string(t.Format), Source: t.Source, OwnerID: t.OwnerID,
		MappingID: t.MappingID, AutoCommit: t.AutoCommit, WriteMode: string(t.WriteMode),
		File:    FileView{Filename: t.Filename, Size: t.Size, SHA256: t.Sha256},
		Summary: t.Summary, Issues: t.Issues, ValidatedAt: t.ValidatedAt, CommittedAt: t.CommittedAt,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if t.Encoding != "" {
		e := t.Encoding
		v.Encoding = &e
	}
	if t.Error != "" {
		e := t.Error
		v.Error = &e
	}
	if v.Summary == nil {
		v.Summary = map[string]any{}
	}
	if v.Issues == nil {
		v.Issues = []map[string]any{}
	}
	v.Progress = progressOf(t.Progress)
	return v
}
