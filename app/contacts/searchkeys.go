package contacts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// q for a restricted credential through contact_search_keys (migration 20261126070000): the
// GIN index keyed by owner and three-character window finds each visible owner's matches from
// a posting list of that owner's alone, where the pg_trgm index finds the whole company's and
// has to be ANDed with a bitmap of all the owners' contacts. That wins while the visible
// matches are few (q=müll for an agent at 1,000,000 contacts: 1.8 ms against 9–12 ms); with
// many (a city, "str") the plan that walks the sort order and stops at the page's end is
// faster, and PostgreSQL picks it on its own for the pg_trgm query. So the keys are used only
// when PostgreSQL estimates few visible matches, for a bounded number of owners (one index
// scan each), and for a term with at least one window (3 characters). docs/decisions/contacts.md
// "Search", "Restricted credentials search an index keyed by owner and window".
const (
	keysMaxOwners = 32
	keysMaxRows   = 1000
)

// searchWindows returns the distinct three-character windows of term that hold no newline
// (the index leaves windows across fields out), in order; none for a shorter term.
func searchWindows(term string) []string {
	r := []rune(term)
	var out []string
	for i := 0; i+3 <= len(r); i++ {
		w := string(r[i : i+3])
		if !strings.ContainsRune(w, '\n') && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// ownerKey is the owner's prefix in contact_search_keys: the last 8 hex digits of its UUID.
func ownerKey(owner uuid.UUID) string {
	s := owner.String()
	return s[len(s)-8:]
}

// searchByKeys matches term inside search_text like search, for the contacts of owners,
// through contact_search_keys: one index scan per owner for the term's windows. strpos is the
// exact test, not LIKE, and the owner test compares text: either as an index condition would
// make the planner AND in the pg_trgm bitmap (whose lossy rows would have it compute the keys
// of every candidate) or the bitmap of all the owners' contacts (2 ms at 50,000), which the
// keys have already narrowed to a few hundred rows. Each window is a condition of its own
// ("keys @>> ARRAY[w1] AND keys @>> ARRAY[w2]", one index scan all the same): @>> is estimated
// at 0.001 a condition whatever the array holds (migration 20261127140000), so one array of all
// windows put 1,000 rows per owner at a million contacts, and at 200,000 already the plan became
// a parallel bitmap scan; per window the estimate shrinks with the term as the built-in @>'s did.
func searchByKeys(term string, owners []uuid.UUID) func(*entsql.Selector) {
	windows := searchWindows(term)
	return func(s *entsql.Selector) {
		keys := make([]*entsql.Predicate, len(owners))
		ids := make([]any, len(owners))
		for i, o := range owners {
			prefix := ownerKey(o)
			ids[i] = o.String()
			each := make([]*entsql.Predicate, len(windows))
			for j, w := range windows {
				each[j] = entsql.P(func(b *entsql.Builder) {
					b.WriteString("contact_search_keys(" + s.C(contact.FieldOwnerID) + ", " + s.C(contact.FieldSearchText) + ") OPERATOR(public.@>>) ARRAY[")
					b.Arg(prefix + w)
					b.WriteString("]::text[]")
				})
			}
			keys[i] = entsql.And(each...)
		}
		s.Where(entsql.And(
			entsql.P(func(b *entsql.Builder) {
				b.WriteString(s.C(contact.FieldOwnerID) + "::text IN (")
				b.Args(ids...)
				b.WriteString(")")
			}),
			entsql.P(func(b *entsql.Builder) {
				b.WriteString("strpos(" + s.C(contact.FieldSearchText) + ", ")
				b.Arg(term)
				b.WriteString(") > 0")
			}),
			entsql.Or(keys...)))
	}
}

// useSearchKeys reports whether q=term for owners goes through contact_search_keys: the index
// can serve it (the function is leakproof), the term has windows and is not a phone number,
// the owners are few, and PostgreSQL estimated (estimate, from listScope) at most keysMaxRows
// visible matches.
func useSearchKeys(ctx context.Context, owners []uuid.UUID, term string, estimate float64) (bool, error) {
	if len(owners) == 0 || len(owners) > keysMaxOwners || !keysTerm(term) || estimate > keysMaxRows {
		return false, nil
	}
	return keysLeakproof(ctx)
}

// keysTerm: term could go through contact_search_keys (it has a window and is no phone number).
func keysTerm(term string) bool {
	_, phone := searchPhoneKey(term)
	return len(searchWindows(term)) > 0 && !phone
}

// keysLeakproof: are contact_search_keys and the function of @>> (text[] @> text[] as our
// own operator, the one the index's operator class serves; migration 20261127140000)
// leakproof, i.e. did a superuser run the migrations? Otherwise PostgreSQL would evaluate the
// condition row by row behind the policies (or @>> does not exist). Asked once per process
// (migrations run before the server starts); a failed query is asked again.
var keysLeakproof = func() func(context.Context) (bool, error) {
	var mu sync.Mutex
	var known, ok bool
	return func(ctx context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if known {
			return ok, nil
		}
		err := queryValue(ctx, &ok, `SELECT count(*) = 2 AND coalesce(bool_and(proleakproof), false) FROM pg_catalog.pg_proc
			WHERE oid IN ('public.contact_search_keys(uuid, text)'::regprocedure,
				(SELECT oprcode FROM pg_catalog.pg_operator WHERE oid = to_regoperator('public.@>>(text[], text[])')))`)
		if err != nil {
			return false, fmt.Errorf("search keys leakproof: %w", err)
		}
		known = true
		return ok, nil
	}
}()

// searchPhoneKey returns the E.164 key of term when term is made of phone number characters
// and parses as one (search then also matches phones, which the keys do not cover).
func searchPhoneKey(term string) (string, bool) {
	if strings.Trim(term, "0123456789 +-/().") != "" {
		return "", false
	}
	return identity.PhoneKey(term)
}

// queryValue scans the one value of the first row of query in the request transaction.
func queryValue(ctx context.Context, dst any, query string, args ...any) error {
	return tenancy.QueryRow(ctx, query, args, dst)
}
