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

// liabilitySQL computes the report on $1 (asOf). Raw SQL: the per-entry month arithmetic and
// the NUMERIC sums are the database's (2,000,000 entries never travel), and it runs in the
// request's transaction, so row-level security narrows it to the contracts and entries the
// credential may see.
//
//   - months: the rule lookup ordered by specificity (an insurer's before none, a type before
//     none, the exact code before its group: false sorts first), else the default.
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
const liabilitySQL = `WITH e AS (
	SELECT e.contract_id, e.amount, e.booked_on
	FROM commission_entries e
	WHERE e.contract_id IS NOT NULL
	  AND e.type IN ('commission', 'cancellation', 'correction')
	  AND e.booked_on <= $1::date
), k AS (
	SELECT c.id, c.contact_id, c.insurer_id, c.policy_number,
		COALESCE((SELECT r.months::int FROM commission_liability_rules r
			WHERE (r.insurer_id IS NULL OR r.insurer_id = c.insurer_id)
			  AND r.contract_type IN ('', c.type, substr(c.type, 1, 2) || '0')
			ORDER BY r.insurer_id IS NULL, r.contract_type = '', r.contract_type <> c.type
			LIMIT 1), ` + liabilityDefaultSQL + `) AS months
	FROM contracts c
	WHERE c.id IN (SELECT contract_id FROM e)
), m AS (
	SELECT e.contract_id, e.amount, e.booked_on, k.months,
		((extract(year FROM $1::date) - extract(year FROM e.booked_on)) * 12
			+ extract(month FROM $1::date) - extract(month FROM e.booked_on))::int AS m0
	FROM e JOIN k ON k.id = e.contract_id
), r AS (
	SELECT contract_id, amount, booked_on, months,
		GREATEST(months - CASE WHEN (booked_on + make_interval(months => m0))::date > $1::date THEN m0 - 1 ELSE m0 END, 0) AS remaining
	FROM m
), o AS (
	SELECT contract_id,
		CASE WHEN max(months) = 0 THEN 0
			ELSE round(sum(amount * remaining) / max(months), 2) END AS open,
		max((booked_on + make_interval(months => months))::date) FILTER (WHERE amount > 0) AS ends_on
	FROM r GROUP BY contract_id
)
SELECT k.id, k.contact_id, COALESCE(i.name, ''), k.policy_number, o.open, to_char(o.ends_on, 'YYYY-MM-DD'),
	sum(o.open) OVER () AS total
FROM o JOIN k ON k.id = o.contract_id
LEFT JOIN insurers i ON i.id = k.insurer_id
WHERE o.open > 0
ORDER BY o.open DESC, k.id`

// LiabilityReport computes GET /reports/cancellation-liability on asOf for the credential of
// ctx.
func (s *Service) LiabilityReport(ctx context.Context, asOf time.Time) (LiabilityReport, error) {
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return LiabilityReport{}, err
	}
	rows, err := tenancy.Client(ctx).QueryContext(ctx, liabilitySQL, asOf.Format(time.DateOnly))
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
