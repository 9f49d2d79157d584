package contacts

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactphone"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Search bounds (characters).
const (
	MinSearch = 2
	MaxSearch = 100
)

// sorts maps the spec's sort values to their keyset (default -createdAt).
var sorts = map[string]paging.Keyset[Contact]{
	"createdAt":  paging.ByCreated(createdOf),
	"-createdAt": paging.ByCreatedDesc(createdOf),
	"updatedAt":  {Column: contact.FieldUpdatedAt, Kind: paging.Time, Value: updatedOf},
	"-updatedAt": {Column: contact.FieldUpdatedAt, Kind: paging.Time, Desc: true, Value: updatedOf},
	"name":       {Column: contact.FieldSortName, Value: sortNameOf},
	"-name":      {Column: contact.FieldSortName, Desc: true, Value: sortNameOf},
}

func createdOf(c Contact) (time.Time, uuid.UUID) { return c.CreatedAt, c.ID }
func updatedOf(c Contact) (any, uuid.UUID)       { return c.UpdatedAt, c.ID }
func sortNameOf(c Contact) (any, uuid.UUID)      { return c.SortName, c.ID }

// SortNames lists the sort values in the spec's order.
var SortNames = []string{"name", "-name", "createdAt", "-createdAt", "updatedAt", "-updatedAt"}

// ListFilter narrows GET /contacts. Empty fields do not filter. Fields is which groups the
// answer carries: it shapes the answer, not the rows, so the cursor is not bound to it.
type ListFilter struct {
	UpdatedSince *time.Time
	Search       string
	Type         string
	EmailKey     string
	PhoneKey     string
	Tags         []string
	Labels       []string
	OwnerID      *uuid.UUID
	Sort         string
	Fields       Selection `json:"-"`
}

// List returns a page of the contacts matching f in the order of f.Sort, each with its phones.
// Invisible contacts are not there (RLS and ent rules).
func (s *Service) List(ctx context.Context, f ListFilter, page paging.Page) ([]Contact, error) {
	k, err := sorts[f.Sort].Apply(page)
	if err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).Contact.Query()
	qctx := ctx
	vis, _ := tenancy.VisibilityOf(ctx)
	restricted := vis != tenancy.VisibilityAll
	if restricted {
		// A restricted credential's list names its visible owners as values, in place of the
		// ent rule's owner_id = ANY(ARRAY(sub-select)). The planner cannot see into that array
		// (an InitPlan, run after planning) and assumes a couple of owners whatever their
		// number: for an agent deputising for 150 colleagues q=müll became a bitmap of 753,757
		// contacts and a sort of 11,782 matches (264 ms at 1,000,000 contacts) where walking
		// the created_at index needs 18 ms; with the owners as values it estimates their
		// contacts from the statistics and walks (docs/perf-notes/
		// 2026-11-26-contacts-at-a-million.md). So this one query skips ent's privacy rules (the rules cannot take the
		// values) and carries their two conditions itself: company_id = the pinned company and
		// owner_id IN (the user and its validly delegating users, as the credential lookup read
		// them; contact_list_scope reads them in the transaction where the lookup does not).
		// The row-level security policies of the request transaction read the delegations
		// themselves in every statement: the two layers stay. q may go through
		// contact_search_keys instead of the pg_trgm index (searchkeys.go).
		company, ok := tenancy.CompanyID(ctx)
		if !ok {
			return nil, fmt.Errorf("list contacts: no company in context")
		}
		var pattern *string
		maxOwners := 0 // no estimate
		if f.Search != "" {
			p := "%" + escapeLike(f.Search) + "%"
			pattern = &p
			if keysTerm(f.Search) {
				maxOwners = keysMaxOwners
			}
		}
		// The owners come with the credential (its lookup read them); contact_list_scope is
		// asked for PostgreSQL's estimate when the keys might serve q, and for the owners
		// where the credential's lookup does not read them.
		owners, known := tenancy.VisibleOwners(ctx)
		var estimate float64
		if !known || (maxOwners > 0 && len(owners) <= maxOwners) {
			var err error
			if owners, estimate, err = listScope(ctx, pattern, maxOwners); err != nil {
				return nil, err
			}
		}
		qctx = privacy.DecisionContext(ctx, privacy.Allow)
		keys := false
		if maxOwners > 0 {
			var err error
			if keys, err = useSearchKeys(ctx, owners, f.Search, estimate); err != nil {
				return nil, err
			}
		}
		if keys { // the owner test and q in one (searchByKeys)
			q.Where(contact.CompanyID(company), searchByKeys(f.Search, owners))
			f.Search = ""
		} else {
			q.Where(contact.CompanyID(company), contact.OwnerIDIn(owners...))
		}
	}
	if f.UpdatedSince != nil {
		q.Where(contact.UpdatedAtGTE(*f.UpdatedSince))
	}
	if f.Search != "" {
		q.Where(search(f.Search))
	}
	if f.Type != "" {
		q.Where(contact.TypeEQ(contact.Type(f.Type)))
	}
	if f.EmailKey != "" {
		q.Where(contact.EmailKey(f.EmailKey))
	}
	if f.PhoneKey != "" {
		q.Where(contact.HasPhonesWith(contactphone.NumberKey(f.PhoneKey)))
	}
	if len(f.Tags) > 0 {
		q.Where(func(s *entsql.Selector) { s.Where(sqljson.ValueContains(contact.FieldTags, f.Tags)) })
	}
	if len(f.Labels) > 0 {
		q.Where(func(s *entsql.Selector) { s.Where(sqljson.ValueContains(contact.FieldLabels, f.Labels)) })
	}
	if f.OwnerID != nil {
		q.Where(contact.OwnerID(*f.OwnerID))
	}
	if f.Search != "" {
		// planned for its values: LIKE's plan depends on the pattern (tenancy.CustomPlans). The
		// keys' statement (f.Search cleared) keeps the plan cache: its index conditions take
		// parameters, and an unnamed statement is parsed and planned anew every time (~0.7 ms).
		qctx = tenancy.CustomPlans(qctx)
	}
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(qctx)
	if err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	return withPhonesOf(ctx, rows)
}

