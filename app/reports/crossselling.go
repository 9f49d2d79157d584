package reports

import (
	"context"
	"fmt"
	"math"
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
// business. Read-only data. The score is computed in the database from the same table
// (cross_selling_rules, migrations/20261212100400, which also makes one index per gap): a change
// here is a migration there; test/reports TestCrossSelling_RulesMatchDatabase compares them.
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

// GapRules are the rule table's rows as (contact type, gap, weight, covers), for the test that
// compares it with the database's.
func GapRules() [][4]any {
	out := make([][4]any, len(gapRules))
	for i, r := range gapRules {
		out[i] = [4]any{r.ContactType, r.Gap, r.Weight, r.Covers}
	}
	return out
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

// The report reads contact_covers (migrations/20261212100400): per contact the counts of its
// contracts by type and status, kept by triggers in every write of a contract, with the score
// and gaps of cross_selling_gaps and rank = -score. A customer is a contact with an active
// contract; a cover is held by a contract that is active, suspended, or on its way (offer,
// application: already being sold). The page is an index scan in (rank, id) order, i.e. score
// descending, then contact id: for the company (tenant_contact_covers_rank), per gap
// (tenant_contact_covers_gap_<code>: the gap is written into the statement as a literal, one of
// GapTypes, so the planner matches the partial index), and for a restricted credential per
// visible owner (tenant_contact_covers_owner_rank: the first rows of each owner, merged). Raw SQL
// because the order and the cursor are one row comparison ent does not write; it runs in the
// request's transaction, so row-level security narrows it as any read.

// crossSellingWhere is the condition every statement shares: customers with a gap, only those
// lacking gap when given, after the key ($1 rank, $2 id; before every row on the first page).
// gap is one of GapTypes (parseCrossSelling), digits only: safe as a literal.
func crossSellingWhere(gap *string) string {
	w := "active_contracts > 0 AND score > 0 AND (rank, id) > ($1::bigint, $2::uuid)"
	if gap != nil {
		w += " AND gaps LIKE '%" + *gap + ":%'"
	}
	return w
}

// crossSellingSQL is the page's statement: $3 rows; for owners (a restricted credential's,
// $4) each owner's first $3 rows, then the best $3 of those.
func crossSellingSQL(gap *string, owners bool) string {
	where := crossSellingWhere(gap)
	if !owners {
		return `SELECT id, gaps, score FROM contact_covers WHERE ` + where + ` ORDER BY rank, id LIMIT $3`
	}
	return `SELECT x.id, x.gaps, x.score FROM unnest($4::uuid[]) o(owner)
CROSS JOIN LATERAL (SELECT id, gaps, score, rank FROM contact_covers
	WHERE owner_id = o.owner AND ` + where + ` ORDER BY rank, id LIMIT $3) x
ORDER BY x.rank, x.id LIMIT $3`
}

// CrossSelling returns a page of the report for the credential of ctx; labels in lang.
func (s *Service) CrossSelling(ctx context.Context, f CrossSellingFilter, page paging.Page, lang string) ([]CrossSelling, error) {
	key, id, ok, err := afterKey(page)
	if err != nil {
		return nil, err
	}
	// Before every row: no rank is below -100 (the weights of a contact type add up to 100).
	args := []any{int64(math.MinInt64), uuid.Nil, page.Limit + 1}
	if ok {
		n, perr := strconv.Atoi(key)
		if perr != nil {
			return nil, errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
		}
		args[0], args[1] = -int64(n), id // the cursor keeps the score; the order's key is its rank
	}
	owners, restricted := tenancy.VisibleOwners(ctx)
	if restricted {
		args = append(args, owners)
	}
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, err
	}
	rows, err := tenancy.Client(ctx).QueryContext(ctx, crossSellingSQL(f.Gap, restricted), args...)
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
