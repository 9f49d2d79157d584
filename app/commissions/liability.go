package commissions

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	// c.JSON's bytes and content type, encoded without reflection (LiabilityReport.AppendJSON).
	c.Response().SetBodyRaw(out.AppendJSON(make([]byte, 0, 64+240*len(out.Data))))
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}

// MaxDefaultLiabilityMonths is the longest period DefaultLiabilityMonths gives (the report
// reads no entry booked longer ago than the longest period, liabilitySQL).
const MaxDefaultLiabilityMonths = 60

// liabilitySQL computes the report on $1 (asOf) over the entries of %[1]s (liabilityEntriesSQL
// or liabilityEntriesOwnersSQL), booked after the bound $2; %[2]s, %[3]s and %[4]s are the
// per-period sums, the test that one of them is positive and the choice of the contract's one
// (liabilitySums: one of each for every period a contract can have). Raw SQL: the per-entry
// month arithmetic and the NUMERIC sums are the database's (2,000,000 entries never travel),
// and it runs in the request's transaction, so row-level security narrows it to the contracts
// and entries the credential may see.
//
//   - e: the liable entries still within a period: booked on or before $1 and after $1 minus
//     the longest period any contract can have (the company's longest rule, else the longest
//     default) and a month. An entry booked earlier has no month remaining (booked_on + L
//     months <= $1), adds nothing to open and, when the contract has an open liability, nothing
//     to liabilityEndsOn either (an entry with months remaining ends later): leaving it out
//     changes no row, and the bound is an index condition (years of history are never read).
//   - d: elapsed, the whole months from a booking date to $1, once per day of the window (a
//     few thousand days, not a million entries), read by each entry as d[booked_on - $2]: the
//     largest m with booked_on + m months <= $1 (PostgreSQL's month addition keeps the day or
//     takes the month's last, so 31 January + 1 month is 28/29 February, as liabilityEndsOn is
//     counted).
//   - a: per contract, before its contract is read: for every period L a contract can have,
//     sum(amount × max(L − elapsed, 0)), exact in NUMERIC; and the last booking date of a
//     positive entry. A contract whose sums are all <= 0 has no open liability whatever its
//     period and is dropped here (its contract is never read). The entries come in contact
//     order from the index, so grouping by (contact, contract) sorts each contact's few
//     entries only.
//   - m: the contract of each remaining sum (one join by the contract's key) and its period:
//     the most specific liability rule of the company (the rules as one jsonb object by
//     "insurer/type", looked up as insurer and type, insurer and the type's group, insurer,
//     type, group, company-wide: the order of the rule lookup) else the default. With no rules
//     (the common case) the CASE is the default alone.
//   - open: the contract's period's sum / L, rounded once (round() on numeric rounds half away
//     from zero); a period without a sum (a rule of 0 months, "not liable") gives 0.
//   - liabilityEndsOn: the last end of a period of a positive entry, the last positive booking
//     date + L months (month addition never reverses two dates' order; a cancellation's own
//     period ends later but only lowers the liability).
//
// Only contracts with an open liability above 0 are rows; largest first, then by contract id.
// The total is the sum of the rows' rounded amounts, added up in Go as the rows are read
// (liabilityRows; exact decimals): a window sum here kept all 250,915 rows of the admin's
// report in a tuplestore (~250 ms) and sent the total with each.
const liabilitySQL = `WITH rl AS (
	SELECT COALESCE(jsonb_object_agg(COALESCE(r.insurer_id::text, '') || '/' || r.contract_type, r.months), '{}') AS rules
	FROM commission_liability_rules r
), d AS (
	SELECT array_agg(
		((extract(year FROM $1::date) - extract(year FROM b)) * 12 + extract(month FROM $1::date) - extract(month FROM b))::int
		- CASE WHEN (b + make_interval(months => ((extract(year FROM $1::date) - extract(year FROM b)) * 12
			+ extract(month FROM $1::date) - extract(month FROM b))::int))::date > $1::date THEN 1 ELSE 0 END
		ORDER BY b) AS elapsed
	FROM (SELECT $2::date + i AS b FROM generate_series(1, $1::date - $2::date) i) b
), e AS (%[1]s
), a AS (
	SELECT e.contract_id, max(e.booked_on) FILTER (WHERE e.amount > 0) AS last_positive%[2]s
	FROM (SELECT e.contact_id, e.contract_id, e.amount, e.booked_on,
		(SELECT d.elapsed FROM d)[e.booked_on - $2::date] AS elapsed FROM e) e
	GROUP BY e.contact_id, e.contract_id
	HAVING %[3]s
), m AS (
	SELECT c.id, c.contact_id, c.insurer_id, c.policy_number, a.*,
		CASE WHEN rl.rules = '{}' THEN ` + liabilityDefaultSQL + ` ELSE COALESCE(
			(rl.rules ->> (COALESCE(c.insurer_id::text, '') || '/' || c.type))::int,
			(rl.rules ->> (COALESCE(c.insurer_id::text, '') || '/' || substr(c.type, 1, 2) || '0'))::int,
			(rl.rules ->> (COALESCE(c.insurer_id::text, '') || '/'))::int,
			(rl.rules ->> ('/' || c.type))::int,
			(rl.rules ->> ('/' || substr(c.type, 1, 2) || '0'))::int,
			(rl.rules ->> '/')::int,
			` + liabilityDefaultSQL + `) END AS months
	FROM a JOIN contracts c ON c.id = a.contract_id CROSS JOIN rl
), o AS (
	SELECT id, contact_id, insurer_id, policy_number,
		CASE months%[4]s ELSE 0 END AS open,
		(last_positive + make_interval(months => months))::date AS ends_on
	FROM m
)
SELECT o.id, o.contact_id, COALESCE(i.name, ''), o.policy_number, o.open, to_char(o.ends_on, 'YYYY-MM-DD')
FROM o LEFT JOIN insurers i ON i.id = o.insurer_id
WHERE o.open > 0
ORDER BY o.open DESC, o.id`

