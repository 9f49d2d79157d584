package commissions

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// GET /reports/cancellation-liability (Stornohaftung): per contract the commission the insurer
// may still claw back if the contract were cancelled on asOf. docs/decisions/commissions.md
// "Reports" has the formula with a worked example; in short:
//
//   - Liable are the contract's entries of type commission, cancellation and correction booked
//     on or before asOf (premium postings and other entries are not clawed back). Each has its
//     own liability period of L months from its booking date: a later commission (an
//     increase, a correction) starts its own, a cancellation nets what it clawed back.
//   - An entry's open part is amount × remaining / L, remaining = L minus the whole months
//     from its booking date to asOf (none below 0); the contract's open liability is the sum
//     over its entries, rounded to the cent half away from zero, and never below 0.
//   - L is the most specific liability rule of the company (CommissionLiabilityRule: insurer
//     and contract type, then insurer, then contract type, then company-wide; a rule's type is a
//     Sparte code or its group, the exact code winning), else the product default
//     (DefaultLiabilityMonths).

// DefaultLiabilityMonths is the liability period without a rule: 60 months for life (Sparten
// 010–019) and health (020–029), the least period over which §§ 49 and 50 VAG have an
// acquisition commission clawed back; 12 months for every other line (property and
// casualty, where German agency contracts usually hold the first contract year liable).
func DefaultLiabilityMonths(contractType string) int {
	if len(contractType) >= 2 && (contractType[:2] == "01" || contractType[:2] == "02") {
		return 60
	}
	return 12
}

// liabilityDefaultSQL is DefaultLiabilityMonths over the contract c, in SQL.
const liabilityDefaultSQL = `CASE WHEN substr(c.type, 1, 2) IN ('01', '02') THEN 60 ELSE 12 END`

// LiabilityRow is one contract of the report.
type LiabilityRow struct {
	ContractID      uuid.UUID        `json:"contractId"`
	ContactID       uuid.UUID        `json:"contactId"`
	InsurerName     string           `json:"insurerName"`
	PolicyNumber    *string          `json:"policyNumber"`
	OpenLiability   schematype.Money `json:"openLiability"`
	LiabilityEndsOn string           `json:"liabilityEndsOn"`
}

// LiabilityReport is the body of GET /reports/cancellation-liability; Total is the sum of the
// rows' (rounded) open liabilities.
type LiabilityReport struct {
	Data  []LiabilityRow   `json:"data"`
	Total schematype.Money `json:"total"`
}

