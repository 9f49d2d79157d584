package tasks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/task"
	"github.com/brokerdesk/brokerdesk/ent/taskcomment"
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

// parseListFilter reads the query of GET /tasks; every bad parameter is listed. binding names
// the list and its filters for the cursor.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, binding string) {
	f.UpdatedSince = timeQuery(c, v, "updatedSince")
	f.DueFrom = timeQuery(c, v, "dueFrom")
	f.DueTo = timeQuery(c, v, "dueTo")
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.AssigneeID = httpx.QueryUUID(c, v, "assigneeId")
	f.LeadID = httpx.QueryUUID(c, v, "leadId")
	f.Statuses = enumList(c, v, "status", schema.TaskStatuses)
	f.Priorities = enumList(c, v, "priority", schema.TaskPriorities)
	if f.DueFrom != nil && f.DueTo != nil {
		v.Check("dueTo", !f.DueTo.Before(*f.DueFrom), "invalid_range", "must not be before dueFrom")
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	id := func(u *uuid.UUID) string {
		if u == nil {
			return ""
		}
		return u.String()
	}
	binding = strings.Join([]string{"tasks", "updatedSince=" + ts(f.UpdatedSince), "dueFrom=" + ts(f.DueFrom),
		"dueTo=" + ts(f.DueTo), "contactId=" + id(f.ContactID), "assigneeId=" + id(f.AssigneeID),
		"leadId=" + id(f.LeadID), "status=" + strings.Join(f.Statuses, ","),
		"priority=" + strings.Join(f.Priorities, ",")}, "&")
	return f, binding
}

func timeQuery(c *fiber.Ctx, v *errs.Invalid, name string) *time.Time {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	t, ok := httpx.ParseTime(s)
	v.Check(name, ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
	if !ok {
		return nil
	}
	return &t
}

// enumList reads a comma-separated list of allowed values, sorted and without repeats.
func enumList(c *fiber.Ctx, v *errs.Invalid, name string, allowed []string) []string {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allowed, p) {
			v.Add(name, "invalid_enum", "comma-separated values of "+strings.Join(allowed, ", "))
			return nil
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dueKey is the sort expression of the list: due date, tasks without one last.
func dueKey(s *entsql.Selector) string {
	return "COALESCE(" + s.C(task.FieldDueAt) + ", 'infinity'::timestamptz)"
}

// sortKey is the cursor key of a task in the list: its due date ("infinity" without one) and id.
func sortKey(t *ent.Task) []string {
	due := "infinity"
	if t.DueAt != nil {
		due = t.DueAt.UTC().Format(time.RFC3339Nano)
	}
	return []string{due, t.ID.String()}
}

// List returns up to limit+1 tasks matching f ordered by due date (tasks without one last),
// then id, after the sort key after.
func (s *Service) List(ctx context.Context, f ListFilter, after []string, limit int) ([]*ent.Task, error) {
	q := tenancy.Client(ctx).Task.Query()
	if f.UpdatedSince != nil {
		q.Where(task.UpdatedAtGTE(*f.UpdatedSince))
	}
	if f.ContactID != nil {
		q.Where(task.ContactID(*f.ContactID))
	}
	if f.AssigneeID != nil {
		q.Where(task.AssigneeID(*f.AssigneeID))
	}
	if f.LeadID != nil {
		q.Where(task.LeadID(*f.LeadID))
	}
	if len(f.Statuses) > 0 {
		st := make([]task.Status, len(f.Statuses))
		for i, x := range f.Statuses {
			st[i] = task.Status(x)
		}
		q.Where(task.StatusIn(st...))
	}
	if len(f.Priorities) > 0 {
		pr := make([]task.Priority, len(f.Priorities))
		for i, x := range f.Priorities {
			pr[i] = task.Priority(x)
		}
		q.Where(task.PriorityIn(pr...))
	}
	if f.DueFrom != nil {
		q.Where(task.DueAtGTE(*f.DueFrom))
	}
	if f.DueTo != nil {
		q.Where(task.DueAtLTE(*f.DueTo))
	}
	if len(after) > 0 {
		if len(after) != 2 {
			return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
		}
		id, err := uuid.Parse(after[1])
		if err != nil {
			return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
		}
		due := after[0]
		if due != "infinity" {
			if _, err := time.Parse(time.RFC3339Nano, due); err != nil {
				return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
			}
		}
		q.Where(func(s *entsql.Selector) {
			s.Where(entsql.P(func(b *entsql.Builder) {
				b.WriteString("(" + dueKey(s) + ", " + s.C(task.FieldID) + ") > (")
				b.Arg(due)
				b.WriteString("::timestamptz, ")
				b.Arg(id)
				b.WriteString(")")
			}))
		})
	}
	rows, err := q.Order(func(s *entsql.Selector) {
		s.OrderExpr(entsql.Expr(dueKey(s)))
		s.OrderBy(s.C(task.FieldID))
	}).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return rows, nil
}

// Comments returns up to limit+1 comments of task id (which must be visible), oldest first.
func (s *Service) Comments(ctx context.Context, taskID uuid.UUID, after []string, limit int) ([]*ent.TaskComment, error) {
	if _, err := s.Get(ctx, taskID); err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).TaskComment.Query().Where(taskcomment.TaskID(taskID))
	keyset, err := httpx.AfterCreated(after)
	if err != nil {
		return nil, err
	}
	if keyset != nil {
		q.Where(keyset)
	}
	rows, err := q.Order(ent.Asc(taskcomment.FieldCreatedAt), ent.Asc(taskcomment.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list comments of task %s: %w", taskID, err)
	}
	return rows, nil
}
