package reports

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestReports_Pipeline: stages, sources, conversion and the window on the lead's creation day
// in Europe/Berlin, for the admin and for agents (own leads only; with a delegation also the
// delegator's), test leads left out.
func TestReports_Pipeline(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	a, b, d := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	co.Delegate(t, b.ID, d.ID, nil) // d sees b's leads (and its own, none)
	plStage(t, env, co.ID, "termin", "Termin vereinbart", 1)

	at := func(x time.Time) *time.Time { return &x }
	plLeads(t, env, co.ID,
		// In the window by Berlin's day, before it by UTC's (23:30Z on Feb 28): catches a UTC window.
		plLead{Owner: &a.ID, Source: "website", Stage: "new", Created: berlin(2026, 3, 1, 0, 30, 0)},
		plLead{Owner: &a.ID, Source: "referral", Stage: "converted", Created: berlin(2026, 3, 5, 12, 0, 0),
			Converted: at(berlin(2026, 3, 8, 12, 0, 0))}, // 3 days
		plLead{Owner: &b.ID, Source: "website", Stage: "converted", Created: berlin(2026, 3, 10, 12, 0, 0),
			Converted: at(berlin(2026, 3, 14, 12, 0, 0))}, // 4 days
		// The last minutes of `to` (CEST) count: catches a window that ends at to's midnight.
		plLead{Owner: &b.ID, Stage: "termin", Created: berlin(2026, 3, 31, 23, 30, 0)},
		// Berlin's April 1st, still March 31 in UTC: catches a UTC window.
		plLead{Owner: &a.ID, Source: "website", Stage: "new", Created: berlin(2026, 4, 1, 0, 0, 0)},
		plLead{Owner: &a.ID, Source: "phone", Stage: "new", Created: berlin(2026, 2, 28, 23, 59, 59)},
		// A test lead in the window: left out everywhere.
		plLead{Owner: &a.ID, Source: "website", Stage: "converted", Created: berlin(2026, 3, 2, 9, 0, 0),
			Converted: at(berlin(2026, 3, 3, 9, 0, 0)), Test: true},
	)
	agentA, agentD := co.UserKey(t, a), co.UserKey(t, d)
	const march = "from=2026-03-01&to=2026-03-31"

	type want struct {
		leads, converted int64
		stages           map[string]int64
		sources          map[string]int64
		rate             float64
		days             *float64
	}
	f := func(x float64) *float64 { return &x }
	check := func(t *testing.T, key, query string, w want) {
		t.Helper()
		p := apitest.Get[pipelineBody](t, env, key, "/reports/pipeline?"+query)
		keys, stages := p.stageCounts()
		if !slices.Equal(keys, []string{"new", "termin", "converted"}) {
			t.Errorf("stages %v, want every stage in board order [new termin converted]", keys)
		}
		if !maps.Equal(stages, w.stages) {
			t.Errorf("stage counts %v, want %v", stages, w.stages)
		}
		if got := p.sourceCounts(); !maps.Equal(got, w.sources) {
			t.Errorf("sources %v, want %v", got, w.sources)
		}
		if len(p.Sources) < 10 || p.Sources[0].Source == nil || *p.Sources[0].Source != "website" {
			t.Errorf("sources %+v, want every source of the schema, website first", p.Sources)
		}
		if p.Leads != w.leads || p.Converted != w.converted || p.ConversionRate != w.rate {
			t.Errorf("leads %d converted %d rate %v, want %d %d %v", p.Leads, p.Converted, p.ConversionRate, w.leads, w.converted, w.rate)
		}
		if (p.AverageDaysToConversion == nil) != (w.days == nil) ||
			p.AverageDaysToConversion != nil && *p.AverageDaysToConversion != *w.days {
			t.Errorf("averageDaysToConversion %v, want %v", p.AverageDaysToConversion, w.days)
		}
	}

	t.Run("admin sees the window's leads of everyone", func(t *testing.T) {
		check(t, co.Secret, march, want{leads: 4, converted: 2,
			stages:  map[string]int64{"new": 1, "termin": 1, "converted": 2},
			sources: map[string]int64{"website": 2, "referral": 1, "": 1}, rate: 0.5, days: f(3.5)})
	})
	t.Run("agent sees its own leads only", func(t *testing.T) {
		check(t, agentA, march, want{leads: 2, converted: 1,
			stages:  map[string]int64{"new": 1, "termin": 0, "converted": 1},
			sources: map[string]int64{"website": 1, "referral": 1}, rate: 0.5, days: f(3)})
	})
	t.Run("delegate sees the delegator's leads", func(t *testing.T) {
		check(t, agentD, march, want{leads: 2, converted: 1,
			stages:  map[string]int64{"new": 0, "termin": 1, "converted": 1},
			sources: map[string]int64{"website": 1, "": 1}, rate: 0.5, days: f(4)})
	})
	t.Run("no window is every lead", func(t *testing.T) {
		check(t, co.Secret, "", want{leads: 6, converted: 2,
			stages:  map[string]int64{"new": 3, "termin": 1, "converted": 2},
			sources: map[string]int64{"website": 3, "referral": 1, "phone": 1, "": 1}, rate: 0.3333, days: f(3.5)})
	})
	t.Run("one open end", func(t *testing.T) {
		check(t, co.Secret, "from=2026-04-01", want{leads: 1, converted: 0,
			stages: map[string]int64{"new": 1, "termin": 0, "converted": 0}, sources: map[string]int64{"website": 1}})
		check(t, co.Secret, "to=2026-02-28", want{leads: 1, converted: 0,
			stages: map[string]int64{"new": 1, "termin": 0, "converted": 0}, sources: map[string]int64{"phone": 1}})
	})
	t.Run("empty window is zeros and null", func(t *testing.T) {
		check(t, co.Secret, "from=2025-01-01&to=2025-01-01", want{
			stages: map[string]int64{"new": 0, "termin": 0, "converted": 0}, sources: map[string]int64{}})
	})
	t.Run("another company sees none of it", func(t *testing.T) {
		other := env.NewCompany(t)
		p := apitest.Get[pipelineBody](t, env, other.Secret, "/reports/pipeline")
		if p.Leads != 0 || len(p.Stages) != 2 {
			t.Errorf("other company: leads %d stages %+v, want 0 and its own two stages", p.Leads, p.Stages)
		}
	})
}

