package tasks

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/linked"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/task"
	"github.com/brokerdesk/brokerdesk/ent/taskcomment"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs the task use cases for the company pinned in ctx, in the request's transaction.
type Service struct {
	events *events.Service
	now    func() time.Time
}

// NewService returns the service. now is the clock (time.Now outside tests).
func NewService(ev *events.Service, now func() time.Time) *Service {
	return &Service{events: ev, now: now}
}

// Get reads one task. A task of another company (or one the caller may not see) is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.Task, error) {
	t, err := tenancy.Client(ctx).Task.Get(ctx, id)
	return t, errs.FromEnt(err, "task %s", id)
}

// Lock reads one task and locks its row to the end of the transaction.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Task, error) {
	t, err := tenancy.Client(ctx).Task.Query().Where(task.ID(id)).ForUpdate().Only(ctx)
	return t, errs.FromEnt(err, "task %s", id)
}

// refResource is the resource name of tasks in the external_refs lookup table (ent/schema).
const refResource = "task"

// checkLinks answers 422 naming each of contactId, leadId and assigneeId that is not a record
// of the company (visible to the caller), then 409 external_reference_taken when another task
// carries one of the external references (extref.Free, as contacts and leads answer).
func checkLinks(ctx context.Context, in Input, self uuid.UUID) error {
	var v errs.Invalid
	err := linked.Check(ctx, &v, linked.Contact("contactId", parseID(in.ContactID)),
		linked.Lead("leadId", parseID(in.LeadID)), linked.User("assigneeId", parseID(in.AssigneeID)))
	if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	return extref.Free(ctx, refResource, in.ExternalReferences, self)
}

// apply writes the fields of in to m; a nil field is cleared or set to its default.
func apply(m *ent.TaskMutation, in Input) {
	m.SetTitle(strings.TrimSpace(*in.Title))
	m.SetDescription(ptr.Deref(in.Description))
	if id := parseID(in.ContactID); id != nil {
		m.SetContactID(*id)
	} else {
		m.ClearContactID()
	}
	if id := parseID(in.LeadID); id != nil {
		m.SetLeadID(*id)
	} else {
		m.ClearLeadID()
	}
	if id := parseID(in.AssigneeID); id != nil {
		m.SetAssigneeID(*id)
	} else {
		m.ClearAssigneeID()
	}
	if due := dueOf(in); due != nil {
		m.SetDueAt(*due)
	} else {
		m.ClearDueAt()
	}
	m.SetPriority(task.Priority(ptr.Or(in.Priority, "normal")))
	m.SetStatus(task.Status(ptr.Or(in.Status, "open")))
	if in.ExternalReferences != nil {
		m.SetExternalReferences(in.ExternalReferences)
	} else {
		m.ClearExternalReferences()
	}
}

// Create stores a task and records task.created (and task.completed when it is created done).
// The creator is the credential's user.
func (s *Service) Create(ctx context.Context, in Input) (*ent.Task, error) {
	if err := checkLinks(ctx, in, uuid.Nil); err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).Task.Create().SetNillableCreatorID(tenancy.ActingUser(ctx))
	apply(q.Mutation(), in)
	done := ptr.Or(in.Status, "open") == "done"
	if done {
		q.SetCompletedAt(s.now())
	}
	t, err := q.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create task: %w", err)
	}
	if err := s.events.Record(ctx, "task.created", NewView(t)); err != nil {
		return nil, err
	}
	if done {
		if err := s.events.Record(ctx, "task.completed", NewView(t)); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Update replaces the writable fields of t (locked by Lock) with in, the merged TaskInput of a
// PATCH, and records task.updated. Moving to done sets completedAt and records task.completed
// once; leaving done clears completedAt. A patch that changes nothing records nothing.
func (s *Service) Update(ctx context.Context, t *ent.Task, in Input) (*ent.Task, error) {
	if reflect.DeepEqual(normalized(inputOf(t)), normalized(in)) {
		return t, nil
	}
	if err := checkLinks(ctx, in, t.ID); err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).Task.UpdateOne(t)
	apply(q.Mutation(), in)
	wasDone, isDone := t.Status == task.StatusDone, ptr.Or(in.Status, "open") == "done"
	switch {
	case isDone && !wasDone:
		q.SetCompletedAt(s.now())
	case !isDone:
		q.ClearCompletedAt()
	}
	// Reassigning may hand the task to someone the caller does not see: the row was read through
	// the visibility layer above, so the write (and ent's re-read) may lift it.
	var out *ent.Task
	err := tenancy.HandOver(ctx, func() (err error) {
		out, err = q.Save(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update task %s: %w", t.ID, err)
	}
	if err := s.events.Record(ctx, "task.updated", NewView(out)); err != nil {
		return nil, err
	}
	if isDone && !wasDone {
		if err := s.events.Record(ctx, "task.completed", NewView(out)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// normalized makes two Inputs comparable: trimmed title, empty description as nil, times in
// UTC, defaults filled in.
func normalized(in Input) Input {
	title := strings.TrimSpace(ptr.Deref(in.Title))
	in.Title = &title
	if ptr.Deref(in.Description) == "" {
		in.Description = nil
	}
	if due := dueOf(in); due != nil {
		s := due.UTC().Format(time.RFC3339Nano)
		in.DueAt = &s
	}
	p, st := ptr.Or(in.Priority, "normal"), ptr.Or(in.Status, "open")
	in.Priority, in.Status = &p, &st
	if len(in.ExternalReferences) == 0 {
		in.ExternalReferences = nil
	}
	return in
}

// Delete removes t with its comments and records task.deleted.
func (s *Service) Delete(ctx context.Context, t *ent.Task) error {
	db := tenancy.Client(ctx)
	if _, err := db.TaskComment.Delete().Where(taskcomment.TaskID(t.ID)).Exec(ctx); err != nil {
		return fmt.Errorf("delete comments of task %s: %w", t.ID, err)
	}
	if err := db.Task.DeleteOne(t).Exec(ctx); err != nil {
		return fmt.Errorf("delete task %s: %w", t.ID, err)
	}
	return s.events.Record(ctx, "task.deleted", NewView(t))
}

// AddComment stores a comment on task id (which must be visible) and records
// task_comment.created. A parent comment must belong to the same task (422 otherwise).
func (s *Service) AddComment(ctx context.Context, taskID uuid.UUID, in CommentInput) (*ent.TaskComment, error) {
	t, err := s.Get(ctx, taskID)
	if err != nil {
		return nil, err
	}
	db := tenancy.Client(ctx)
	q := db.TaskComment.Create().SetTaskID(taskID).SetContent(*in.Content).SetNillableAuthorID(tenancy.ActingUser(ctx))
	if id := parseID(in.ParentCommentID); id != nil {
		ok, err := t.QueryComments().Where(taskcomment.ID(*id)).Exist(ctx)
		if err != nil {
			return nil, fmt.Errorf("check parent comment: %w", err)
		}
		if !ok {
			return nil, errs.InvalidField("parentCommentId", "unknown_comment", "is not a comment of this task")
		}
		q.SetParentID(*id)
	}
	c, err := q.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("add comment to task %s: %w", taskID, err)
	}
	v := NewCommentView(c)
	v.task = NewView(t).EventAbout()
	if err := s.events.Record(ctx, "task_comment.created", v); err != nil {
		return nil, err
	}
	return c, nil
}
