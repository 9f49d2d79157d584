package appointments

import (
	entsql "entgo.io/ent/dialect/sql"

	"github.com/brokerdesk/brokerdesk/ent/calendartoken"
)

// The statements of this package that go below ent, each with the reason.

// grantQuery finds the OAuth grant (request id) of an access token of the pinned company, as
// the SECURITY DEFINER function calendar_token_grant reads it (the app role reads no token rows).
const grantQuery = `SELECT grant_id, client_id FROM calendar_token_grant($1)`

// liveToken keeps the tokens the feed would answer, by the feed's own rule
// (calendar_token_live, migrations/): not expired by the database's clock, the user active, the
// issuing credential alive. Below ent: the rule is a SQL function the feed's lookup calls too,
// and ent has no predicate for a function call.
func liveToken(s *entsql.Selector) {
	s.Where(entsql.P(func(b *entsql.Builder) {
		b.WriteString("public.calendar_token_live(" + s.C(calendartoken.FieldUserID) + ", " +
			s.C(calendartoken.FieldExpiresAt) + ", " + s.C(calendartoken.FieldIssuerKeyID) + ", " +
			s.C(calendartoken.FieldIssuerGrantID) + ")")
	}))
}
