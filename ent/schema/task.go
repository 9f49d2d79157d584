package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/ent/rule"
)

// TaskPriorities and TaskStatuses are the allowed values of a task's priority and status.
var (
	TaskPriorities = []string{"low", "normal", "high", "urgent"}
	TaskStatuses   = []string{"open", "in_progress", "done"}
)

// Task is a to-do of the brokerage, optionally about a contact or a lead and assigned to a
// user. contact_id, lead_id, assignee_id and creator_id are kept inside the company by
// composite foreign keys (migrations/), not ent edges.
type Task struct{ ent.Schema }

// Mixin of Task.
func (Task) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}, ExternalRefMixin{Resource: "task"}}
}

// Fields of Task.
func (Task) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").NotEmpty().MaxRuneLen(500),
		field.Text("description").Default(""),
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("lead_id", uuid.UUID{}).Optional().Nillable(),
		field.UUID("assignee_id", uuid.UUID{}).Optional().Nillable(),
		// creator_id is the user of the credential that created the task (none for company keys).
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Time("due_at").Optional().Nillable(),
		field.Enum("priority").Values(TaskPriorities...).Default("normal"),
		field.Enum("status").Values(TaskStatuses...).Default("open"),
		field.Time("completed_at").Optional().Nillable(),
	}
}

// Edges of Task: its comments (TaskComment.Edges), queried with QueryComments.
func (Task) Edges() []ent.Edge {
	return []ent.Edge{edge.To("comments", TaskComment.Type)}
}

// Policy of Task: a task about a contact is visible when the contact is; one without a
// contact to its assignee, its creator (and their delegates) and users who see everything.
func (Task) Policy() ent.Policy {
	r := rule.FilterVisibleContactElseOwners("contact_id", "assignee_id", "creator_id")
	return privacy.Policy{Query: privacy.QueryPolicy{r}, Mutation: privacy.MutationPolicy{r}}
}

// Indexes of Task. The list's order (due_at nulls last, id) is served by an expression index
// in migrations/.
func (Task) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "assignee_id"),
		index.Fields("company_id", "contact_id"),
		index.Fields("company_id", "lead_id"),
		index.Fields("company_id", "updated_at", "id"),
	}
}

// TaskComment is a comment on a task; parent_id threads replies (any depth, same task).
type TaskComment struct{ ent.Schema }

// Mixin of TaskComment.
func (TaskComment) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}}
}

// Fields of TaskComment.
func (TaskComment) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("task_id", uuid.UUID{}).Immutable(),
		field.UUID("parent_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("author_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.Text("content").NotEmpty(),
	}
}

// Edges of TaskComment: the task it is on. task_id's constraint is the hand-written
// tenant_task_comments_task ((company_id, task_id) -> tasks, migrations/): the edge adds no
// constraint of its own.
func (TaskComment) Edges() []ent.Edge {
	return []ent.Edge{edge.From("task", Task.Type).Ref("comments").Field("task_id").Unique().Required().Immutable()}
}

// Indexes of TaskComment.
func (TaskComment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "task_id", "created_at", "id")}
}
