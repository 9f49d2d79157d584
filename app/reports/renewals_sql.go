package reports

import (
	"fmt"
	"strings"
	"time"
)

// The renewals report's statement (docs/decisions/reports.md "Renewals at a million"). The
// first one (now the oracle of test/reports TestReports_RenewalsOracle) computed the due day
// of every contract of the company and sorted them for one page: seconds at a million
// contracts. renewalsPageSQL reads a page from the indexes of migration 20261212100100
// instead, each in an order that is already the report's (due day, id):
//
//   - tenant_contracts_renewal_day (company, month*100+day of the main renewal date, id): the
//     first anniversary on or after `from` of a date stored before it is less than a year
//     after `from`, so these lie in at most two calendar years, and within one year a
//     month-day range read in (month-day, id) order is in (due day, id) order. Except 28 and 29
//     February, which are one day in a common year: that segment is sorted by (due day, id)
//     itself (a few thousand rows at a million contracts);
//   - tenant_contracts_end_date (company, end date, id): end dates in the window;
//   - tenant_contracts_renewal_date (company, main renewal date, id): past a year, the dates
//     stored after from, each its own first anniversary.
//
// Each branch reads at most one page past the cursor; the page is the first rows of their
// union. A contract's due day is the earlier of its end date in the window and its
// anniversary (the oracle's rule, unchanged): exactly one branch yields it, the anniversary
// branch when the anniversary comes strictly before the end date (or the contract has no end
// date, or ends after the window), the end-date branch otherwise. Each anniversary branch
// recomputes the first anniversary as the oracle does and keeps the contract only when it
// falls in the branch's year, so a window longer than a year lists a contract once.

// renewalDay is the month-day of the main renewal date as tenant_contracts_renewal_day
// indexes it (contract_renewal_day, LEAKPROOF, so that its ranges are index conditions under
// the policies): the statement must spell the expression exactly so.
const renewalDay = `contract_renewal_day(c.main_renewal_date)`

// renewalFirstAnniversary is the lateral r with r.d the first anniversary of the main renewal
// date on or after $1 ($4 is $1's year), NULL without a main renewal date: the oracle's.
const renewalFirstAnniversary = `CROSS JOIN LATERAL (
		SELECT CASE WHEN a.d >= $1::date THEN a.d
			ELSE (c.main_renewal_date + make_interval(years => a.n + 1))::date END AS d
		FROM (SELECT n, (c.main_renewal_date + make_interval(years => n))::date AS d
			FROM (SELECT GREATEST(0, $4::int - extract(year FROM c.main_renewal_date)::int) AS n) y) a
	) r`

