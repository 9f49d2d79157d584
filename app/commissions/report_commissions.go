package commissions

import (
	"context"
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

// GET /reports/commissions: the commission entries booked in a window, summed per group
// (docs/decisions/commissions.md "Reports").

// CommissionGroups are the values of groupBy of GET /reports/commissions; the first is the
// default.
var CommissionGroups = []string{"month", "insurer", "type", "contract_type", "owner"}

// CommissionReportQuery is what GET /reports/commissions asks: the booking dates from..to (both
// included) and the grouping.
type CommissionReportQuery struct {
	From, To time.Time
	GroupBy  string
}

// CommissionReportRow is one group. Key is nil for the entries the grouping cannot place: those
// without a contract (contract_type, owner; for owner also a contract whose contact has no
// owner either) or without an insurer (insurer).
type CommissionReportRow struct {
	Key     *string          `json:"key"`
	Label   string           `json:"label"`
	Amount  schematype.Money `json:"amount"`
	Entries int64            `json:"entries"`
}

// CommissionReport is the body of GET /reports/commissions. Total is the sum of every entry in
// the window, which is the sum of the rows: each entry falls in exactly one group.
type CommissionReport struct {
	Data  []CommissionReportRow `json:"data"`
	Total schematype.Money      `json:"total"`
}

// reportCommissions handles GET /reports/commissions.
func (h *Handler) reportCommissions(c *fiber.Ctx) error {
	var v errs.Invalid
	q := CommissionReportQuery{GroupBy: CommissionGroups[0]}
	fromP, toP, ok := httpx.QueryWindow(c, &v, true)
	if g := httpx.QueryEnum(c, &v, "groupBy", CommissionGroups); g != nil {
		q.GroupBy = *g
	}
	if err := v.Err(); err != nil {
		return err
	}
	if ok {
		q.From, q.To = *fromP, *toP
	}
	out, err := h.svc.CommissionReport(c.UserContext(), q, httpx.Lang(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// commissionGroup is a grouping's key over entries e as text, and the joins it needs: c the
// entry's contract, p its contact (both LEFT JOINed by the entry's own ids, which the composite
// key keeps in step: unmatched entries have neither). A grouping joins only what its key reads:
// month and type none; insurer reads the contract only for an entry stored without an insurer
// (a subquery COALESCE evaluates for those alone); contract_type and owner join the contract
// (owner also the contact). insurer is the entry's (the statement's or the file's per-entry VU
// number), else its contract's; owner the contract's, else its contact's, as the portfolio
// report reads it.
// out is the key as the row names it, over k: month groups by the month's first day (date
// arithmetic per entry; to_char per entry was a fifth of the admin's report) and names it
// YYYY-MM once per group.
type commissionGroup struct{ key, joins, out string }

var commissionGroups = map[string]commissionGroup{
	"month":         {`e.booked_on - (extract(day FROM e.booked_on)::int - 1)`, ``, `to_char(k, 'YYYY-MM')`},
	"insurer":       {`COALESCE(e.insurer_id, (SELECT c.insurer_id FROM contracts c WHERE c.id = e.contract_id))::text`, ``, `k`},
	"type":          {`e.type::text`, ``, `k`},
	"contract_type": {`c.type`, `LEFT JOIN contracts c ON c.id = e.contract_id`, `k`},
	"owner": {`COALESCE(c.owner_id, p.owner_id)::text`,
		`LEFT JOIN contracts c ON c.id = e.contract_id LEFT JOIN contacts p ON p.id = e.contact_id`, `k`},
}

// commissionReportSQL sums the entries f (commissionEntriesSQL or commissionEntriesOwnersSQL,
// which read the booking dates $1 to $2, both included) by their key k, named by the grouping's
// out, with the grand total as the row GROUPING SETS adds (total true). Raw SQL because ent has
// no GROUPING SETS and the sums must stay NUMERIC (numeric(14,2) added up exactly, never a
// float). It runs in the request's transaction, so row-level security narrows it to the entries
// the credential may see: an agent's matched entries of its own and delegated contacts, and the
// unmatched ones every commissions reader sees. Rows: months in calendar order; other groupings
// largest amount first, then by key, the null key last.
const commissionReportSQL = `WITH f AS (%s)
SELECT GROUPING(k) = 1 AS total, %s AS key, count(*) AS entries, COALESCE(sum(amount), 0) AS amount
FROM f GROUP BY GROUPING SETS ((k), ())
ORDER BY total, %s`

// commissionEntriesSQL is the window's entries of a credential that sees all (key, joins).
const commissionEntriesSQL = `SELECT e.amount, (%[1]s) AS k
	FROM commission_entries e %[2]s
	WHERE e.booked_on BETWEEN $1::date AND $2::date`

// commissionEntriesOwnersSQL is the window's entries of a restricted credential, named for the
// planner: the unmatched ones, and the matched ones of the contacts of the owners $4 (the
// credential's visible owners, tenancy.VisibleOwners) of company $3, read from those contacts
// (tenant_contacts_company_owner, then tenant_commission_entries_report_contact). Without the
// names the planner reads every entry of the window and probes its contact through the policy
// (app_contact_row, ~6.5 µs an entry). Each entry is in one branch (contact_id null or not, a
// contact has one owner); the policies still apply to both.
const commissionEntriesOwnersSQL = `SELECT e.amount, (%[1]s) AS k
	FROM commission_entries e %[2]s
	WHERE e.contact_id IS NULL AND e.booked_on BETWEEN $1::date AND $2::date
	UNION ALL
	SELECT e.amount, (%[1]s) AS k
	FROM contacts o JOIN commission_entries e ON e.company_id = o.company_id AND e.contact_id = o.id %[2]s
	WHERE o.company_id = $3::uuid AND o.owner_id = ANY($4::uuid[]) AND e.booked_on BETWEEN $1::date AND $2::date`

// commissionReportOrder is each grouping's row order (see commissionReportSQL).
func commissionReportOrder(groupBy string) string {
	if groupBy == "month" {
		return "k"
	}
	return "amount DESC, k NULLS LAST"
}

// commissionReportQuery is the statement and arguments of the report for the credential of ctx.
func commissionReportQuery(ctx context.Context, q CommissionReportQuery) (string, []any, error) {
	g := commissionGroups[q.GroupBy]
	args := []any{q.From.Format(time.DateOnly), q.To.Format(time.DateOnly)}
	entries := fmt.Sprintf(commissionEntriesSQL, g.key, g.joins)
	if owners, ok := tenancy.VisibleOwners(ctx); ok {
		company, ok := tenancy.CompanyID(ctx)
		if !ok {
			return "", nil, fmt.Errorf("commission report: no company in context")
		}
		entries = fmt.Sprintf(commissionEntriesOwnersSQL, g.key, g.joins)
		args = append(args, company, uuidArray(owners))
	}
	return fmt.Sprintf(commissionReportSQL, entries, g.out, commissionReportOrder(q.GroupBy)), args, nil
}

// uuidArray is ids as a PostgreSQL array literal (for $n::uuid[]).
func uuidArray(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "{" + strings.Join(s, ",") + "}"
}

// CommissionReport computes GET /reports/commissions for the credential of ctx; labels in lang.
func (s *Service) CommissionReport(ctx context.Context, q CommissionReportQuery, lang string) (CommissionReport, error) {
	sqlText, args, err := commissionReportQuery(ctx, q)
	if err != nil {
		return CommissionReport{}, err
	}
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return CommissionReport{}, err
	}
	// Planned for its values, each time (tenancy.CustomPlans): a generic plan, which PostgreSQL may
	// keep after five runs, is built without the window's and the owners' values.
	rows, err := tenancy.Client(ctx).QueryContext(tenancy.CustomPlans(ctx), sqlText, args...)
	if err != nil {
		return CommissionReport{}, fmt.Errorf("commission report: %w", err)
	}
	defer rows.Close()
	out := CommissionReport{Data: []CommissionReportRow{}, Total: schematype.MustMoney("0")}
	for rows.Next() {
		var (
			total bool
			r     CommissionReportRow
		)
		if err := rows.Scan(&total, &r.Key, &r.Entries, &r.Amount); err != nil {
			return CommissionReport{}, fmt.Errorf("commission report: %w", err)
		}
		if total {
			out.Total = r.Amount
			continue
		}
		out.Data = append(out.Data, r)
	}
	if err := rows.Err(); err != nil {
		return CommissionReport{}, fmt.Errorf("commission report: %w", err)
	}
	if err := rows.Close(); err != nil {
		return CommissionReport{}, fmt.Errorf("commission report: %w", err)
	}
	if err := commissionReportLabels(ctx, q.GroupBy, out.Data, lang); err != nil {
		return CommissionReport{}, err
	}
	return out, nil
}

// commissionReportLabels fills in the rows' labels in lang: months by name, insurers by name,
// owners by the user's name, entry types and Sparten (the GDV catalog) in German or English.
func commissionReportLabels(ctx context.Context, groupBy string, rows []CommissionReportRow, lang string) error {
	keys := make([]*string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	names, err := groupnames.Of(ctx, groupBy, keys)
	if err != nil {
		return fmt.Errorf("commission report labels: %w", err)
	}
	for i, r := range rows {
		var l string
		switch {
		case r.Key == nil:
			l = reportInLang(lang, nullGroupLabels[groupBy])
		case groupBy == "month":
			l = monthLabel(*r.Key, lang)
		case groupBy == "type":
			l = reportInLang(lang, entryTypeLabels[*r.Key])
		case groupBy == "contract_type":
			sp, _ := gdv.Sparte(*r.Key)
			l = reportInLang(lang, [2]string{sp.De, sp.En})
		default:
			l = names[*r.Key]
		}
		if l == "" && r.Key != nil {
			l = *r.Key // an owner no longer in the company, a Sparte outside the catalog
		}
		rows[i].Label = l
	}
	return nil
}

// nullGroupLabels label the null key of each grouping (German, English).
var nullGroupLabels = map[string][2]string{
	"insurer":       {"Ohne Versicherer", "No insurer"},
	"contract_type": {"Ohne Vertrag", "No contract"},
	"owner":         {"Ohne Vertrag oder Betreuer", "No contract or owner"},
}

// entryTypeLabels are the German and English labels of the entry types.
var entryTypeLabels = map[string][2]string{
	"commission":   {"Provision", "Commission"},
	"cancellation": {"Storno", "Cancellation"},
	"correction":   {"Korrektur", "Correction"},
	"premium":      {"Beitragsbuchung", "Premium posting"},
	"other":        {"Sonstige", "Other"},
}

// monthNames are the months in German and English.
var monthNames = [12][2]string{
	{"Januar", "January"}, {"Februar", "February"}, {"März", "March"}, {"April", "April"},
	{"Mai", "May"}, {"Juni", "June"}, {"Juli", "July"}, {"August", "August"},
	{"September", "September"}, {"Oktober", "October"}, {"November", "November"}, {"Dezember", "December"},
}

// monthLabel is "März 2025" or "March 2025" for the key "2025-03".
func monthLabel(key, lang string) string {
	t, err := time.Parse("2006-01", key)
	if err != nil {
		return key
	}
	return reportInLang(lang, monthNames[t.Month()-1]) + " " + t.Format("2006")
}

// reportInLang is the German (0) or English (1) text by lang.
func reportInLang(lang string, l [2]string) string {
	if lang == "en" {
		return l[1]
	}
	return l[0]
}
