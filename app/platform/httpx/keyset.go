package httpx

import (
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// CreatedKey is the cursor key of a row in a list ordered by (created_at, id).
func CreatedKey(createdAt time.Time, id uuid.UUID) []string {
	return []string{createdAt.UTC().Format(time.RFC3339Nano), id.String()}
}

// AfterCreated turns the cursor key of a (created_at, id) list into the keyset predicate
// (created_at, id) > (t, id), which an index on (company_id, created_at, id) serves. It returns
// nil for a first page (after empty).
func AfterCreated(after []string) (func(*entsql.Selector), error) {
	return createdPredicate(after, entsql.CompositeGT)
}

// BeforeCreated is AfterCreated for lists ordered newest first: (created_at, id) < (t, id).
func BeforeCreated(after []string) (func(*entsql.Selector), error) {
	return createdPredicate(after, entsql.CompositeLT)
}

func createdPredicate(after []string, cmp func([]string, ...any) *entsql.Predicate) (func(*entsql.Selector), error) {
	return Keyset{Column: "created_at", Time: true}.predicate(after, cmp)
}

// Keyset is the order of a list by (Column, id), ascending or Desc, for lists with more than
// one sort (GET /contacts?sort=): Key is a row's cursor key, After the predicate that continues
// past it, Order the ORDER BY. Time says Column holds timestamps (else text).
type Keyset struct {
	Column string
	Desc   bool
	Time   bool
}

// Key is the cursor key of a row whose Column holds v (a time.Time or a string).
func (k Keyset) Key(v any, id uuid.UUID) []string {
	if t, ok := v.(time.Time); ok {
		return CreatedKey(t, id)
	}
	return []string{v.(string), id.String()}
}

// After is the keyset predicate past the cursor key after (nil for a first page).
func (k Keyset) After(after []string) (func(*entsql.Selector), error) {
	if k.Desc {
		return k.predicate(after, entsql.CompositeLT)
	}
	return k.predicate(after, entsql.CompositeGT)
}

// Order orders a query by (Column, id) in the keyset's direction.
func (k Keyset) Order() func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		if k.Desc {
			s.OrderBy(entsql.Desc(s.C(k.Column)), entsql.Desc(s.C("id")))
		} else {
			s.OrderBy(entsql.Asc(s.C(k.Column)), entsql.Asc(s.C("id")))
		}
	}
}

func (k Keyset) predicate(after []string, cmp func([]string, ...any) *entsql.Predicate) (func(*entsql.Selector), error) {
	if len(after) == 0 {
		return nil, nil
	}
	bad := errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
	if len(after) != 2 {
		return nil, bad
	}
	id, err := uuid.Parse(after[1])
	if err != nil {
		return nil, bad
	}
	var v any = after[0]
	if k.Time {
		t, err := time.Parse(time.RFC3339Nano, after[0])
		if err != nil {
			return nil, bad
		}
		v = t
	}
	return func(s *entsql.Selector) {
		s.Where(cmp([]string{s.C(k.Column), s.C("id")}, v, id))
	}, nil
}

// IfNoneMatch reports whether an If-None-Match header names etag (weak comparison, RFC 9110
// §13.1.2): a conditional GET of an unchanged resource answers 304.
func IfNoneMatch(header, etag string) bool {
	for _, t := range splitTags(header) {
		if t == "*" || trimWeak(t) == trimWeak(etag) {
			return true
		}
	}
	return false
}
