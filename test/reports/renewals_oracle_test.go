package reports

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// renewalsOracleSQL is the renewals report's first statement (until issue 24's indexes): the
// due day of every contract, computed as the rule says, sorted. It reads all of the company's
// contracts, so the report no longer runs it; it is the oracle the report's statement
// (app/reports renewalsPageSQL, one page from two indexes) must agree with. $1 from, $2 to,
// $3 from's year.
const renewalsOracleSQL = `SELECT id, due::text FROM (
	SELECT c.id, LEAST(
		CASE WHEN c.end_date BETWEEN $1::date AND $2::date THEN c.end_date END,
		CASE WHEN r.d <= $2::date AND (c.end_date IS NULL OR r.d <= c.end_date) THEN r.d END) AS due
	FROM contracts c
	CROSS JOIN LATERAL (
		SELECT CASE WHEN a.d >= $1::date THEN a.d
			ELSE (c.main_renewal_date + make_interval(years => a.n + 1))::date END AS d
		FROM (SELECT n, (c.main_renewal_date + make_interval(years => n))::date AS d
			FROM (SELECT GREATEST(0, $3::int - extract(year FROM c.main_renewal_date)::int) AS n) y) a
	) r
	WHERE c.status NOT IN ('offer', 'application')
) s
WHERE due IS NOT NULL
ORDER BY due, id`

// TestReports_RenewalsOracle walks the renewals report in pages of random sizes over random
// contracts and windows and compares it, row for row, with the oracle, for the company key and
// for an agent. Catches, in the indexed statement: a contract listed twice (both branches, or
// two anniversary years of a window longer than a year) or never; 29 February of a common year
// out of (due, id) order or lost (window ending on 28 February); an anniversary before the
// stored date, after the end date or on the end date counted apart from it; a window across a
// year end missing its second year; a cursor that skips or repeats rows at a segment's edge.
func TestReports_RenewalsOracle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	keyA := co.UserKey(t, agent)
	ins := insurerID(t, env, co.Secret, "5501")
	contacts := []string{
		mustContact(t, env, co, "private", "Agent", &agent.ID),
		mustContact(t, env, co, "private", "Other", nil),
		mustContact(t, env, co, "business", "Agent GmbH", &agent.ID),
	}
	rng := rand.New(rand.NewPCG(24, 1))
	day := func(from, to time.Time) time.Time {
		return from.AddDate(0, 0, rng.IntN(int(to.Sub(from).Hours()/24)+1))
	}
	lo, hi := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2031, 12, 31, 0, 0, 0, 0, time.UTC)
	// Dates near the edges the statement cares about, often: 28 and 29 February, 1 March,
	// the year's first and last days.
	edge := func() time.Time {
		y := 2018 + rng.IntN(14)
		switch rng.IntN(6) {
		case 0:
			if y%4 != 0 {
				y -= y % 4 // a leap year: 29 February exists
			}
			return time.Date(y, 2, 29, 0, 0, 0, 0, time.UTC)
		case 1:
			return time.Date(y, 2, 28, 0, 0, 0, 0, time.UTC)
		case 2:
			return time.Date(y, 3, 1, 0, 0, 0, 0, time.UTC)
		case 3:
			return time.Date(y, 12, 31, 0, 0, 0, 0, time.UTC)
		case 4:
			return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return day(lo, hi)
	}
	date := func(p float64) any { // NULL with probability 1-p
		if rng.Float64() >= p {
			return nil
		}
		if rng.IntN(2) == 0 {
			return edge().Format(time.DateOnly)
		}
		return day(lo, hi).Format(time.DateOnly)
	}
	statuses := []string{"active", "active", "active", "suspended", "cancelled", "ended", "offer", "application"}
	var (
		values []string
		args   []any
	)
	for i := range 400 {
		n := len(args)
		values = append(values, fmt.Sprintf("(gen_random_uuid(), now(), now(), $%d, $%d, $%d, '041', $%d, $%d::date, $%d::date, $%d)",
			n+1, n+2, n+3, n+4, n+5, n+6, n+7))
		args = append(args, contacts[rng.IntN(len(contacts))], ins, fmt.Sprintf("RO-%d", i),
			statuses[rng.IntN(len(statuses))], date(0.5), date(0.85), co.ID)
	}
	ctx := context.Background()
	if err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO contracts (id, created_at, updated_at, contact_id, insurer_id,
			policy_number, type, status, end_date, main_renewal_date, company_id) VALUES `+strings.Join(values, ", "), args...)
		return err
	}); err != nil {
		t.Fatal(err)
	}

	oracle := func(from, to time.Time, user *uuid.UUID) []string {
		var out []string
		if err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
			if user != nil {
				if _, err := tx.ExecContext(ctx, `SELECT set_config('app.user_id', $1, true),
					set_config('app.visibility', 'own_and_delegated', true)`, user.String()); err != nil {
					return err
				}
			}
			rows, err := tx.QueryContext(ctx, renewalsOracleSQL, from.Format(time.DateOnly), to.Format(time.DateOnly), from.Year())
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, due string
				if err := rows.Scan(&id, &due); err != nil {
					return err
				}
				out = append(out, id)
			}
			return rows.Err()
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	id := func(c struct {
		ID string `json:"id"`
	}) string {
		return c.ID
	}
	windows := [][2]time.Time{
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 31, 0, 0, 0, 0, time.UTC)},
		{time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 2, 28, 0, 0, 0, 0, time.UTC)}, // ends on 28 Feb, common year
		{time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2029, 3, 1, 0, 0, 0, 0, time.UTC)}, // from 29 Feb, over a year
		{time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC)},
		{time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)}, // over two years
		// over a year from 28 Feb of a common year: 29 Feb of the next is both a late anniversary
		// and a stored date after from
		{time.Date(2019, 2, 28, 0, 0, 0, 0, time.UTC), time.Date(2020, 4, 3, 0, 0, 0, 0, time.UTC)},
	}
	for range 25 {
		from := edge()
		if rng.IntN(2) == 0 {
			from = day(lo, hi)
		}
		to := from.AddDate(0, 0, []int{0, 1, 30, 58, 90, 364, 365, 366, 400, 800}[rng.IntN(10)])
		windows = append(windows, [2]time.Time{from, to})
	}
	for _, w := range windows {
		path := "/reports/renewals?from=" + w[0].Format(time.DateOnly) + "&to=" + w[1].Format(time.DateOnly)
		limit := 1 + rng.IntN(12)
		if w[1].Sub(w[0]) > 90*24*time.Hour {
			limit += 5 // walk stops at 100 pages
		}
		if got, want := walk(t, env, co.Secret, path, limit, id), oracle(w[0], w[1], nil); !slices.Equal(got, want) {
			t.Errorf("%s limit %d:\n got %v\nwant %v", path, limit, got, want)
		}
		if got, want := walk(t, env, keyA, path, limit, id), oracle(w[0], w[1], &agent.ID); !slices.Equal(got, want) {
			t.Errorf("agent %s limit %d:\n got %v\nwant %v", path, limit, got, want)
		}
	}
}
