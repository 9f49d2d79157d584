package reports

import (
	"slices"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestReports_Renewals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	keyA := co.UserKey(t, agent)
	ins := insurerID(t, env, co.Secret, "5501")
	mine := mustContact(t, env, co, "private", "Agent", &agent.ID)
	other := mustContact(t, env, co, "private", "Other", nil)
	mk := func(contact, typ, status, end, main string) string {
		return mustContract(t, env, co.Secret, ct{Contact: contact, Insurer: ins, Type: typ, Status: status, End: end, MainRenewal: main})
	}
	r1 := mk(other, "041", "active", "2026-03-31", "")              // due on its end, the window's last day
	r2 := mk(mine, "130", "active", "", "2020-01-01")               // anniversary on the window's first day
	r3 := mk(other, "030", "active", "", "2020-04-01")              // anniversary the day after the window
	r4 := mk(mine, "010", "active", "", "2024-02-29")               // 28 February in 2026, 29 in 2028
	_ = mk(other, "070", "offer", "", "2026-02-15")                 // an offer is no renewal
	r6 := mk(other, "080", "cancelled", "2025-12-31", "2019-03-10") // ended before its 2026 anniversary
	_ = mk(other, "042", "active", "", "2027-02-01")                // first anniversary is 2027
	r8 := mk(other, "140", "active", "2026-02-05", "2020-02-10")    // ends before its anniversary
	r9 := mk(other, "100", "active", "", "2020-01-01")              // same day as r2: by id
	first := r2
	if r9 < r2 {
		first, r9 = r9, r2
	}
	id := func(c struct {
		ID           string  `json:"id"`
		PolicyNumber string  `json:"policyNumber"`
		EndDate      *string `json:"endDate"`
	}) string {
		return c.ID
	}
	type row = struct {
		ID           string  `json:"id"`
		PolicyNumber string  `json:"policyNumber"`
		EndDate      *string `json:"endDate"`
	}

	t.Run("window edges included, ordered by due day then id, paged", func(t *testing.T) {
		// Catches: an exclusive window end, the end date ignored when a renewal date exists,
		// anniversaries after the end date, 29 February lost in a common year, an offer listed,
		// a page boundary that repeats or skips a row.
		want := []string{first, r9, r8, r4, r1}
		for _, limit := range []int{1, 2, 5, 50} {
			got := walk[row](t, env, co.Secret, "/reports/renewals?from=2026-01-01&to=2026-03-31", limit, id)
			if !slices.Equal(got, want) {
				t.Errorf("limit %d: %v, want %v", limit, got, want)
			}
		}
	})
	t.Run("one day windows", func(t *testing.T) {
		for _, c := range []struct {
			from, to string
			want     []string
		}{
			{"2026-04-01", "2026-04-01", []string{r3}},
			{"2028-02-29", "2028-02-29", []string{r4}},
			{"2026-03-01", "2026-03-01", nil}, // 29 Feb 2024 is not 1 March in 2026
			{"2025-12-15", "2026-01-05", []string{r6, first, r9}},
		} {
			got := walk[row](t, env, co.Secret, "/reports/renewals?from="+c.from+"&to="+c.to, 50, id)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s..%s: %v, want %v", c.from, c.to, got, c.want)
			}
		}
	})
	t.Run("an agent sees its own contacts' contracts", func(t *testing.T) {
		got := walk[row](t, env, keyA, "/reports/renewals?from=2026-01-01&to=2026-03-31", 50, id)
		want := []string{r2, r4}
		if !slices.Equal(got, want) {
			t.Errorf("agent %v, want %v", got, want)
		}
	})

	p := apitest.Get[contractPage](t, env, co.Secret, "/reports/renewals?from=2026-01-01&to=2026-03-31&limit=1")
	env.Run(t, []apitest.Case{
		{Name: "no key", Path: "/reports/renewals?from=2026-01-01&to=2026-03-31", Status: 401},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "contracts:read"), Path: "/reports/renewals?from=2026-01-01&to=2026-03-31", Status: 403},
		// Catches: a missing bound read as open (or a 500 on a NULL date).
		{Name: "from and to required", Key: co.Secret, Path: "/reports/renewals", Status: 422,
			Check: apitest.FieldErrorSet("from:required", "to:required")},
		{Name: "to before from", Key: co.Secret, Path: "/reports/renewals?from=2026-02-01&to=2026-01-31", Status: 422,
			Check: apitest.FieldErrors("to:invalid_range")},
		{Name: "bad dates and limit at once", Key: co.Secret, Path: "/reports/renewals?from=2026-13-01&to=0000-01-01&limit=0", Status: 422,
			Check: apitest.FieldErrorSet("from:invalid_date", "to:invalid_date", "limit:out_of_range")},
		// Catches: a cursor continued in another window (rows skipped or repeated silently).
		{Name: "cursor of another window", Key: co.Secret, Status: 422,
			Path:  "/reports/renewals?from=2026-01-01&to=2026-04-30&cursor=" + p.Pagination.NextCursor,
			Check: apitest.FieldErrors("cursor:cursor_mismatch")},
	})
}
