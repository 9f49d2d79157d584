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
	task            events.About
}

// NewCommentView is the TaskComment resource of c.
func NewCommentView(c *ent.TaskComment) CommentView {
	return CommentView{ID: c.ID, TaskID: c.TaskID, ParentCommentID: c.ParentID, AuthorID: c.AuthorID,
		Content: c.Content, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// EventAbout makes task events exactly as visible as the task (the rule of task_visibility):
// through the contact, else to the assignee and the creator.
func (v View) EventAbout() events.About {
	return events.AboutContactElseOwners(v.ContactID, v.AssigneeID, v.CreatorID)
}

// EventAbout: a comment is as visible as its task, so is its event (task is the task's About,
// set by AddComment). Without it the event reaches only credentials that see everything.
func (v CommentView) EventAbout() events.About {
	a := v.task
	a.UserScoped = true
	return a
}
