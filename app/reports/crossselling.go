package reports

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// gapRule is one line of cover a contact of ContactType should have: the contract type Gap,
// held when the contact has a contract of any of Covers, weighing Weight in the score. The
// weights of one contact type add up to 100, so a customer lacking everything scores 100.
type gapRule struct {
	ContactType string
	Gap         string
	Weight      int
	Covers      []string
}

// gapRules is the rule table of the cross-selling report (docs/decisions/reports.md
// "Cross-selling"): the basic covers a German broker checks for a private household and for a
// business. Read-only data.
var gapRules = []gapRule{
	{"private", "041", 30, []string{"040", "041"}},                              // Privathaftpflicht
	{"private", "010", 20, []string{"010", "011", "012", "013", "014"}},         // Leben (Hinterbliebene, Vorsorge)
	{"private", "130", 20, []string{"130", "131", "132"}},                       // Hausrat
	{"private", "070", 15, []string{"070", "071", "079"}},                       // Rechtsschutz
	{"private", "030", 15, []string{"030", "031", "038", "039"}},                // Unfall
	{"business", "042", 35, []string{"040", "042"}},                             // Betriebshaftpflicht
	{"business", "080", 20, []string{"080", "081", "083", "089", "180", "181"}}, // Inhalt (Feuer, Einheit)
	{"business", "230", 15, []string{"230", "231", "232", "233"}},               // Betriebsunterbrechung
	{"business", "070", 15, []string{"070", "071", "076", "079"}},               // Firmenrechtsschutz
	{"business", "044", 15, []string{"044"}},                                    // Vermögensschaden-Haftpflicht
}

