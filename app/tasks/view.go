// Package tasks serves /tasks and their comments: the to-dos of a brokerage, about a contact
// or a lead, assigned to a user.
package tasks

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// View is the Task resource.
type View struct {
	ID                 uuid.UUID                `json:"id"`
	Title              string                   `json:"title"`
	Description        string                   `json:"description"`
	ContactID          *uuid.UUID               `json:"contactId"`
	LeadID             *uuid.UUID               `json:"leadId"`
	AssigneeID         *uuid.UUID               `json:"assigneeId"`
	CreatorID          *uuid.UUID               `json:"creatorId"`
	DueAt              *time.Time               `json:"dueAt"`
	Priority           string                   `json:"priority"`
	Status             string                   `json:"status"`
	CompletedAt        *time.Time               `json:"completedAt"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	CreatedAt          time.Time                `json:"createdAt"`
	UpdatedAt          time.Time                `json:"updatedAt"`
}

// NewView is the Task resource of t.
func NewView(t *ent.Task) View {
	v := View{ID: t.ID, Title: t.Title, Description: t.Description, ContactID: t.ContactID, LeadID: t.LeadID,
		AssigneeID: t.AssigneeID, CreatorID: t.CreatorID, DueAt: t.DueAt, Priority: string(t.Priority),
		Status: string(t.Status), CompletedAt: t.CompletedAt, ExternalReferences: t.ExternalReferences,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if v.ExternalReferences == nil {
		v.ExternalReferences = []schematype.ExternalRef{}
	}
	return v
}

// CommentView is the TaskComment resource.
type CommentView struct {
	ID              uuid.UUID  `json:"id"`
	TaskID          uuid.UUID  `json:"taskId"`
	ParentCommentID *uuid.UUID `json:"parentCommentId"`
	AuthorID        *uuid.UUID `json:"authorId"`
	Content         string     `json:"content"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
}

// NewCommentView is the TaskComment resource of c.
func NewCommentView(c *ent.TaskComment) CommentView {
	return CommentView{ID: c.ID, TaskID: c.TaskID, ParentCommentID: c.ParentID, AuthorID: c.AuthorID,
		Content: c.Content, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// EventAbout makes task events user-scoped: about the contact, else owned by the assignee (or
// the creator when there is none).
func (v View) EventAbout() events.About {
	owner := v.AssigneeID
	if owner == nil {
		owner = v.CreatorID
	}
	return events.About{ContactID: v.ContactID, OwnerID: owner, UserScoped: true}
}

// EventAbout: a comment's event is about its task, which the event does not carry; it is
// scoped to its author so that it reaches no one who sees only other people's rows.
func (v CommentView) EventAbout() events.About {
	return events.About{OwnerID: v.AuthorID, UserScoped: true}
}
