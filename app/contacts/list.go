package contacts

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
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

// Sorts maps the spec's sort values to their keyset (default -createdAt).
var Sorts = map[string]httpx.Keyset{
	"createdAt":  {Column: contact.FieldCreatedAt, Time: true},
	"-createdAt": {Column: contact.FieldCreatedAt, Time: true, Desc: true},
	"updatedAt":  {Column: contact.FieldUpdatedAt, Time: true},
	"-updatedAt": {Column: contact.FieldUpdatedAt, Time: true, Desc: true},
	"name":       {Column: contact.FieldSortName},
	"-name":      {Column: contact.FieldSortName, Desc: true},
}

// SortNames lists the sort values in the spec's order.
var SortNames = []string{"name", "-name", "createdAt", "-createdAt", "updatedAt", "-updatedAt"}

// ListFilter narrows GET /contacts. Empty fields do not filter.
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
}

// ParseListFilter reads the query of GET /contacts; every bad parameter is listed. binding
// names the list and its filters for the cursor.
func ParseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, binding string) {
	if s := c.Query("updatedSince"); s != "" {
		t, ok := httpx.ParseTime(s)
		v.Check("updatedSince", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
		if ok {
			f.UpdatedSince = &t
		}
	}
	raw := c.Query("q")
	f.Search = strings.ToLower(strings.TrimSpace(raw))
	if raw != "" {
		n := utf8.RuneCountInString(f.Search)
		v.Check("q", n >= MinSearch, "too_short", fmt.Sprintf("needs at least %d characters", MinSearch))
		v.Check("q", n <= MaxSearch, "too_long", fmt.Sprintf("at most %d characters", MaxSearch))
		check.Text(v, "q", f.Search)
	}
	if s := c.Query("type"); s != "" {
		v.Check("type", s == TypePrivate || s == TypeBusiness, "invalid_enum", "must be private or business")
		f.Type = strings.Clone(s)
	}
	if s := c.Query("email"); s != "" {
		f.EmailKey = identity.EmailKey(s)
	}
	if s := c.Query("phone"); s != "" {
		key, ok := identity.PhoneKey(s)
		v.Check("phone", ok, "invalid_phone", "must be a phone number")
		f.PhoneKey = key
	}
	f.Tags = splitList(c.Query("tag"))
	f.Labels = splitList(c.Query("label"))
	colors := FieldCatalog().LabelColors
	for _, l := range f.Labels {
		v.Check("label", slices.Contains(colors, l), "invalid_enum", "must list colours of "+strings.Join(colors, ", "))
	}
	if s := c.Query("ownerId"); s != "" {
		id, err := uuid.Parse(s)
		v.Check("ownerId", err == nil, "invalid_uuid", "must be a UUID")
		if err == nil {
			f.OwnerID = &id
		}
	}
	f.Sort = c.Query("sort", "-createdAt")
	if _, ok := Sorts[f.Sort]; !ok {
		v.Add("sort", "invalid_enum", "must be one of "+strings.Join(SortNames, ", "))
		f.Sort = "-createdAt"
	}
	parts := []string{"contacts", "sort=" + f.Sort}
	if f.UpdatedSince != nil {
		parts = append(parts, "updatedSince="+f.UpdatedSince.UTC().Format(time.RFC3339Nano))
	}
	owner := ""
	if f.OwnerID != nil {
		owner = f.OwnerID.String()
	}
	parts = append(parts, "q="+f.Search, "type="+f.Type, "email="+f.EmailKey, "phone="+f.PhoneKey,
		"tag="+strings.Join(f.Tags, ","), "label="+strings.Join(f.Labels, ","), "ownerId="+owner)
	return f, strings.Join(parts, "&")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Row is a contact of a list with its phones.
type Row struct {
	*ent.Contact
	Phones []*ent.ContactPhone
}

// Key is the cursor key of r in the order of sort.
func (r Row) Key(sort string) []string {
	k := Sorts[sort]
	switch k.Column {
	case contact.FieldUpdatedAt:
		return k.Key(r.UpdatedAt, r.ID)
	case contact.FieldSortName:
		return k.Key(r.SortName, r.ID)
	}
	return k.Key(r.CreatedAt, r.ID)
}

// List returns up to limit+1 contacts matching f in the order of f.Sort, after the cursor key
// after (empty for the first page). Invisible contacts are not there (RLS and ent rules).
func (s *Service) List(ctx context.Context, f ListFilter, after []string, limit int) ([]Row, error) {
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
		q.Where(hasPhone(f.PhoneKey))
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
	k := Sorts[f.Sort]
	keyset, err := k.After(after)
	if err != nil {
		return nil, err
	}
	if keyset != nil {
		q.Where(keyset)
	}
	if f.Search != "" {
		// planned for its values: LIKE's plan depends on the pattern (tenancy.CustomPlans). The
		// keys' statement (f.Search cleared) keeps the plan cache: its index conditions take
		// parameters, and an unnamed statement is parsed and planned anew every time (~0.7 ms).
		qctx = tenancy.CustomPlans(qctx)
	}
	rows, err := q.Order(k.Order()).Limit(limit + 1).All(qctx)
	if err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, c := range rows {
		ids[i] = c.ID
	}
	phones, err := s.phonesOf(ctx, ids...)
	if err != nil {
		return nil, err
	}
	out := make([]Row, len(rows))
	for i, c := range rows {
		out[i] = Row{Contact: c, Phones: phones[c.ID]}
	}
	return out, nil
}

// listScope returns the visible owners of the request's user (the acting user and the users
// whose delegation to it is valid: app_visible_owner_ids(), the array the policies and the ent
// rule use) and, for a LIKE pattern and at most maxOwners owners, PostgreSQL's estimate of
// their contacts matching it, in one round trip (contact_list_scope, migration
// 20261126080000, 20261126090100).
func listScope(ctx context.Context, pattern *string, maxOwners int) (owners []uuid.UUID, estimate float64, err error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, `SELECT owner_id, estimate FROM contact_list_scope($1, $2)`, pattern, maxOwners)
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

// hasPhone: the contact has a phone whose E.164 key is key.
func hasPhone(key string) func(*entsql.Selector) {
	return func(s *entsql.Selector) { s.Where(phonePredicate(s, key)) }
}

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