// liabilitySums fills liabilitySQL's sums for the periods months (each > 0, no two equal): a
// column s<L> per period, the test that one is positive, and the CASE arms that take the
// contract's period's sum. The months are integers of the rules' column, never text of a
// request.
func liabilitySums(months []int) (sums, positive, arms string) {
	var s, p, c strings.Builder
	for i, l := range months {
		fmt.Fprintf(&s, ",\n\t\tsum(e.amount * GREATEST(%d - e.elapsed, 0)) AS s%d", l, l)
		if i > 0 {
			p.WriteString(" OR ")
		}
		fmt.Fprintf(&p, "sum(e.amount * GREATEST(%d - e.elapsed, 0)) > 0", l)
		fmt.Fprintf(&c, " WHEN %d THEN round(s%d / %d, 2)", l, l, l)
	}
	return s.String(), p.String(), c.String()
}

// liabilityBoundSQL is the earliest booking date (exclusive) an entry with months remaining
// on $1 can have (see liabilitySQL, e): $1 minus the company's longest rule or the longest
// default ($2, MaxDefaultLiabilityMonths), and a month; and the rules' periods (comma-separated).
// Read before the report and passed to it as values: a bound computed inside the statement gets
// a default selectivity, and the plan read the entries by the contract index instead of the date.
const liabilityBoundSQL = `SELECT ($1::date - make_interval(months => GREATEST(max(r.months)::int, $2::int) + 1))::date,
		COALESCE(string_agg(DISTINCT r.months::text, ','), '')
	FROM commission_liability_rules r`

// liabilityEntriesSQL is the liable entries of a credential that sees all, booked after $2.
// Matched entries are those with a contact (tenant_commission_entries_matched: contract and
// contact are set together): contact_id IS NOT NULL is an index condition of
// tenant_commission_entries_report_contact, which holds every column read, so the window is
// an index-only scan in contact order. With contract_id IS NOT NULL the planner read
// commissionentry_company_id_booked_on_id and fetched every entry of the window from the heap
// (the policies' per-row cost hides the difference from it): 5-6 s against 0.6-0.9 s.
const liabilityEntriesSQL = `
	SELECT e.contact_id, e.contract_id, e.amount, e.booked_on
	FROM commission_entries e
	WHERE e.contact_id IS NOT NULL
	  AND e.type IN ('commission', 'cancellation', 'correction')
	  AND e.booked_on <= $1::date AND e.booked_on > $2::date`

// liabilityEntriesOwnersSQL is the liable entries of a restricted credential booked after $2,
// read from the contacts of the owners $4 (tenancy.VisibleOwners) of company $3, as
// commissionEntriesOwnersSQL does (an entry with a contract has its contract's contact). The
// policies still apply.
const liabilityEntriesOwnersSQL = `
	SELECT e.contact_id, e.contract_id, e.amount, e.booked_on
	FROM contacts o JOIN commission_entries e ON e.company_id = o.company_id AND e.contact_id = o.id
	WHERE o.company_id = $3::uuid AND o.owner_id = ANY($4::uuid[])
	  AND e.type IN ('commission', 'cancellation', 'correction')
	  AND e.booked_on <= $1::date AND e.booked_on > $2::date`

