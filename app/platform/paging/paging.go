// Package paging is the HTTP-free half of the one list pipeline: the page a service is asked
// for and the keyset that orders a list and continues it past a cursor. app/platform/httpx parses the
// page from the request (limit, sealed cursor bound to the list and its filters) and writes the
// answer; a service only declares its order and calls Apply. No service decodes a cursor itself.
package paging

import (
	"fmt"
	"strconv"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// Page is one page a list service is asked for: up to Limit rows after the row whose sort key
// After is (empty on the first page). httpx.Pager fills it from limit and cursor.
type Page struct {
	Limit int
	After []string
}

// First is the first page of Limit rows: for callers outside a request (jobs, exports).
func First(limit int) Page { return Page{Limit: limit} }

// Kind is how a sort value travels in a cursor key.
type Kind int

const (
	// Text sort values travel as they are.
	Text Kind = iota
	// Time sort values travel as RFC 3339 UTC timestamps with nanoseconds.
	Time
	// Int sort values (int64, e.g. the events' commit sequence) travel in decimal.
	Int
)

// Keyset orders a list of rows R by one sort value and then id, ascending or descending, and
// continues past a cursor key with a row-value comparison, (value, id) > ($1, $2), which an
// index on (company_id, value, id) serves: never OFFSET.
type Keyset[R any] struct {
	// Column is the sort column. Expr replaces it for a computed sort key: SQL over the
	// selector's columns, e.g. COALESCE(due_at, 'infinity'::timestamptz).
	Column string
	Expr   func(*entsql.Selector) string
	Kind   Kind
	Desc   bool
	// NullAs is the cursor text of a nil sort value (Value returned a nil *time.Time): the
	// value Expr gives NULL, e.g. "infinity". Empty: sort values are never nil.
	NullAs string
	// Value gives a row's sort value (time.Time, *time.Time, string, *string, int64 or *int64)
	// and its id.
	Value func(R) (any, uuid.UUID)
}

// Query is what Apply gives a service for its ent query: Where continues past the cursor (a
// no-op on the first page), Order sorts by the key, Limit is one more than the page, so the
// pipeline sees whether another page follows.
//
//	k, err := byDue.Apply(page)
//	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
type Query struct {
	Where func(*entsql.Selector)
	Order func(*entsql.Selector)
	Limit int
}

// Apply decodes the page's cursor key for this order: a key of another shape is 422
// invalid_cursor (the cursor's seal and binding were checked already; this catches a list
// whose order changed between releases).
func (k Keyset[R]) Apply(p Page) (Query, error) {
	q := Query{Where: func(*entsql.Selector) {}, Order: k.order, Limit: p.Limit + 1}
	if len(p.After) == 0 {
		return q, nil
	}
	bad := errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
	if len(p.After) != 2 {
		return q, bad
	}
	id, err := uuid.Parse(p.After[1])
	if err != nil {
		return q, bad
	}
	var v any = p.After[0]
	null := k.NullAs != "" && p.After[0] == k.NullAs
	switch {
	case k.Kind == Time && !null:
		t, err := time.Parse(time.RFC3339Nano, p.After[0])
		if err != nil {
			return q, bad
		}
		v = t
	case k.Kind == Int && !null:
		n, err := strconv.ParseInt(p.After[0], 10, 64)
		if err != nil {
			return q, bad
		}
		v = n
	}
	cmp := entsql.CompositeGT
	if k.Desc {
		cmp = entsql.CompositeLT
	}
	if k.Expr == nil {
		q.Where = func(s *entsql.Selector) { s.Where(cmp([]string{s.C(k.Column), s.C("id")}, v, id)) }
		return q, nil
	}
	op, cast := ">", ""
	if k.Desc {
		op = "<"
	}
	if k.Kind == Time {
		cast = "::timestamptz" // the key may be NullAs text ("infinity"), so it travels as text
		v = p.After[0]
	}
	q.Where = func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString("(" + k.Expr(s) + ", " + s.C("id") + ") " + op + " (")
			b.Arg(v)
			b.WriteString(cast + ", ")
			b.Arg(id)
			b.WriteString(")")
		}))
	}
	return q, nil
}

func (k Keyset[R]) order(s *entsql.Selector) {
	dir := entsql.Asc
	if k.Desc {
		dir = entsql.Desc
	}
	if k.Expr != nil {
		expr := k.Expr(s)
		if k.Desc {
			expr += " DESC"
		}
		s.OrderExpr(entsql.Expr(expr))
	} else {
		s.OrderBy(dir(s.C(k.Column)))
	}
	s.OrderBy(dir(s.C("id")))
}

// Rows is a list service's page: fetch runs the list's ent query with the page's Query (its
// filters, then q.Where, q.Order, q.Limit); a failure is wrapped as "list <what>".
//
//	return byDue.Rows(page, "tasks", func(k paging.Query) ([]*ent.Task, error) {
//		return tenancy.Client(ctx).Task.Query().Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
//	})
func (k Keyset[R]) Rows(p Page, what string, fetch func(Query) ([]R, error)) ([]R, error) {
	q, err := k.Apply(p)
	if err != nil {
		return nil, err
	}
	rows, err := fetch(q)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return rows, nil
}

// Key is the cursor key of row r: its sort value as Kind says, then its id.
func (k Keyset[R]) Key(r R) []string {
	v, id := k.Value(r)
	switch x := v.(type) {
	case time.Time:
		return []string{TimeKey(x), id.String()}
	case *time.Time:
		if x == nil {
			return []string{k.NullAs, id.String()}
		}
		return []string{TimeKey(*x), id.String()}
	case string:
		return []string{x, id.String()}
	case *string:
		if x == nil {
			return []string{k.NullAs, id.String()}
		}
		return []string{*x, id.String()}
	case int64:
		return []string{strconv.FormatInt(x, 10), id.String()}
	case *int64:
		if x == nil {
			return []string{k.NullAs, id.String()}
		}
		return []string{strconv.FormatInt(*x, 10), id.String()}
	}
	panic(fmt.Sprintf("paging: sort value of type %T", v)) // a declaration error, found by any test of the list
}

// TimeKey is the cursor text of a timestamp.
func TimeKey(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ByCreated orders rows oldest first by (created_at, id): the order of most lists.
func ByCreated[R any](value func(R) (time.Time, uuid.UUID)) Keyset[R] {
	return Keyset[R]{Column: "created_at", Kind: Time, Value: func(r R) (any, uuid.UUID) { return value(r) }}
}

// ByCreatedDesc orders rows newest first by (created_at, id).
func ByCreatedDesc[R any](value func(R) (time.Time, uuid.UUID)) Keyset[R] {
	k := ByCreated(value)
	k.Desc = true
	return k
}
