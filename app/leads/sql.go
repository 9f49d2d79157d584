package leads

import (
	entsql "entgo.io/ent/dialect/sql"

	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
)

// The SQL of this package below ent, each piece with the reason. (The advisory lock of the
// external upsert is in external.go until it moves to app/platform/extref.)

// fullNameLike matches pattern (ILIKE) against "first last": a search for "Anna Schmidt" must
// find the lead although the words sit in two columns, and ent has no predicate over an
// expression of two columns.
func fullNameLike(pattern string) predicate.Lead {
	return func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString("(" + s.C(lead.FieldFirstName) + " || ' ' || " + s.C(lead.FieldLastName) + ") ILIKE ")
			b.Arg(pattern)
		}))
	}
}
