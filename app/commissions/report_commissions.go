package commissions

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

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

// commissionReportKeys are each grouping's key over entries e, their contract c and the
// entry's contact p (both LEFT JOINed: unmatched entries have neither), as text. insurer is the
// entry's (the statement's or the file's per-entry VU number), else its contract's. owner is the
// contract's owner, else its contact's, as the portfolio report reads it.
var commissionReportKeys = map[string]string{
	"month":         `to_char(e.booked_on, 'YYYY-MM')`,
	"insurer":       `COALESCE(e.insurer_id, c.insurer_id)::text`,
	"type":          `e.type::text`,
	"contract_type": `c.type`,
	"owner":         `COALESCE(c.owner_id, p.owner_id)::text`,
}

// commissionReportSQL sums the entries booked from $1 to $2 (both included) by the key %s, with
// the grand total as the row GROUPING SETS adds (total true). Raw SQL because ent has no
// GROUPING SETS and the sums must stay NUMERIC (numeric(14,2) added up exactly, never a
// float). It runs in the request's transaction, so row-level security narrows it to the
// entries the credential may see: an agent's matched entries of its own and delegated
// contacts, and the unmatched ones every commissions reader sees. The contract and contact are
// joined by the entry's own ids, which the composite key keeps in step. Rows: months in
// calendar order; other groupings largest amount first, then by key, the null key last.
const commissionReportSQL = `WITH f AS (
	SELECT e.amount, (%s) AS k
	FROM commission_entries e
	LEFT JOIN contracts c ON c.id = e.contract_id
	LEFT JOIN contacts p ON p.id = e.contact_id
	WHERE e.booked_on BETWEEN $1::date AND $2::date
)
SELECT GROUPING(k) = 1 AS total, k, count(*) AS entries, COALESCE(sum(amount), 0) AS amount
FROM f GROUP BY GROUPING SETS ((k), ())
ORDER BY total, %s`

// commissionReportOrder is each grouping's row order (see commissionReportSQL).
func commissionReportOrder(groupBy string) string {
	if groupBy == "month" {
		return "k"
	}
	return "amount DESC, k NULLS LAST"
}

// CommissionReport computes GET /reports/commissions for the credential of ctx; labels in lang.
func (s *Service) CommissionReport(ctx context.Context, q CommissionReportQuery, lang string) (CommissionReport, error) {
	sqlText := fmt.Sprintf(commissionReportSQL, commissionReportKeys[q.GroupBy], commissionReportOrder(q.GroupBy))
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return CommissionReport{}, err
	}
	rows, err := tenancy.Client(ctx).QueryContext(ctx, sqlText, q.From.Format(time.DateOnly), q.To.Format(time.DateOnly))
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
