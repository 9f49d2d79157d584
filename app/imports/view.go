package imports

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
)

// View is the ImportJob resource.
type View struct {
	ID               uuid.UUID         `json:"id"`
	Status           string            `json:"status"`
	Format           string            `json:"format"`
	ContactType      string            `json:"contactType"`
	File             FileView          `json:"file"`
	Encoding         *string           `json:"encoding"`
	Delimiter        *string           `json:"delimiter"`
	Headers          []string          `json:"headers"`
	Mapping          map[string]string `json:"mapping"`
	SuggestedMapping map[string]string `json:"suggestedMapping"`
	Tags             []string          `json:"tags"`
	OwnerID          *uuid.UUID        `json:"ownerId"`
	CreatorID        *uuid.UUID        `json:"creatorId"`
	Duplicates       *string           `json:"duplicates"`
	RowCount         int               `json:"rowCount"`
	RowCounts        map[string]int    `json:"rowCounts"`
	OutcomeCounts    map[string]int    `json:"outcomeCounts"`
	Committed        int               `json:"committed"`
	Error            *string           `json:"error"`
	AnalyzedAt       *time.Time        `json:"analyzedAt"`
	CommittedAt      *time.Time        `json:"committedAt"`
	CompletedAt      *time.Time        `json:"completedAt"`
	CreatedAt        time.Time         `json:"createdAt"`
	UpdatedAt        time.Time         `json:"updatedAt"`
}

// FileView describes the stored file of an import.
type FileView struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// Keys of ContactImport.counts: the analysis's counts and the commit's, apart because both
// have a "duplicate".
const (
	analysisKey = "analysis."
	outcomeKey  = "outcome."
)

// NewView is the resource of im. Mapping is the one the analysis and the commit use: the
// given one, else the suggested one.
func NewView(im *ent.ContactImport) View {
	v := View{ID: im.ID, Status: string(im.Status), Format: string(im.Format), ContactType: string(im.ContactType),
		File: FileView{Filename: im.Filename, Size: im.Size, SHA256: im.Sha256}, Headers: im.Headers,
		Mapping: effectiveMapping(im), SuggestedMapping: im.SuggestedMapping, Tags: im.Tags, OwnerID: im.OwnerID,
		CreatorID: im.CreatorID, RowCount: im.RowCount, Committed: im.Committed, AnalyzedAt: im.AnalyzedAt,
		CommittedAt: im.CommittedAt, CompletedAt: im.CompletedAt, CreatedAt: im.CreatedAt, UpdatedAt: im.UpdatedAt,
		RowCounts: map[string]int{}, OutcomeCounts: map[string]int{}}
	for _, a := range schema.ImportAnalyses {
		v.RowCounts[a] = im.Counts[analysisKey+a]
	}
	for _, o := range schema.ImportOutcomes {
		v.OutcomeCounts[o] = im.Counts[outcomeKey+o]
	}
	if im.Encoding != "" {
		v.Encoding = &im.Encoding
	}
	if im.Delimiter != "" {
		v.Delimiter = &im.Delimiter
	}
	if im.Duplicates != nil {
		d := string(*im.Duplicates)
		v.Duplicates = &d
	}
	if im.Error != "" {
		e := im.Error
		v.Error = &e
	}
	if v.Headers == nil {
		v.Headers = []string{}
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if v.SuggestedMapping == nil {
		v.SuggestedMapping = map[string]string{}
	}
	if v.Mapping == nil {
		v.Mapping = map[string]string{}
	}
	return v
}

// effectiveMapping is the mapping rows are read with: the given one, else the suggestion.
func effectiveMapping(im *ent.ContactImport) map[string]string {
	if im.Mapping != nil {
		return im.Mapping
	}
	return im.SuggestedMapping
}

// RowView is an ImportRow: the spec's row, outcome, contactId and errors, and what the
// analysis found (analysis, duplicateRow). The cells are not shown: they may hold sensitive
// values (IBAN) the imports scope does not cover; the file is the caller's own.
type RowView struct {
	Row          int        `json:"row"`
	Analysis     string     `json:"analysis"`
	Outcome      *string    `json:"outcome"`
	ContactID    *uuid.UUID `json:"contactId"`
	DuplicateRow *int       `json:"duplicateRow"`
	Errors       []string   `json:"errors"`
}

// NewRowView is the resource of r.
func NewRowView(r *ent.ContactImportRow) RowView {
	v := RowView{Row: r.Row, Analysis: string(r.Analysis), ContactID: r.ContactID, DuplicateRow: r.DuplicateRow, Errors: r.Errors}
	if r.Outcome != nil {
		o := string(*r.Outcome)
		v.Outcome = &o
	}
	if v.Errors == nil {
		v.Errors = []string{}
	}
	return v
}

func nonEmpty(s, otherwise string) string {
	if strings.TrimSpace(s) == "" {
		return otherwise
	}
	return s
}
