package leads

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/predicate"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Search bounds (characters).
const (
	MinSearch = 2
	MaxSearch = 100
)

// ListFilter narrows GET /leads. Nil fields do not filter.
type ListFilter struct {
	UpdatedSince *time.Time
	Search       string
	StageID      *uuid.UUID
	OwnerID      *uuid.UUID
	Source       *string
	Converted    *bool
	IncludeTest  bool
}

// parseListFilter reads the query of GET /leads; every bad parameter is listed. binding names
// the filters for the cursor, normalised.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, binding string) {
	if s := c.Query("updatedSince"); s != "" {
		t, ok := httpx.ParseTime(s)
		v.Check("updatedSince", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
		if ok {
			f.UpdatedSince = &t
		}
	}
	f.Search = strings.TrimSpace(c.Query("search"))
	if n := utf8.RuneCountInString(f.Search); c.Query("search") != "" {
		v.Check("search", n >= MinSearch, "too_short", fmt.Sprintf("needs at least %d characters", MinSearch))
		v.Check("search", n <= MaxSearch, "too_long", fmt.Sprintf("at most %d characters", MaxSearch))
		check.Text(v, "search", f.Search)
	}
	f.StageID = httpx.QueryUUID(c, v, "stageId")
	f.OwnerID = httpx.QueryUUID(c, v, "ownerId")
	if s := c.Query("source"); s != "" {
		ok := lead.SourceValidator(lead.Source(s)) == nil
		v.Check("source", ok, "invalid_enum", "must be one of "+strings.Join(schema.LeadSources, ", "))
		src := strings.Clone(s)
		f.Source = &src
	}
	f.Converted = boolQuery(c, v, "converted")
	if b := boolQuery(c, v, "includeTest"); b != nil {
		f.IncludeTest = *b
	}
	parts := []string{"leads"}
	if f.UpdatedSince != nil {
		parts = append(parts, "updatedSince="+f.UpdatedSince.UTC().Format(time.RFC3339Nano))
	}
	parts = append(parts, "search="+strings.ToLower(f.Search), "stageId="+idString(f.StageID),
		"ownerId="+idString(f.OwnerID), "source="+ptr.Deref(f.Source), "converted="+boolString(f.Converted),
		"includeTest="+strconv.FormatBool(f.IncludeTest))
	return f, strings.Join(parts, "&")
}

func boolQuery(c *fiber.Ctx, v *errs.Invalid, name string) *bool {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	b, err := strconv.ParseBool(s)
	ok := err == nil && (s == "true" || s == "false")
	v.Check(name, ok, "invalid_boolean", "must be true or false")
	if !ok {
		return nil
	}
	return &b
}

func idString(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

func boolString(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// List returns up to limit+1 leads matching f, oldest first (createdAt, then id), after the
// sort key after (empty for the first page).
func (s *Service) List(ctx context.Context, f ListFilter, after []string, limit int) ([]Lead, error) {
	q := tenancy.Client(ctx).Lead.Query()
	if !f.IncludeTest {
		q.Where(lead.Test(false))
	}
	if f.UpdatedSince != nil {
		q.Where(lead.UpdatedAtGTE(*f.UpdatedSince))
	}
	if f.Search != "" {
		q.Where(search(f.Search))
	}
	if f.StageID != nil {
		q.Where(lead.StageID(*f.StageID))
	}
	if f.OwnerID != nil {
		q.Where(lead.OwnerID(*f.OwnerID))
	}
	if f.Source != nil {
		q.Where(lead.SourceEQ(lead.Source(*f.Source)))
	}
	if f.Converted != nil {
		q.Where(lead.Converted(*f.Converted))
	}
	keyset, err := httpx.AfterCreated(after)
	if err != nil {
		return nil, err
	}
	if keyset != nil {
		q.Where(keyset)
	}
	rows, err := q.Order(ent.Asc(lead.FieldCreatedAt), ent.Asc(lead.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list leads: %w", err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, l := range rows {
		ids[i] = l.ID
	}
	atts, err := attachmentsOf(ctx, ids...)
	if err != nil {
		return nil, err
	}
	out := make([]Lead, len(rows))
	for i, l := range rows {
		out[i] = Lead{Lead: l, Attachments: atts[l.ID]}
	}
	return out, nil
}

// search matches term in the full name ("first last"), the e-mail address and, when term
// looks like a phone number, the phone: the same number in E.164, or its digits (without
// leading zeros) inside the stored number. Case-insensitive; % and _ match themselves.
func search(term string) predicate.Lead {
	preds := []predicate.Lead{
		func(s *entsql.Selector) {
			s.Where(entsql.P(func(b *entsql.Builder) {
				b.WriteString("(" + s.C(lead.FieldFirstName) + " || ' ' || " + s.C(lead.FieldLastName) + ") ILIKE ")
				b.Arg("%" + escapeLike(term) + "%")
			}))
		},
		lead.EmailContainsFold(term),
	}
	if strings.Trim(term, "0123456789 +-/().") == "" {
		if key, ok := identity.PhoneKey(term); ok {
			preds = append(preds, lead.PhoneKey(key))
		}
		digits := strings.TrimLeft(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, term), "0")
		if len(digits) >= 4 {
			preds = append(preds, lead.PhoneKeyContains(digits))
		}
	}
	return lead.Or(preds...)
}

// escapeLike escapes the LIKE wildcards of s (PostgreSQL's default escape character is \).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