// TestReports_PipelineDigits: the rates are JSON numbers written from the database's numeric,
// 4 (rate) and 2 (days) fraction digits, trailing zeros dropped; catches a float on the way
// (0.3333333333333333) and a rate that is not rounded.
func TestReports_PipelineDigits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	conv := berlin(2026, 5, 2, 8, 0, 0) // 1 day and 20 hours after creation: 1.8333… days
	plLeads(t, env, co.ID,
		plLead{Stage: "converted", Created: berlin(2026, 4, 30, 12, 0, 0), Converted: &conv},
		plLead{Stage: "new", Created: berlin(2026, 4, 30, 13, 0, 0)},
		plLead{Stage: "new", Created: berlin(2026, 4, 30, 14, 0, 0)},
	)
	r := env.Do(t, apitest.Request{Path: "/reports/pipeline", Key: co.Secret})
	body := string(r.Body)
	for _, w := range []string{`"conversionRate":0.3333,`, `"averageDaysToConversion":1.83}`, `"leads":3,`} {
		if !strings.Contains(body, w) {
			t.Errorf("body %s lacks %s", body, w)
		}
	}
}

// TestReports_PipelineErrors: every bad parameter in one 422, never a 500; 401 and 403.
func TestReports_PipelineErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		// catches a missing auth on the route
		{Name: "no key is 401", Path: "/reports/pipeline", Status: 401},
		// catches a wrong or missing scope check
		{Name: "without reports:read 403", Key: co.KeyWithScopes(t, "leads:read", "contacts:read"),
			Path: "/reports/pipeline", Status: 403, Problem: "insufficient_scope"},
		// catches a date parser that lists only the first bad parameter, or takes timestamps
		{Name: "both dates bad, both listed", Key: co.Secret, Path: "/reports/pipeline?from=yesterday&to=2026-03-01T00:00:00Z",
			Status: 422, Check: apitest.FieldErrors("from:invalid_date", "to:invalid_date")},
		// catches a date that Go's parser would normalise (Feb 30 → Mar 2)
		{Name: "no such day", Key: co.Secret, Path: "/reports/pipeline?from=2026-02-30", Status: 422,
			Check: apitest.FieldErrors("from:invalid_date")},
		// catches year 0, which PostgreSQL has not: a 500 if it reached the database
		{Name: "year zero", Key: co.Secret, Path: "/reports/pipeline?to=0000-01-01", Status: 422,
			Check: apitest.FieldErrors("to:invalid_date")},
		// catches an unchecked reversed window (silently empty)
		{Name: "to before from", Key: co.Secret, Path: "/reports/pipeline?from=2026-03-02&to=2026-03-01", Status: 422,
			Check: apitest.FieldErrors("to:invalid_range")},
		// one day is a valid window: catches a check written as to > from
		{Name: "from equals to", Key: co.Secret, Path: "/reports/pipeline?from=2026-03-01&to=2026-03-01", Status: 200},
	})
}