// renewalsPageSQL is the statement and its arguments for limit rows of the window from..to
// after the cursor (afterDay, afterID; afterDay nil on the first page): $1 from, $2 to, $3 the
// limit, $4 from's year, $5 and $6 the cursor's day and id when there is one.
//
// The anniversary segments come in due order, so segment i reads only as many rows as the
// segments before it left to fill a page (its LIMIT; 0 reads nothing): the later segments
// are usually not read at all, which matters for an agent, whose scan probes the contact of
// every row it passes. In a common year 28 and 29 February are one segment of one due day,
// sorted by (due, id) itself.
func renewalsPageSQL(from, to time.Time, limit int, afterDay *time.Time, afterID any) (string, []any) {
	args := []any{from.Format(time.DateOnly), to.Format(time.DateOnly), limit, from.Year()}
	cursor, endCursor, storedCursor := "", "", ""
	if afterDay != nil {
		args = append(args, afterDay.Format(time.DateOnly), afterID)
		cursor = "\n\t\tAND (r.d, c.id) > ($5::date, $6::uuid)"
		endCursor = "\n\t\tAND (c.end_date, c.id) > ($5::date, $6::uuid)"
		storedCursor = "\n\t\tAND (c.main_renewal_date, c.id) > ($5::date, $6::uuid)"
	}
	ctes := []string{fmt.Sprintf(`e AS (SELECT c.id, c.end_date AS due FROM contracts c
	%s
	WHERE c.status NOT IN ('offer', 'application') AND c.end_date IS NOT NULL
		AND c.end_date BETWEEN $1::date AND $2::date
		AND (c.main_renewal_date IS NULL OR r.d >= c.end_date)%s
	ORDER BY c.end_date, c.id LIMIT $3)`, renewalFirstAnniversary, endCursor)}
	union := []string{"SELECT id, due FROM e"}
	left := "$3"
	segments, last := renewalSegments(from, to, afterDay)
	for i, g := range segments {
		order := renewalDay + ", c.id"
		if g.feb28 {
			order = "r.d, c.id"
		}
		ctes = append(ctes, fmt.Sprintf(`a%d AS MATERIALIZED (SELECT c.id, r.d AS due FROM contracts c
	%s
	WHERE c.status NOT IN ('offer', 'application') AND c.main_renewal_date IS NOT NULL
		AND %s BETWEEN %d AND %d
		AND r.d BETWEEN '%04d-01-01'::date AND '%04d-12-31'::date AND r.d <= '%s'::date
		AND (c.end_date IS NULL OR r.d < c.end_date)%s
	ORDER BY %s LIMIT %s)`, i, renewalFirstAnniversary, renewalDay, g.lo, g.hi, g.year, g.year, last.Format(time.DateOnly),
			cursor, order, left))
		union = append(union, fmt.Sprintf("SELECT id, due FROM a%d", i))
		left += fmt.Sprintf(" - (SELECT count(*) FROM a%d)", i)
	}
	if to.After(last) {
		// A window longer than a year: past the segments only main renewal dates stored
		// after from can fall, each its own first anniversary, in (date, id) order.
		ctes = append(ctes, fmt.Sprintf(`l AS MATERIALIZED (SELECT c.id, r.d AS due FROM contracts c
	%s
	WHERE c.status NOT IN ('offer', 'application') AND c.main_renewal_date IS NOT NULL
		AND c.main_renewal_date > '%s'::date AND c.main_renewal_date <= $2::date
		AND r.d = c.main_renewal_date AND (c.end_date IS NULL OR r.d < c.end_date)%s
	ORDER BY c.main_renewal_date, c.id LIMIT %s)`, renewalFirstAnniversary, last.Format(time.DateOnly), storedCursor, left))
		union = append(union, "SELECT id, due FROM l")
	}
	return `WITH ` + strings.Join(ctes, ",\n") + `
SELECT id, due::text FROM (` + strings.Join(union, " UNION ALL ") + `) u
ORDER BY due, id
LIMIT $3`, args
}

// renewalSegment is a range lo..hi of month-days of year whose anniversaries are in (due, id)
// order when read by (month-day, id); feb28 marks 28..29 February of a common year, one due
// day.
type renewalSegment struct {
	year, lo, hi int
	feb28        bool
}

// renewalSegments are the month-day ranges where the first anniversaries on or after from in
// from..last lie, past the cursor day after (nil: all), in due order; last is to, or from + 1
// year when to is later. An anniversary of a date stored on or before from is less than a year
// after it (Go moves 29 February to 1 March: last may be one day late, which is harmless as
// long as the segments stop at last and l starts after it), so the segments span at most two
// years; a date stored after from is its own first anniversary, and past last only those are
// left (renewalsPageSQL's l).
func renewalSegments(from, to time.Time, after *time.Time) ([]renewalSegment, time.Time) {
	last := from.AddDate(1, 0, 0)
	if to.Before(last) {
		last = to
	}
	var out []renewalSegment
	for y := from.Year(); y <= last.Year(); y++ {
		lo, hi := 101, 1231
		if y == from.Year() {
			lo = monthDay(from)
		}
		if y == last.Year() {
			hi = monthDay(last)
		}
		if after != nil {
			if after.Year() > y {
				continue
			}
			if after.Year() == y {
				lo = max(lo, monthDay(*after))
			}
		}
		if hi == 228 {
			hi = 229 // 29 February is due on the 28th in a common year
		}
		leap := time.Date(y, time.February, 29, 0, 0, 0, 0, time.UTC).Day() == 29
		for _, seg := range [][2]int{{101, 227}, {228, 229}, {301, 1231}} {
			if slo, shi := max(lo, seg[0]), min(hi, seg[1]); slo <= shi {
				out = append(out, renewalSegment{year: y, lo: slo, hi: shi, feb28: seg[0] == 228 && !leap})
			}
		}
	}
	return out, last
}

// monthDay is d's month*100+day, renewalDay's value for d.
func monthDay(d time.Time) int { return int(d.Month())*100 + d.Day() }
