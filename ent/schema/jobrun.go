package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// JobRun records when a cluster-wide background job last ran, so that of many replicas only
// one runs it per interval. It holds no company data; only SECURITY DEFINER maintenance
// functions (migrations/) touch it.
type JobRun struct{ ent.Schema }

// Fields of JobRun.
func (JobRun) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().MaxLen(100).Immutable(),
		field.Time("last_run_at").Default(time.Now),
	}
}