// withPhonesOf loads the phones edge of a page in one statement of its own, with ctx: not
// eagerly with the page's query, whose context may ask for a custom plan (CustomPlans would
// have the phones planned anew every time, 0.5-0.8 ms) and may skip the ent rules (the phones
// keep them).
func withPhonesOf(ctx context.Context, rows []*ent.Contact) ([]Contact, error) {
	out := make([]Contact, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, c := range rows {
		ids[i] = c.ID
	}
	q := tenancy.Client(ctx).ContactPhone.Query().Where(contactphone.ContactIDIn(ids...))
	phoneOrder(q)
	phones, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load contact phones: %w", err)
	}
	by := map[uuid.UUID][]*ent.ContactPhone{}
	for _, p := range phones {
		by[p.ContactID] = append(by[p.ContactID], p)
	}
	for i, c := range rows {
		out[i] = Contact{Contact: c, Phones: by[c.ID]}
	}
	return out, nil
}

// listScope returns the visible owners of the request's user (the acting user and the users
// whose delegation to it is valid: app_visible_owner_ids(), the array the policies and the ent
// rule use) and, for a LIKE pattern and at most maxOwners owners, PostgreSQL's estimate of
// their contacts matching it, in one round trip (contact_list_scope, migration
// 20261126080000, 20261126090100).
func listScope(ctx context.Context, pattern *string, maxOwners int) (owners []uuid.UUID, estimate float64, err error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, sqlListScope, pattern, maxOwners)
	if err != nil {
		return nil, 0, fmt.Errorf("list scope: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var est sql.NullFloat64
		if err := rows.Scan(&id, &est); err != nil {
			return nil, 0, fmt.Errorf("list scope: %w", err)
		}
		owners, estimate = append(owners, id), est.Float64
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list scope: %w", err)
	}
	return owners, estimate, nil
}

// phonePredicate: the contact of s has a phone whose E.164 key is key (as
// contact.HasPhonesWith, for predicates built on a selector).
func phonePredicate(s *entsql.Selector, key string) *entsql.Predicate {
	t := entsql.Table(contactphone.Table)
	return entsql.Exists(entsql.Select(t.C(contactphone.FieldID)).From(t).Where(entsql.And(
		entsql.ColumnsEQ(t.C(contactphone.FieldContactID), s.C(contact.FieldID)),
		entsql.EQ(t.C(contactphone.FieldNumberKey), key))))
}

// search matches term (lower case) inside search_text (names, company name, e-mail, city,
// street, profession, tags) through the pg_trgm index, or, when term looks like a phone
// number, a phone with the same E.164 number.
func search(term string) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		preds := []*entsql.Predicate{entsql.P(func(b *entsql.Builder) {
			b.WriteString(s.C(contact.FieldSearchText) + " LIKE ")
			b.Arg("%" + escapeLike(term) + "%")
		})}
		if key, ok := searchPhoneKey(term); ok {
			t := entsql.Table(contactphone.Table)
			preds = append(preds, entsql.Exists(entsql.Select(t.C(contactphone.FieldID)).From(t).Where(entsql.And(
				entsql.ColumnsEQ(t.C(contactphone.FieldContactID), s.C(contact.FieldID)),
				entsql.EQ(t.C(contactphone.FieldNumberKey), key)))))
		}
		s.Where(entsql.Or(preds...))
	}
}

// escapeLike escapes the LIKE wildcards of s (PostgreSQL's default escape character is \).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
