package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/groupnames"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// PortfolioGroups are the values of groupBy of GET /reports/portfolio (the spec's list); the
// first is the default.
var PortfolioGroups = []string{"type_group", "type", "insurer", "owner", "status"}

// PortfolioQuery is what GET /reports/portfolio asks: the grouping, the day the portfolio is
// taken on, and optionally one owner's contracts only.
type PortfolioQuery struct {
	GroupBy string
	AsOf    time.Time
	OwnerID *uuid.UUID
}

// PortfolioRow is one group of the report. Key is nil for the group of contracts without an
// owner (groupBy owner); Share is the group's part of the total annual premium, 4 fraction
// digits, kept as the database's decimal text so it is never a float on the way.
type PortfolioRow struct {
	Key           *string          `json:"key"`
	Label         string           `json:"label"`
	Contracts     int64            `json:"contracts"`
	Contacts      int64            `json:"contacts"`
	AnnualPremium schematype.Money `json:"annualPremium"`
	Share         json.Number      `json:"share"`
}

// PortfolioTotals are the report's totals; Contacts counts each contact once however many
// groups its contracts fall in, so it is not the sum of the rows.
type PortfolioTotals struct {
	Contracts     int64            `json:"contracts"`
	Contacts      int64            `json:"contacts"`
	AnnualPremium schematype.Money `json:"annualPremium"`
}

// Portfolio is the body of GET /reports/portfolio.
type Portfolio struct {
	Data   []PortfolioRow  `json:"data"`
	Totals PortfolioTotals `json:"totals"`
}

// portfolio handles GET /reports/portfolio.
func (h *Handler) portfolio(c *fiber.Ctx) error {
	var v errs.Invalid
	q := PortfolioQuery{GroupBy: PortfolioGroups[0], AsOf: httpx.Today(h.svc.now())}
	if g := httpx.QueryEnum(c, &v, "groupBy", PortfolioGroups); g != nil {
		q.GroupBy = *g
	}
	if d := httpx.QueryDate(c, &v, "asOf"); d != nil {
		q.AsOf = *d
	}
	q.OwnerID = httpx.QueryUUID(c, &v, "ownerId")
	if err := v.Err(); err != nil {
		return err
	}
	lang := httpx.Lang(c)
	out, err := h.svc.Portfolio(c.UserContext(), q, lang)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// portfolioKeys are the SQL of each grouping's key over contracts c joined with their contact
// p, as text. type_group is the Sparte's group, the code with its last digit 0 ("041" ->
// "040") when that is a Sparte of the catalog ({groups}, groupArray), else the code itself
// ("684" stays: there is no 680). owner is the contract's owner, else its contact's: imported
// contracts often carry none, and the contact's owner is the one who looks after them.
var portfolioKeys = map[string]string{
	"type_group": `CASE WHEN substr(c.type, 1, 2) || '0' = ANY({groups}) THEN substr(c.type, 1, 2) || '0' ELSE c.type END`,
	"type":       `c.type`,
	"insurer":    `c.insurer_id::text`,
	"owner":      `COALESCE(c.owner_id, p.owner_id)::text`,
	"status":     `c.status::text`,
}

// portfolioSQL sums the contracts in force on $1 (see inForce) by the key, from the contracts
// of portfolioFrom (with their contact p where the key or the owner filter needs it), with the
// grand total as the row GROUPING SETS adds (total true). Raw SQL because ent has no GROUPING
// SETS and the sums must stay NUMERIC; it runs in the request's transaction, so row-level
// security narrows it to the contracts the credential may see. Rows come largest annual
// premium first, then most contracts, then by key.
const portfolioSQL = `WITH f AS (
	SELECT c.contact_id, c.annual_premium, ({key}) AS k
	{from}
	WHERE ` + inForce + `{where}
), g AS (
	SELECT GROUPING(k) = 1 AS total, k, count(*) AS contracts, count(DISTINCT contact_id) AS contacts,
		round(COALESCE(sum(annual_premium), 0), 2) AS annual
	FROM f GROUP BY GROUPING SETS ((k), ())
)
SELECT total, k, contracts, contacts, annual,
	round(COALESCE(annual / NULLIF(max(annual) FILTER (WHERE total) OVER (), 0), 0), 4)::text
FROM g ORDER BY total, annual DESC, contracts DESC, k`

// portfolioStatement is portfolioSQL for q and the credential of ctx, with its arguments
// ($1 asOf, then the owner filter and the visible owners where used). The contracts come:
//   - for a restricted credential (tenancy.VisibleOwners), from its visible owners' contacts
//     (index tenant_contacts_company_owner) and their contracts, so the contracts' per-row
//     policy probes only those (2% of the company, not a million rows); the policies apply
//     on top;
//   - else with their contact joined only where the key (owner) or the owner filter reads
//     the contact's owner; the other keys read the contracts alone (a join of every contract
//     in force with a million contacts was a third of the report).
func portfolioStatement(ctx context.Context, q PortfolioQuery) (string, []any) {
	key := strings.Replace(portfolioKeys[q.GroupBy], "{groups}", groupArray(), 1)
	args := []any{q.AsOf.Format(time.DateOnly)}
	from, where := "FROM contracts c", ""
	if owners, restricted := tenancy.VisibleOwners(ctx); restricted {
		args = append(args, owners)
		from = "FROM contacts p JOIN contracts c ON c.company_id = p.company_id AND c.contact_id = p.id"
		where = fmt.Sprintf("\n\t  AND p.owner_id = ANY($%d::uuid[])", len(args))
	} else if q.GroupBy == "owner" || q.OwnerID != nil {
		from = "FROM contracts c JOIN contacts p ON p.company_id = c.company_id AND p.id = c.contact_id"
	}
	if q.OwnerID != nil {
		args = append(args, *q.OwnerID)
		where += fmt.Sprintf("\n\t  AND COALESCE(c.owner_id, p.owner_id) = $%d::uuid", len(args))
	}
	r := strings.NewReplacer("{key}", key, "{from}", from, "{where}", where)
	return r.Replace(portfolioSQL), args
}

// inForce says a contract c ran on the day $1 (docs/decisions/reports.md "Portfolio"): begun
// (no start date counts as begun) and not ended before, by the dates; and by the status, which
// is today's: active and suspended contracts count, cancelled and ended ones only when their
// end date says they still ran on $1 (their history), offers and applications never.
const inForce = `(c.start_date IS NULL OR c.start_date <= $1::date)
	  AND (c.end_date IS NULL OR c.end_date >= $1::date)
	  AND (c.status IN ('active', 'suspended') OR (c.status IN ('cancelled', 'ended') AND c.end_date IS NOT NULL))`

// Portfolio computes the portfolio report for the credential of ctx; labels in lang.
func (s *Service) Portfolio(ctx context.Context, q PortfolioQuery, lang string) (Portfolio, error) {
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return Portfolio{}, err
	}
	query, args := portfolioStatement(ctx, q)
	// Planned for its values, each time (tenancy.CustomPlans): a generic plan, which PostgreSQL may
	// keep after five runs, is built without the window's and the owners' values.
	rows, err := tenancy.Client(ctx).QueryContext(tenancy.CustomPlans(ctx), query, args...)
	if err != nil {
		return Portfolio{}, fmt.Errorf("portfolio report: %w", err)
	}
	defer rows.Close()
	out := Portfolio{Data: []PortfolioRow{}}
	for rows.Next() {
		var (
			total bool
			r     PortfolioRow
			share string
		)
		if err := rows.Scan(&total, &r.Key, &r.Contracts, &r.Contacts, &r.AnnualPremium, &share); err != nil {
			return Portfolio{}, fmt.Errorf("portfolio report: %w", err)
		}
		if total {
			out.Totals = PortfolioTotals{Contracts: r.Contracts, Contacts: r.Contacts, AnnualPremium: r.AnnualPremium}
			continue
		}
		r.Share = json.Number(share)
		out.Data = append(out.Data, r)
	}
	if err := rows.Err(); err != nil {
		return Portfolio{}, fmt.Errorf("portfolio report: %w", err)
	}
	if err := rows.Close(); err != nil {
		return Portfolio{}, fmt.Errorf("portfolio report: %w", err)
	}
	if err := s.label(ctx, q.GroupBy, out.Data, lang); err != nil {
		return Portfolio{}, err
	}
	return out, nil
}

