package tasks

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of task fields (characters; docs/decisions/work.md "Tasks").
const (
	MaxTitle       = 500
	MaxDescription = 50000
	MaxComment     = 10000
)

// Input is TaskInput: the body of POST /tasks; PATCH merges its patch into the Input of the
// stored task. Ids and times are strings so that a malformed one is a 422 naming the field.
type Input struct {
	Title              *string                  `json:"title,omitempty"`
	Description        *string                  `json:"description,omitempty"`
	ContactID          *string                  `json:"contactId,omitempty"`
	LeadID             *string                  `json:"leadId,omitempty"`
	AssigneeID         *string                  `json:"assigneeId,omitempty"`
	DueAt              *string                  `json:"dueAt,omitempty"`
	Priority           *string                  `json:"priority,omitempty"`
	Status             *string                  `json:"status,omitempty"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences,omitempty"`
}

// Validate checks a TaskInput: every invalid field is listed.
func (in *Input) Validate() error {
	var v errs.Invalid
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		v.Add("title", "required", "must not be empty")
	}
	check.Len(&v, "title", in.Title, MaxTitle)
	check.Len(&v, "description", in.Description, MaxDescription)
	v.CheckUUID("contactId", in.ContactID)
	v.CheckUUID("leadId", in.LeadID)
	v.CheckUUID("assigneeId", in.AssigneeID)
	if in.DueAt != nil {
		_, ok := httpx.ParseTime(*in.DueAt)
		v.Check("dueAt", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
	}
	if in.Priority != nil {
		v.Check("priority", slices.Contains(schema.TaskPriorities, *in.Priority), "invalid_enum",
			"must be one of "+strings.Join(schema.TaskPriorities, ", "))
	}
	if in.Status != nil {
		v.Check("status", slices.Contains(schema.TaskStatuses, *in.Status), "invalid_enum",
			"must be one of "+strings.Join(schema.TaskStatuses, ", "))
	}
	extref.Check(&v, in.ExternalReferences)
	return v.Err()
}

func parseID(s *string) *uuid.UUID {
	if s == nil {
		return nil
	}
	id := uuid.MustParse(*s) // validated
	return &id
}

func dueOf(in Input) *time.Time {
	if in.DueAt == nil {
		return nil
	}
	t, _ := httpx.ParseTime(*in.DueAt) // validated
	return &t
}

// inputOf is the Input of a stored task: what a PATCH merges into.
func inputOf(t *ent.Task) Input {
	id := func(u *uuid.UUID) *string {
		if u == nil {
			return nil
		}
		return ptr.To(u.String())
	}
	in := Input{Title: ptr.To(t.Title), Description: ptr.To(t.Description), ContactID: id(t.ContactID), LeadID: id(t.LeadID),
		AssigneeID: id(t.AssigneeID), Priority: ptr.To(string(t.Priority)), Status: ptr.To(string(t.Status)),
		ExternalReferences: t.ExternalReferences}
	if t.DueAt != nil {
		in.DueAt = ptr.To(t.DueAt.UTC().Format(time.RFC3339Nano))
	}
	return in
}

// CommentInput is the body of POST /tasks/{taskId}/comments.
type CommentInput struct {
	Content         *string `json:"content"`
	ParentCommentID *string `json:"parentCommentId,omitempty"`
}

// Validate checks a comment: content 1 to MaxComment characters, parentCommentId a UUID.
func (in *CommentInput) Validate() error {
	var v errs.Invalid
	if in.Content == nil || strings.TrimSpace(*in.Content) == "" {
		v.Add("content", "required", "must not be empty")
	}
	check.Len(&v, "content", in.Content, MaxComment)
	v.CheckUUID("parentCommentId", in.ParentCommentID)
	return v.Err()
}