// reportLiability handles GET /reports/cancellation-liability.
func (h *Handler) reportLiability(c *fiber.Ctx) error {
	var v errs.Invalid
	asOf := httpx.Today(h.svc.m.d.Now())
	if d := httpx.QueryDate(c, &v, "asOf"); d != nil {
		asOf = *d
	}
	if err := v.Err(); err != nil {
		return err
	}
	out, err := h.svc.LiabilityReport(c.UserContext(), asOf)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// MaxDefaultLiabilityMonths is the longest period DefaultLiabilityMonths gives (the report
// reads no entry booked longer ago than the longest period, liabilitySQL).
const MaxDefaultLiabilityMonths = 60

// liabilitySQL computes the report on $1 (asOf) over the entries of %s (liabilityEntriesSQL or
// liabilityEntriesOwnersSQL). Raw SQL: the per-entry month arithmetic and the NUMERIC sums are
// the database's (2,000,000 entries never travel), and it runs in the request's transaction, so
// row-level security narrows it to the contracts and entries the credential may see.
//
//   - e: the liable entries still within a period: booked on or before $1 and after $1 minus
//     the longest period any contract can have (the company's longest rule, else the longest
//     default) and a month. An entry booked earlier has no month remaining (booked_on + L
//     months <= $1), adds nothing to open and, when the contract has an open liability, nothing
//     to liabilityEndsOn either (an entry with months remaining ends later): leaving it out
//     changes no row, and the bound is an index condition (years of history are never read).
//   - m: each entry with its contract (one join by the contract's key; the contract's columns
//     ride along to the result, so nothing joins back).
//   - l: the months of each (insurer, contract type) pair the entries' contracts have, once per
//     pair (a few hundred) rather than once per contract or entry, as one jsonb object that each
//     entry reads by its pair's key (a join to a CTE would be planned on a guessed row count):
//     the rule lookup ordered by specificity (an insurer's before none, a type before none, the
//     exact code before its group: false sorts first), else the default.
//   - elapsed: whole months from booked_on to $1, the largest m with booked_on + m months
//     <= $1 (PostgreSQL's month addition keeps the day or takes the month's last, so 31
//     January + 1 month is 28/29 February, as liabilityEndsOn is counted).
//   - open: sum(amount × remaining) / months, exact until the one rounding (round() on
//     numeric rounds half away from zero); months 0 (a rule "not liable") gives 0.
//   - liabilityEndsOn: the last end of a period of a positive entry (a cancellation's own
//     period ends later but only lowers the liability).
//
// Only contracts with an open liability above 0 are rows; largest first, then by contract id.
// total (on every row) is the sum of the rows' rounded amounts, so the rows add up to it.
const liabilitySQL = `WITH e AS (%s
), m AS (
	SELECT c.id, c.contact_id, c.insurer_id, c.policy_number, c.type, e.amount, e.booked_on
	FROM e JOIN contracts c ON c.id = e.contract_id
), l AS (
	SELECT jsonb_object_agg(COALESCE(c.insurer_id::text, '') || '/' || c.type,
		COALESCE((SELECT r.months::int FROM commission_liability_rules r
			WHERE (r.insurer_id IS NULL OR r.insurer_id = c.insurer_id)
			  AND r.contract_type IN ('', c.type, substr(c.type, 1, 2) || '0')
			ORDER BY r.insurer_id IS NULL, r.contract_type = '', r.contract_type <> c.type
			LIMIT 1), ` + liabilityDefaultSQL + `)) AS months
	FROM (SELECT DISTINCT insurer_id, type FROM m) c
), mm AS (
	SELECT m.id, m.contact_id, m.insurer_id, m.policy_number, m.amount, m.booked_on,
		((SELECT l.months FROM l) ->> (COALESCE(m.insurer_id::text, '') || '/' || m.type))::int AS months,
		((extract(year FROM $1::date) - extract(year FROM m.booked_on)) * 12
			+ extract(month FROM $1::date) - extract(month FROM m.booked_on))::int AS m0
	FROM m
), r AS (
	SELECT id, contact_id, insurer_id, policy_number, amount, booked_on, months,
		GREATEST(months - CASE WHEN (booked_on + make_interval(months => m0))::date > $1::date THEN m0 - 1 ELSE m0 END, 0) AS remaining
	FROM mm
), o AS (
	SELECT id, contact_id, insurer_id, policy_number,
		CASE WHEN max(months) = 0 THEN 0
			ELSE round(sum(amount * remaining) / max(months), 2) END AS open,
		max((booked_on + make_interval(months => months))::date) FILTER (WHERE amount > 0) AS ends_on
	FROM r GROUP BY id, contact_id, insurer_id, policy_number
)
SELECT o.id, o.contact_id, COALESCE(i.name, ''), o.policy_number, o.open, to_char(o.ends_on, 'YYYY-MM-DD'),
	sum(o.open) OVER () AS total
FROM o LEFT JOIN insurers i ON i.id = o.insurer_id
WHERE o.open > 0
ORDER BY o.open DESC, o.id`

// liabilityBoundSQL is the earliest booking date (exclusive) an entry with months remaining
// on $1 can have (see liabilitySQL, e): $1 minus the company's longest rule or the longest
// default ($2, MaxDefaultLiabilityMonths), and a month. Read before the report and passed to it
// as a value: a bound computed inside the statement gets a default selectivity, and the plan
// read the entries by the contract index instead of the date.
const liabilityBoundSQL = `SELECT ($1::date - make_interval(months => GREATEST(max(r.months)::int, $2::int) + 1))::date
	FROM commission_liability_rules r`

// liabilityEntriesSQL is the liable entries of a credential that sees all, booked after $2.
const liabilityEntriesSQL = `
	SELECT e.contract_id, e.amount, e.booked_on
	FROM commission_entries e
	WHERE e.contract_id IS NOT NULL
	  AND e.type IN ('commission', 'cancellation', 'correction')
	  AND e.booked_on <= $1::date AND e.booked_on > $2::date`

// liabilityEntriesOwnersSQL is the liable entries of a restricted credential booked after $2,
// read from the contacts of the owners $4 (tenancy.VisibleOwners) of company $3, as
// commissionEntriesOwnersSQL does (an entry with a contract has its contract's contact). The
// policies still apply.
const liabilityEntriesOwnersSQL = `
	SELECT e.contract_id, e.amount, e.booked_on
	FROM contacts o JOIN commission_entries e ON e.company_id = o.company_id AND e.contact_id = o.id
	WHERE o.company_id = $3::uuid AND o.owner_id = ANY($4::uuid[])
	  AND e.type IN ('commission', 'cancellation', 'correction')
	  AND e.booked_on <= $1::date AND e.booked_on > $2::date`

// liabilityBound reads liabilityBoundSQL on asOf.
func liabilityBound(ctx context.Context, asOf time.Time) (time.Time, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, liabilityBoundSQL, asOf.Format(time.DateOnly), MaxDefaultLiabilityMonths)
	if err != nil {
		return time.Time{}, fmt.Errorf("cancellation liability bound: %w", err)
	}
	defer rows.Close()
	var bound time.Time
	if !rows.Next() {
		return time.Time{}, fmt.Errorf("cancellation liability bound: no row")
	}
	if err := rows.Scan(&bound); err != nil {
		return time.Time{}, fmt.Errorf("cancellation liability bound: %w", err)
	}
	return bound, rows.Close()
}

