package bench

import (
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// BenchmarkAppointmentsList: GET /appointments over a 365-day window (2026) for an agent with
// 500 appointments of which 100 are recurring: 30 daily (10 on weekdays without end, 20 with
// COUNT=30), 50 weekly (half without end, half COUNT=20), 20 monthly (5 of them in
// America/New_York); 20 series carry an exception (one occurrence moved) and a cancelled
// occurrence (EXDATE). Everything is created through the API, as the agent's key, which also
// lists: RLS and the ent rule check visibility (own_and_delegated). p50/p99 per request.
func BenchmarkAppointmentsList(b *testing.B) {
	env := apitest.New(b)
	co := env.NewCompany(b)
	agent := env.NewUser(b, co, "agent")
	n := 0
	var key string
	next := func() string { // a new key every 400 requests: under the 600/min quota per key
		if n%400 == 0 {
			b.StopTimer()
			key = co.UserKey(b, agent, "appointments:write")
			b.StartTimer()
		}
		n++
		return key
	}
	must := func(r apitest.Request, want int) *apitest.Response {
		r.Key = next()
		resp := env.Do(b, r)
		if resp.Status != want {
			b.Fatalf("%s %s: %d %s", r.Method, r.Path, resp.Status, resp.Body)
		}
		return resp
	}
	year := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	create := func(i int, rule, zone string) string {
		start := year.Add(time.Duration(i%300) * 24 * time.Hour).Add(time.Duration(i%9) * time.Hour)
		body := map[string]any{"title": fmt.Sprintf("Termin %d", i), "startAt": start.Format(time.RFC3339),
			"endAt": start.Add(time.Hour).Format(time.RFC3339), "type": "meeting"}
		if rule != "" {
			body["recurrence"] = rule
		}
		if zone != "" {
			body["timeZone"] = zone
		}
		var a struct {
			ID string `json:"id"`
		}
		must(apitest.Request{Method: "POST", Path: "/appointments", Body: body}, 201).Decode(b, &a)
		return a.ID
	}
	days := []string{"MO", "TU", "WE", "TH", "FR"}
	var series []string
	for i := range 100 {
		rule, zone := "", ""
		switch {
		case i < 10:
			rule = "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR"
		case i < 30:
			rule = "FREQ=DAILY;COUNT=30"
		case i < 55:
			rule = "FREQ=WEEKLY;BYDAY=" + days[i%5]
		case i < 80:
			rule = "FREQ=WEEKLY;BYDAY=" + days[i%5] + ";COUNT=20"
		case i < 95:
			rule = "FREQ=MONTHLY"
		default:
			rule, zone = "FREQ=MONTHLY", "America/New_York"
		}
		series = append(series, create(i, rule, zone))
	}
	for i := 100; i < 500; i++ {
		create(i, "", "")
	}
	window := "/appointments?from=" + url.QueryEscape("2026-01-01T00:00:00+01:00") + "&to=" + url.QueryEscape("2027-01-01T00:00:00+01:00")
	var list struct {
		Data []struct {
			SeriesID        *string    `json:"seriesId"`
			OccurrenceStart *time.Time `json:"occurrenceStart"`
		} `json:"data"`
	}
	must(apitest.Request{Path: window}, 200).Decode(b, &list)
	occs := map[string][]time.Time{}
	for _, o := range list.Data {
		if o.SeriesID != nil && o.OccurrenceStart != nil {
			occs[*o.SeriesID] = append(occs[*o.SeriesID], *o.OccurrenceStart)
		}
	}
	for i := 0; i < 100; i += 5 { // every fifth series: move its 3rd occurrence, cancel its 5th
		id, os := series[i], occs[series[i]]
		if len(os) < 5 {
			b.Fatalf("series %d has %d occurrences in the window", i, len(os))
		}
		third := url.QueryEscape(os[2].Format(time.RFC3339))
		moved := os[2].Add(2 * time.Hour)
		must(apitest.Request{Method: "PATCH", Path: "/appointments/" + id + "?scope=this&occurrenceStart=" + third,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"},
			Body: map[string]any{"title": "verschoben", "startAt": moved.Format(time.RFC3339),
				"endAt": moved.Add(time.Hour).Format(time.RFC3339)}}, 200)
		must(apitest.Request{Method: "DELETE", Path: "/appointments/" + id + "?scope=this&occurrenceStart=" +
			url.QueryEscape(os[4].Format(time.RFC3339))}, 204)
	}
	must(apitest.Request{Path: window}, 200).Decode(b, &list)
	b.Logf("%d occurrences in the window", len(list.Data))
	// Timed: the server alone (app.Test, body read), not env.Do's OpenAPI validation of a
	// response of thousands of occurrences, which the setup above already did.
	var lat []time.Duration
	for b.Loop() {
		req := httptest.NewRequest("GET", app.V1Prefix+window, nil)
		req.Header.Set("Authorization", "Bearer "+next())
		t0 := time.Now()
		resp, err := env.Server.App.Test(req, -1)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%d %v", resp.StatusCode, err)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(list.Data)), "occurrences")
}