// groupArray is the SQL array of the Sparten that head a group of the catalog: the codes
// ending in 0. A literal, not a parameter: the codes are our catalog's three digits, and a
// parameter the other groupings leave unused would have no type.
func groupArray() string {
	var out []string
	for _, c := range gdv.Sparten() {
		if strings.HasSuffix(c.Code, "0") {
			out = append(out, "'"+c.Code+"'")
		}
	}
	return "ARRAY[" + strings.Join(out, ", ") + "]"
}

// label fills in the rows' labels: Sparten from the GDV catalog, insurers by name, owners by
// the user's name, statuses from statusLabels; all in lang where the source has two languages.
func (s *Service) label(ctx context.Context, groupBy string, rows []PortfolioRow, lang string) error {
	keys := make([]*string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	names, err := groupnames.Of(ctx, groupBy, keys)
	if err != nil {
		return fmt.Errorf("portfolio report labels: %w", err)
	}
	for i, r := range rows {
		switch {
		case r.Key == nil:
			rows[i].Label = pick(lang, "Ohne Betreuer", "No owner")
		case groupBy == "type" || groupBy == "type_group":
			rows[i].Label = sparteLabel(*r.Key, lang)
		case groupBy == "status":
			l := statusLabels[*r.Key]
			rows[i].Label = pick(lang, l[0], l[1])
		default:
			rows[i].Label = names[*r.Key]
		}
		if rows[i].Label == "" {
			rows[i].Label = *r.Key // an owner no longer in the company, a status without label
		}
	}
	return nil
}

// sparteLabel is a Sparte's label in lang; an unknown code is its own label.
func sparteLabel(code, lang string) string {
	sp, _ := gdv.Sparte(code)
	return pick(lang, sp.De, sp.En)
}

// pick is de or en by lang.
func pick(lang, de, en string) string {
	if lang == "en" {
		return en
	}
	return de
}

// statusLabels are the German and English labels of the contract statuses.
var statusLabels = map[string][2]string{
	"active":      {"Aktiv", "Active"},
	"offer":       {"Angebot", "Offer"},
	"application": {"Antrag", "Application"},
	"suspended":   {"Ruhend", "Suspended"},
	"cancelled":   {"Gekündigt", "Cancelled"},
	"ended":       {"Beendet", "Ended"},
}
