package httpx

import (
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/errs"
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

// BeforeTime is BeforeCreated for lists ordered newest first by another timestamp column
// (column, id), e.g. a timeline by occurred_at; the cursor key is CreatedKey(t, id).
func BeforeTime(column string, after []string) (func(*entsql.Selector), error) {
	return timePredicate(column, after, entsql.CompositeLT)
}

func createdPredicate(after []string, cmp func([]string, ...any) *entsql.Predicate) (func(*entsql.Selector), error) {
	return timePredicate("created_at", after, cmp)
}

func timePredicate(column string, after []string, cmp func([]string, ...any) *entsql.Predicate) (func(*entsql.Selector), error) {
	if len(after) == 0 {
		return nil, nil
	}
	if len(after) != 2 {
		return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
	}
	t, terr := time.Parse(time.RFC3339Nano, after[0])
	id, ierr := uuid.Parse(after[1])
	if terr != nil || ierr != nil {
		return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
	}
	return func(s *entsql.Selector) {
		s.Where(cmp([]string{s.C(column), s.C("id")}, t, id))
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