// LiabilityReport computes GET /reports/cancellation-liability on asOf for the credential of
// ctx.
func (s *Service) LiabilityReport(ctx context.Context, asOf time.Time) (LiabilityReport, error) {
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return LiabilityReport{}, err
	}
	bound, err := liabilityBound(ctx, asOf)
	if err != nil {
		return LiabilityReport{}, err
	}
	sqlText, args := fmt.Sprintf(liabilitySQL, liabilityEntriesSQL), []any{asOf.Format(time.DateOnly), bound.Format(time.DateOnly)}
	if owners, ok := tenancy.VisibleOwners(ctx); ok {
		company, ok := tenancy.CompanyID(ctx)
		if !ok {
			return LiabilityReport{}, fmt.Errorf("cancellation liability report: no company in context")
		}
		sqlText = fmt.Sprintf(liabilitySQL, liabilityEntriesOwnersSQL)
		args = append(args, company, uuidArray(owners))
	}
	rows, err := tenancy.Client(ctx).QueryContext(ctx, sqlText, args...)
	if err != nil {
		return LiabilityReport{}, fmt.Errorf("cancellation liability report: %w", err)
	}
	defer rows.Close()
	out := LiabilityReport{Data: []LiabilityRow{}, Total: schematype.MustMoney("0")}
	for rows.Next() {
		var (
			r      LiabilityRow
			policy string
		)
		if err := rows.Scan(&r.ContractID, &r.ContactID, &r.InsurerName, &policy, &r.OpenLiability, &r.LiabilityEndsOn, &out.Total); err != nil {
			return LiabilityReport{}, fmt.Errorf("cancellation liability report: %w", err)
		}
		if policy != "" {
			r.PolicyNumber = &policy
		}
		out.Data = append(out.Data, r)
	}
	if err := rows.Err(); err != nil {
		return LiabilityReport{}, fmt.Errorf("cancellation liability report: %w", err)
	}
	return out, nil
}
