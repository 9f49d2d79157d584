package tasks

import (
	"context"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/task"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /tasks. Nil or empty fields do not filter.
type ListFilter struct {
	UpdatedSince *time.Time
	ContactID    *uuid.UUID
	AssigneeID   *uuid.UUID
	LeadID       *uuid.UUID
	Statuses     []string
	Priorities   []string
	DueFrom      *time.Time
	DueTo        *time.Time
}

// byDue orders GET /tasks: due date, tasks without one last, then id.
var byDue = paging.Keyset[*ent.Task]{
	Expr: func(s *entsql.Selector) string {
		return "COALESCE(" + s.C(task.FieldDueAt) + ", 'infinity'::timestamptz)"
	},
	Kind:   paging.Time,
	NullAs: "infinity",
	Value:  func(t *ent.Task) (any, uuid.UUID) { return t.DueAt, t.ID },
}

// List returns a page of the tasks matching f ordered by due date (tasks without one last),
// then id.
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]*ent.Task, error) {
	k, err := byDue.Apply(page)
	if err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).Task.Query()
	q.Where(paging.If(f.UpdatedSince, task.UpdatedAtGTE)...)
	q.Where(paging.If(f.ContactID, task.ContactID)...)
	q.Where(paging.If(f.AssigneeID, task.AssigneeID)...)
	q.Where(paging.If(f.LeadID, task.LeadID)...)
	q.Where(paging.In(f.Statuses, task.StatusIn)...)
	q.Where(paging.In(f.Priorities, task.PriorityIn)...)
	q.Where(paging.If(f.DueFrom, task.DueAtGTE)...)
	q.Where(paging.If(f.DueTo, task.DueAtLTE)...)
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return rows, nil
}

// CommentFilter names the task of GET /tasks/{taskId}/comments.
type CommentFilter struct{ TaskID uuid.UUID }

// commentsOldestFirst orders a task's comments.
var commentsOldestFirst = paging.ByCreated(func(c *ent.TaskComment) (time.Time, uuid.UUID) { return c.CreatedAt, c.ID })

// Comments returns a page of the comments of a task (which must be visible), oldest first.
func (s *Service) Comments(ctx context.Context, f CommentFilter, page paging.Page) ([]*ent.TaskComment, error) {
	t, err := s.Get(ctx, f.TaskID)
	if err != nil {
		return nil, err
	}
	k, err := commentsOldestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	rows, err := t.QueryComments().Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list comments of task %s: %w", t.ID, err)
	}
	return rows, nil
}