// liabilityBound reads liabilityBoundSQL on asOf: the bound and the periods a contract can
// have (the default of every Sparte code and every rule's period but 0, ascending, once each).
func liabilityBound(ctx context.Context, asOf time.Time) (time.Time, []int, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, liabilityBoundSQL, asOf.Format(time.DateOnly), MaxDefaultLiabilityMonths)
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("cancellation liability bound: %w", err)
	}
	defer rows.Close()
	var (
		bound time.Time
		rules string
	)
	if !rows.Next() {
		return time.Time{}, nil, fmt.Errorf("cancellation liability bound: no row")
	}
	if err := rows.Scan(&bound, &rules); err != nil {
		return time.Time{}, nil, fmt.Errorf("cancellation liability bound: %w", err)
	}
	var months []int
	for i := range 1000 {
		months = append(months, DefaultLiabilityMonths(fmt.Sprintf("%03d", i)))
	}
	for _, s := range strings.Split(rules, ",") {
		if s == "" {
			continue
		}
		l, err := strconv.Atoi(s)
		if err != nil {
			return time.Time{}, nil, fmt.Errorf("cancellation liability bound: months %q: %w", s, err)
		}
		if l > 0 {
			months = append(months, l)
		}
	}
	slices.Sort(months)
	return bound, slices.Compact(months), rows.Close()
}

// LiabilityReport computes GET /reports/cancellation-liability on asOf for the credential of
// ctx.
func (s *Service) LiabilityReport(ctx context.Context, asOf time.Time) (LiabilityReport, error) {
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return LiabilityReport{}, err
	}
	bound, months, err := liabilityBound(ctx, asOf)
	if err != nil {
		return LiabilityReport{}, err
	}
	sums, positive, arms := liabilitySums(months)
	entries, args := liabilityEntriesSQL, []any{asOf.Format(time.DateOnly), bound.Format(time.DateOnly)}
	if owners, ok := tenancy.VisibleOwners(ctx); ok {
		company, ok := tenancy.CompanyID(ctx)
		if !ok {
			return LiabilityReport{}, fmt.Errorf("cancellation liability report: no company in context")
		}
		entries = liabilityEntriesOwnersSQL
		args = append(args, company, uuidArray(owners))
	} else if v, _ := tenancy.VisibilityOf(ctx); v == tenancy.VisibilityAll {
		if err := liabilityHashJoin(ctx); err != nil {
			return LiabilityReport{}, err
		}
	}
	sqlText := fmt.Sprintf(liabilitySQL, entries, sums, positive, arms)
	// Planned for its values, each time (tenancy.CustomPlans): a generic plan, which PostgreSQL may
	// keep after five runs, is built without the window's and the owners' values.
	rows, err := tenancy.Client(ctx).QueryContext(tenancy.CustomPlans(ctx), sqlText, args...)
	if err != nil {
		return LiabilityReport{}, fmt.Errorf("cancellation liability report: %w", err)
	}
	defer rows.Close()
	return liabilityRows(rows)
}

// liabilityRows reads liabilitySQL's rows into the report; the total is the sum of the rows'
// amounts.
func liabilityRows(rows *sql.Rows) (LiabilityReport, error) {
	out := LiabilityReport{Data: []LiabilityRow{}, Total: schematype.MustMoney("0")}
	for rows.Next() {
		var (
			r      LiabilityRow
			policy string
		)
		if err := rows.Scan(&r.ContractID, &r.ContactID, &r.InsurerName, &policy, &r.OpenLiability, &r.LiabilityEndsOn); err != nil {
			return LiabilityReport{}, fmt.Errorf("cancellation liability report: %w", err)
		}
		out.Total = out.Total.Add(r.OpenLiability)
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

// liabilityHashJoin has the rest of the transaction join without nested loops: for a credential
// that sees all, the report's contracts (~510,000 of a million at 2,000,000 entries) are read by
// one scan of the contracts into a hash rather than one primary-key probe each. The planner
// never chooses that itself: the visibility policy's subplan is costed on every row a scan
// reads (it cannot know app_visible_all() is true), so a million-row scan looks ten times
// dearer than half a million probes; measured, the probes took 2-4 s, the scan and hash ~1.2 s.
// Transaction-local (tenancy.PlannerSetting); the report is the transaction's last statement.
// A restricted credential keeps nested loops (its plan drives from its owners' contacts).
func liabilityHashJoin(ctx context.Context) error {
	if err := tenancy.PlannerSetting(ctx, "enable_nestloop", "off"); err != nil {
		return fmt.Errorf("cancellation liability report: %w", err)
	}
	return nil
}