// GapTypes are the values of the gap filter: the contract types of the rule table.
func GapTypes() []string {
	var out []string
	for _, r := range gapRules {
		out = append(out, r.Gap)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CrossSellingFilter narrows GET /reports/cross-selling: Gap keeps only the contacts that lack
// this contract type.
type CrossSellingFilter struct {
	Gap *string `json:"gap"`
}

// Gap is one contract type a contact lacks, with its weight in the score.
type Gap struct {
	Type   string `json:"type"`
	Label  string `json:"label"`
	Weight int    `json:"weight"`
}

// CrossSellingContact is the contact of a cross-selling item: who it is, how to reach it and who
// looks after it (more than contacts' ContactSummary, which names a related contact),
// without the field groups (the report is no way around contacts.sensitive:read).
type CrossSellingContact struct {
	ID          uuid.UUID  `json:"id"`
	Type        string     `json:"type"`
	Name        string     `json:"name"`
	FirstName   string     `json:"firstName"`
	LastName    string     `json:"lastName"`
	CompanyName *string    `json:"companyName"`
	Email       *string    `json:"email"`
	OwnerID     *uuid.UUID `json:"ownerId"`
}

// CrossSelling is one item of the report: a customer, the covers it lacks (heaviest first) and
// its score, the sum of their weights.
type CrossSelling struct {
	Contact CrossSellingContact `json:"contact"`
	Gaps    []Gap               `json:"gaps"`
	Score   int                 `json:"score"`
}

// byScore orders the report by score, highest first, then contact id ascending; the SQL
// applies it (crossSellingSQL), the keyset gives a row's cursor key.
var byScore = paging.Keyset[CrossSelling]{Kind: paging.Int,
	Value: func(r CrossSelling) (any, uuid.UUID) { return int64(r.Score), r.Contact.ID }}

// crossSelling handles GET /reports/cross-selling: Paged, by score desc, then contact id.
func (h *Handler) crossSelling(c *fiber.Ctx) error {
	lang := httpx.Lang(c)
	return httpx.ServeList(c, h.pager, "reports/cross-selling", parseCrossSelling,
		func(ctx context.Context, f CrossSellingFilter, p paging.Page) ([]CrossSelling, error) {
			return h.svc.CrossSelling(ctx, f, p, lang)
		}, byScore, func(r CrossSelling) CrossSelling { return r })
}

// parseCrossSelling reads gap: a contract type of the rule table (invalid_enum otherwise, so a
// typo is no empty report).
func parseCrossSelling(c *fiber.Ctx, v *errs.Invalid) (CrossSellingFilter, error) {
	return CrossSellingFilter{Gap: httpx.QueryEnum(c, v, "gap", GapTypes())}, nil
}

// crossSellingSQL lists the customers with their gaps ("041:30,130:20", heaviest first) and score, $3 rows after the key ($1
// score, $2 id; NULL on the first page), only those lacking $4 when it is given. %s is the
// rule table (rulesSQL). A customer is a contact with an active contract; a cover is held by a
// contract that is active, suspended, or on its way (offer, application: already being sold).
// Raw SQL because the score is computed over the rule table and orders the pages; it runs in
// the request's transaction, so row-level security narrows contacts and contracts alike.
const crossSellingSQL = `WITH rules(ctype, gap, weight, covers) AS (VALUES %s),
held AS (
	SELECT contact_id, array_agg(DISTINCT type::text) AS types, bool_or(status = 'active') AS customer
	FROM contracts WHERE status IN ('active', 'suspended', 'offer', 'application')
	GROUP BY contact_id
),
g AS (
	SELECT p.id, string_agg(r.gap || ':' || r.weight, ',' ORDER BY r.weight DESC, r.gap) AS gaps,
		array_agg(r.gap) AS codes, sum(r.weight)::int AS score
	FROM contacts p
	JOIN held h ON h.contact_id = p.id AND h.customer
	JOIN rules r ON r.ctype = p.type::text AND NOT (r.covers && h.types)
	GROUP BY p.id
)
SELECT id, gaps, score FROM g
WHERE ($4::text IS NULL OR $4::text = ANY(codes))
  AND ($1::int IS NULL OR score < $1::int OR (score = $1::int AND id > $2::uuid))
ORDER BY score DESC, id
LIMIT $3`

// rulesSQL is gapRules as the rows of a VALUES list. Literals, not parameters: the table is
// ours (contact types and three-digit codes), fixed at build time.
func rulesSQL() string {
	rows := make([]string, len(gapRules))
	for i, r := range gapRules {
		covers := make([]string, len(r.Covers))
		for j, c := range r.Covers {
			covers[j] = "'" + c + "'"
		}
		rows[i] = fmt.Sprintf("('%s', '%s', %d, ARRAY[%s]::text[])", r.ContactType, r.Gap, r.Weight, strings.Join(covers, ", "))
	}
	return strings.Join(rows, ", ")
}

// CrossSelling returns a page of the report for the credential of ctx; labels in lang.
func (s *Service) CrossSelling(ctx context.Context, f CrossSellingFilter, page paging.Page, lang string) ([]CrossSelling, error) {
	key, id, ok, err := afterKey(page)
	if err != nil {
		return nil, err
	}
	var afterScore, afterID any
	if ok {
		n, perr := strconv.Atoi(key)
		if perr != nil {
			return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
		}
		afterScore, afterID = n, id
	}
	var gap any
	if f.Gap != nil {
		gap = *f.Gap
	}
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, err
	}
	rows, err := tenancy.Client(ctx).QueryContext(ctx, fmt.Sprintf(crossSellingSQL, rulesSQL()), afterScore, afterID, page.Limit+1, gap)
	if err != nil {
		return nil, fmt.Errorf("cross-selling report: %w", err)
	}
	defer rows.Close()
	var (
		out []CrossSelling
		ids []uuid.UUID
	)
	for rows.Next() {
		var (
			r    CrossSelling
			gaps string
		)
		if err := rows.Scan(&r.Contact.ID, &gaps, &r.Score); err != nil {
			return nil, fmt.Errorf("cross-selling report: %w", err)
		}
		for _, g := range strings.Split(gaps, ",") {
			code, weight, _ := strings.Cut(g, ":")
			w, _ := strconv.Atoi(weight)
			r.Gaps = append(r.Gaps, Gap{Type: code, Label: sparteLabel(code, lang), Weight: w})
		}
		out = append(out, r)
		ids = append(ids, r.Contact.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cross-selling report: %w", err)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("cross-selling report: %w", err)
	}
	cs, err := tenancy.Client(ctx).Contact.Query().Where(contact.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("cross-selling report contacts: %w", err)
	}
	byID := make(map[uuid.UUID]*ent.Contact, len(cs))
	for _, c := range cs {
		byID[c.ID] = c
	}
	for i := range out {
		if c := byID[out[i].Contact.ID]; c != nil {
			out[i].Contact = summary(c)
		}
	}
	return out, nil
}

// summary is the CrossSellingContact of c; Name is the company name of a business, the person's
// name otherwise.
func summary(c *ent.Contact) CrossSellingContact {
	s := CrossSellingContact{ID: c.ID, Type: string(c.Type), FirstName: c.FirstName, LastName: c.LastName,
		Email: c.Email, OwnerID: c.OwnerID, Name: strings.TrimSpace(c.FirstName + " " + c.LastName)}
	if c.CompanyName != "" {
		n := c.CompanyName
		s.CompanyName = &n
	}
	if c.Type == contact.TypeBusiness && c.CompanyName != "" {
		s.Name = c.CompanyName
	}
	return s
}
