package tenancy

import (
	"context"
	"database/sql"
	"fmt"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Statements run as prepared statements that pgx caches per connection, and after five runs
// PostgreSQL may keep a generic plan, one built without the parameters' values. For most
// statements that is what saves planning; for a few it is the wrong plan: "search_text LIKE
// $n" cannot use the pg_trgm index without a pattern to take trigrams from, so a generic plan
// walks or bitmaps every contact (q=berlin: 50 ms against 3.5 ms planned for the value).
// CustomPlans marks the statements that must be planned for their values: they go out as
// unnamed statements (pgx.QueryExecModeExec), which PostgreSQL plans at every execution. The
// mark is per statement: a setting such as plan_cache_mode would make every later statement of
// the transaction pay its planning too (the contacts list's phones: 0.5-0.8 ms a request).

type customPlanKey struct{}

// CustomPlans returns ctx whose ent statements are planned for their values (see above).
func CustomPlans(ctx context.Context) context.Context {
	return context.WithValue(ctx, customPlanKey{}, true)
}

// planArgs puts pgx's query mode in front of args when ctx asks for a custom plan; pgx takes it
// as an option, not a parameter (database/sql hands it through: stdlib accepts any value).
func planArgs(ctx context.Context, args any) any {
	if ctx.Value(customPlanKey{}) == nil {
		return args
	}
	a, _ := args.([]any)
	out := make([]any, 0, len(a)+1)
	out = append(out, pgx.QueryExecModeExec)
	for _, v := range a {
		// In this mode pgx encodes a parameter as text without knowing its type: a uuid list
		// has no text form for an unknown type, its strings have ("{…}" to the statement's
		// $n::uuid[]).
		if ids, ok := v.([]uuid.UUID); ok {
			strs := make([]string, len(ids))
			for i, id := range ids {
				strs[i] = id.String()
			}
			v = strs
		}
		out = append(out, v)
	}
	return out
}

// planTx honours CustomPlans for the ent queries of a transaction.
type planTx struct{ dialect.Tx }

func (t planTx) Query(ctx context.Context, q string, args, v any) error {
	return t.Tx.Query(ctx, q, planArgs(ctx, args), v)
}

// QueryContext passes through to the transaction (ent's sql/execquery feature needs it).
func (t planTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if a, ok := planArgs(ctx, args).([]any); ok {
		args = a
	}
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}).QueryContext(ctx, q, args...)
}

// ExecContext passes through to the transaction.
func (t planTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}).ExecContext(ctx, q, args...)
}

// WithoutJIT turns PostgreSQL's JIT compilation off for the rest of the request's transaction.
// A statement over a million rows behind the visibility policies is estimated far above
// jit_above_cost (the policies' subplans, per-row functions), and compiling it took 0.3-1.5 s
// of statements that run in tens of milliseconds without it (docs/benchmarks.md, e-mail and
// reports). For the reads that scan a large part of a company; transaction-local, so the
// pooled connection is back to the server's setting afterwards.
func WithoutJIT(ctx context.Context) error { return PlannerSetting(ctx, "jit", "off") }

// PlannerSetting sets a planner setting (jit, enable_nestloop, work_mem …) to value for the rest
// of the request's transaction only (set_config's is_local), so the pooled connection is back
// to the server's setting afterwards. For a statement whose plan the estimates get wrong; the
// caller says why next to its call.
func PlannerSetting(ctx context.Context, name, value string) error {
	if _, err := Client(ctx).ExecContext(ctx, `SELECT set_config($1, $2, true)`, name, value); err != nil {
		return fmt.Errorf("set %s = %s: %w", name, value, err)
	}
	return nil
}
