// Package appointments tests /appointments: series expansion across DST, the scopes of item
// operations, error cases, isolation and the calendar feed.
package appointments

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type appt struct {
	ID         string  `json:"id"`
	Title      string  `json:"title"`
	StartAt    string  `json:"startAt"`
	EndAt      string  `json:"endAt"`
	Recurrence *string `json:"recurrence"`
	OwnerID    *string `json:"ownerId"`
	Exceptions []struct {
		OccurrenceStart time.Time `json:"occurrenceStart"`
		Cancelled       bool      `json:"cancelled"`
		Title           *string   `json:"title"`
	} `json:"exceptions"`
}

type occurrence struct {
	ID              string     `json:"id"`
	SeriesID        *string    `json:"seriesId"`
	OccurrenceStart *time.Time `json:"occurrenceStart"`
	IsException     bool       `json:"isException"`
	Title           string     `json:"title"`
	Location        string     `json:"location"`
	StartAt         time.Time  `json:"startAt"`
	EndAt           time.Time  `json:"endAt"`
}

var berlin = func() *time.Location {
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return l
}()

func list(t *testing.T, env *apitest.Env, key, from, to string, extra ...string) []occurrence {
	t.Helper()
	q := "/appointments?from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to) + strings.Join(extra, "")
	r := env.Do(t, apitest.Request{Path: q, Key: key})
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var body struct {
		Data []occurrence `json:"data"`
	}
	r.Decode(t, &body)
	return body.Data
}

// local renders occurrences as "MM-DD HH:MM title" in Berlin time.
func local(os []occurrence) []string {
	out := []string{}
	for _, o := range os {
		out = append(out, o.StartAt.In(berlin).Format("01-02 15:04")+" "+o.Title)
	}
	return out
}

func TestAppointments_CreateGetErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	ok := map[string]any{"title": "Beratung", "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range ok {
			m[key] = val
		}
		m[k] = v
		return m
	}
	env.Run(t, []apitest.Case{
		{Name: "single", Key: a.Secret, Method: "POST", Path: "/appointments", Body: ok, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				var x appt
				r.Decode(t, &x)
				if x.StartAt != "2026-05-04T10:00:00+02:00" || x.Recurrence != nil || x.OwnerID != nil || len(x.Exceptions) != 0 {
					t.Errorf("got %+v", x)
				}
			}},
		{Name: "with an idempotency key", Key: a.Secret, Method: "POST", Path: "/appointments", Body: ok,
			Header: map[string]string{"Idempotency-Key": "appt-once"}, Status: 201},
		{Name: "the key again with another body", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("title", "Andere"),
			Header: map[string]string{"Idempotency-Key": "appt-once"}, Status: 422, Problem: "idempotency_key_reused"},
		{Name: "user key owns it", Key: a.UserKey(t, agent, "appointments:write"), Method: "POST", Path: "/appointments", Body: ok, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				var x appt
				r.Decode(t, &x)
				if x.OwnerID == nil || *x.OwnerID != agent.ID.String() {
					t.Errorf("owner %v", x.OwnerID)
				}
			}},
		{Name: "series in New York", Key: a.Secret, Method: "POST", Path: "/appointments", Status: 201,
			Body: with("timeZone", "America/New_York"), Check: func(t *testing.T, r *apitest.Response) {
				var x appt
				r.Decode(t, &x)
				if x.StartAt != "2026-05-04T10:00:00-04:00" {
					t.Errorf("startAt %s: local time without offset is read in timeZone", x.StartAt)
				}
			}},
		{Name: "required", Key: a.Secret, Method: "POST", Path: "/appointments", Body: `{}`, Status: 422,
			Check: apitest.FieldErrors("title:required", "startAt:required", "endAt:required")},
		{Name: "end before start", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("endAt", "2026-05-04T09:00:00"),
			Status: 422, Check: apitest.FieldErrors("endAt:end_before_start")},
		{Name: "end equals start", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("endAt", "2026-05-04T10:00:00"),
			Status: 422, Check: apitest.FieldErrors("endAt:end_before_start")},
		{Name: "bad fields", Key: a.Secret, Method: "POST", Path: "/appointments", Status: 422,
			Body: map[string]any{"title": "x", "startAt": "soon", "endAt": "2026-05-04T11:00:00", "type": "party",
				"timeZone": "Mars/Olympus", "ownerId": "1", "contactId": "2"},
			Check: apitest.FieldErrors("type:invalid_enum", "timeZone:invalid_time_zone", "startAt:invalid_datetime", "ownerId:invalid_uuid", "contactId:invalid_uuid")},
		{Name: "bad rule", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("recurrence", "FREQ=SOMETIMES"),
			Status: 422, Check: apitest.FieldErrors("recurrence:invalid_recurrence")},
		{Name: "hourly rule", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("recurrence", "FREQ=HOURLY"),
			Status: 422, Check: apitest.FieldErrors("recurrence:unsupported_recurrence")},
		{Name: "rule ending before start", Key: a.Secret, Method: "POST", Path: "/appointments",
			Body: with("recurrence", "FREQ=DAILY;UNTIL=20260101T000000Z"), Status: 422, Check: apitest.FieldErrors("recurrence:no_occurrences")},
		{Name: "B's owner", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("ownerId", b.Admin.ID.String()),
			Status: 422, Check: apitest.FieldErrors("ownerId:unknown_user")},
		{Name: "unknown contact", Key: a.Secret, Method: "POST", Path: "/appointments", Body: with("contactId", uuid.NewString()),
			Status: 422, Check: apitest.FieldErrors("contactId:unknown_contact")},
		{Name: "malformed", Key: a.Secret, Method: "POST", Path: "/appointments", Body: `{`, Status: 400},
		{Name: "read scope", Key: a.KeyWithScopes(t, "appointments:read"), Method: "POST", Path: "/appointments", Body: ok, Status: 403},
		{Name: "get unknown", Key: a.Secret, Path: "/appointments/" + uuid.NewString(), Status: 404},
		{Name: "get bad id", Key: a.Secret, Path: "/appointments/x", Status: 400},
		{Name: "list without window", Key: a.Secret, Path: "/appointments", Status: 422, Check: apitest.FieldErrors("from:required", "to:required")},
		{Name: "list 367 days", Key: a.Secret, Path: "/appointments?from=2026-01-01T00:00:00Z&to=2027-01-03T00:00:00Z", Status: 422,
			Check: apitest.FieldErrors("to:range_too_long")},
		{Name: "list 366 days", Key: a.Secret, Path: "/appointments?from=2026-01-01T00:00:00Z&to=2027-01-02T00:00:00Z", Status: 200},
		{Name: "list inverted", Key: a.Secret, Path: "/appointments?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", Status: 422,
			Check: apitest.FieldErrors("to:invalid_range")},
		{Name: "list bad filters", Key: a.Secret, Path: "/appointments?from=x&to=2026-01-01T00:00:00Z&ownerId=1&type=party", Status: 422,
			Check: apitest.FieldErrors("from:invalid_datetime", "ownerId:invalid_uuid", "type:invalid_enum")},
	})
	if n := len(list(t, env, a.Secret, "2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z")); n != 4 {
		t.Errorf("%d appointments in May, want 4 (nothing half-written, the reused key's body not stored)", n)
	}
	if n := len(list(t, env, b.Secret, "2026-05-01T00:00:00Z", "2026-06-01T00:00:00Z")); n != 0 {
		t.Errorf("B sees %d of A's appointments", n)
	}
}

// TestAppointments_DST: a weekly Monday 09:00 Europe/Berlin series across the March and
// October switches stays at 09:00 local (08:00 UTC in winter, 07:00 UTC in summer); a daily
// 02:30 series skips the spring-forward day (RFC 5545 §3.3.10).
func TestAppointments_DST(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	apitest.Create[appt](t, env, a.Secret, "/appointments", map[string]any{"title": "Jour fixe", "startAt": "2026-03-16T09:00:00", "endAt": "2026-03-16T09:30:00",
		"recurrence": "FREQ=WEEKLY;BYDAY=MO"})
	got := list(t, env, a.Secret, "2026-03-16T00:00:00+01:00", "2026-11-03T00:00:00+01:00")
	if len(got) != 34 {
		t.Fatalf("%d occurrences, want 34", len(got))
	}
	for _, o := range got {
		want := 7
		if o.StartAt.Before(time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)) || !o.StartAt.Before(time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)) {
			want = 8
		}
		if o.StartAt.In(berlin).Hour() != 9 || o.StartAt.UTC().Hour() != want || o.EndAt.Sub(o.StartAt) != 30*time.Minute {
			t.Errorf("occurrence %v (UTC %v)", o.StartAt.In(berlin), o.StartAt.UTC())
		}
	}
	apitest.Create[appt](t, env, a.Secret, "/appointments", map[string]any{"title": "Backup", "startAt": "2026-03-27T02:30:00", "endAt": "2026-03-27T02:45:00",
		"recurrence": "FREQ=DAILY;COUNT=4"})
	daily := local(list(t, env, a.Secret, "2026-03-27T00:00:00+01:00", "2026-04-02T00:00:00+02:00", "&type=meeting"))
	var backups []string
	for _, s := range daily {
		if strings.HasSuffix(s, "Backup") {
			backups = append(backups, s)
		}
	}
	if want := []string{"03-27 02:30 Backup", "03-28 02:30 Backup", "03-30 02:30 Backup", "03-31 02:30 Backup"}; !slices.Equal(backups, want) {
		t.Errorf("daily 02:30: %v, want %v", backups, want)
	}
}

// TestAppointments_Scopes: this/following/all on a 10-occurrence weekly series, then the list.
func TestAppointments_Scopes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	// Mondays 09:00 from 2 March 2026: 03-02 ... 05-04.
	weeks := []string{"03-02", "03-09", "03-16", "03-23", "03-30", "04-06", "04-13", "04-20", "04-27", "05-04"}
	series := func(title string) appt {
		return apitest.Create[appt](t, env, a.Secret, "/appointments", map[string]any{"title": title, "startAt": "2026-03-02T09:00:00", "endAt": "2026-03-02T10:00:00",
			"recurrence": "FREQ=WEEKLY;BYDAY=MO;COUNT=10"})
	}
	occ := func(day string) string { return url.QueryEscape("2026-" + day + "T09:00:00") }
	window := func(title string) []string {
		var out []string
		for _, o := range local(list(t, env, a.Secret, "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z")) {
			if strings.Contains(o, title) {
				out = append(out, o)
			}
		}
		return out
	}
	expect := func(t *testing.T, title string, want []string) {
		t.Helper()
		if got := window(title); !slices.Equal(got, want) {
			t.Errorf("occurrences\n got %v\nwant %v", got, want)
		}
	}
	all := func(title string, skip ...string) []string {
		var out []string
		for _, w := range weeks {
			if !slices.Contains(skip, w) {
				out = append(out, w+" 09:00 "+title)
			}
		}
		return out
	}
	do := func(t *testing.T, method, path string, body any, status int) *apitest.Response {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: method, Path: path, Key: a.Secret, Body: body})
		if r.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}

	t.Run("this: edit one", func(t *testing.T) {
		s := series("S1")
		do(t, "PATCH", "/appointments/"+s.ID+"?scope=this&occurrenceStart="+occ("03-16"),
			map[string]any{"title": "S1 moved", "startAt": "2026-03-16T11:00:00", "endAt": "2026-03-16T12:00:00"}, 200)
		want := all("S1")
		want[2] = "03-16 11:00 S1 moved"
		expect(t, "S1", want)
		var got appt
		do(t, "GET", "/appointments/"+s.ID, nil, 200).Decode(t, &got)
		if len(got.Exceptions) != 1 || got.Exceptions[0].Title == nil || *got.Exceptions[0].Title != "S1 moved" {
			t.Errorf("exceptions %+v", got.Exceptions)
		}
	})
	t.Run("this: cancel one", func(t *testing.T) {
		s := series("S2")
		do(t, "DELETE", "/appointments/"+s.ID+"?scope=this&occurrenceStart="+occ("03-16"), nil, 204)
		expect(t, "S2", all("S2", "03-16"))
		// A cancelled occurrence cannot be edited alone.
		r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/appointments/" + s.ID + "?scope=this&occurrenceStart=" + occ("03-16"),
			Key: a.Secret, Body: `{"title":"x"}`})
		if r.Status != 422 || r.Problem(t).Errors[0].Code != "occurrence_cancelled" {
			t.Errorf("edit cancelled: %d %s", r.Status, r.Body)
		}
	})
	t.Run("following: split", func(t *testing.T) {
		s := series("S3")
		do(t, "PATCH", "/appointments/"+s.ID+"?scope=this&occurrenceStart="+occ("04-13"), map[string]any{"title": "S3 special"}, 200)
		r := do(t, "PATCH", "/appointments/"+s.ID+"?scope=following&occurrenceStart="+occ("03-30"), map[string]any{"location": "Hamburg"}, 200)
		var ns appt
		r.Decode(t, &ns)
		if ns.ID == s.ID || ns.Recurrence == nil || !strings.Contains(*ns.Recurrence, "COUNT=6") || len(ns.Exceptions) != 1 {
			t.Errorf("new series %+v", ns)
		}
		want := all("S3")
		want[6] = "04-13 09:00 S3 special"
		expect(t, "S3", want)
		var old appt
		do(t, "GET", "/appointments/"+s.ID, nil, 200).Decode(t, &old)
		if old.Recurrence == nil || !strings.Contains(*old.Recurrence, "UNTIL=") || len(old.Exceptions) != 0 {
			t.Errorf("old series %+v", old)
		}
		for _, o := range list(t, env, a.Secret, "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z") {
			if strings.HasPrefix(o.Title, "S3") && (o.Location == "Hamburg") != !o.StartAt.Before(time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("%v location %q", o.StartAt.In(berlin), o.Location)
			}
		}
	})
	t.Run("following: delete the rest", func(t *testing.T) {
		s := series("S4")
		do(t, "DELETE", "/appointments/"+s.ID+"?scope=following&occurrenceStart="+occ("03-30"), nil, 204)
		expect(t, "S4", all("S4")[:4])
	})
	t.Run("following from the first is all", func(t *testing.T) {
		s := series("S5")
		r := do(t, "PATCH", "/appointments/"+s.ID+"?scope=following&occurrenceStart="+occ("03-02"), map[string]any{"title": "S5 all"}, 200)
		var x appt
		r.Decode(t, &x)
		if x.ID != s.ID {
			t.Errorf("following at the first occurrence made a new series %s", x.ID)
		}
		expect(t, "S5", all("S5 all"))
	})
	t.Run("all: title keeps exceptions, a new time drops them", func(t *testing.T) {
		s := series("S6")
		do(t, "PATCH", "/appointments/"+s.ID+"?scope=this&occurrenceStart="+occ("03-16"), map[string]any{"location": "Kiel"}, 200)
		do(t, "DELETE", "/appointments/"+s.ID+"?scope=this&occurrenceStart="+occ("03-23"), nil, 204)
		do(t, "PATCH", "/appointments/"+s.ID, map[string]any{"title": "S6 renamed"}, 200)
		expect(t, "S6", all("S6 renamed", "03-23"))
		do(t, "PATCH", "/appointments/"+s.ID, map[string]any{"startAt": "2026-03-02T10:00:00", "endAt": "2026-03-02T11:00:00"}, 200)
		var want []string
		for _, w := range weeks {
			want = append(want, w+" 10:00 S6 renamed")
		}
		expect(t, "S6", want)
	})
	t.Run("all: delete", func(t *testing.T) {
		s := series("S7")
		do(t, "DELETE", "/appointments/"+s.ID, nil, 204)
		expect(t, "S7", nil)
		do(t, "GET", "/appointments/"+s.ID, nil, 404)
	})
	t.Run("errors", func(t *testing.T) {
		s := series("S8")
		p := "/appointments/" + s.ID
		env.Run(t, []apitest.Case{
			{Name: "this without occurrence", Key: a.Secret, Method: "PATCH", Path: p + "?scope=this", Body: `{"title":"x"}`,
				Status: 422, Check: apitest.FieldErrors("occurrenceStart:required")},
			{Name: "not an occurrence", Key: a.Secret, Method: "PATCH", Path: p + "?scope=this&occurrenceStart=" + occ("03-03"),
				Body: `{"title":"x"}`, Status: 422, Check: apitest.FieldErrors("occurrenceStart:not_an_occurrence")},
			{Name: "after the last", Key: a.Secret, Method: "DELETE", Path: p + "?scope=this&occurrenceStart=" + occ("05-11"),
				Status: 422, Check: apitest.FieldErrors("occurrenceStart:not_an_occurrence")},
			{Name: "bad scope and time", Key: a.Secret, Method: "DELETE", Path: p + "?scope=some&occurrenceStart=x",
				Status: 422, Check: apitest.FieldErrors("scope:invalid_enum", "occurrenceStart:invalid_datetime")},
			{Name: "this cannot change the rule", Key: a.Secret, Method: "PATCH", Path: p + "?scope=this&occurrenceStart=" + occ("03-09"),
				Body: `{"recurrence":"FREQ=DAILY"}`, Status: 422, Check: apitest.FieldErrors("recurrence:unknown_field")},
			{Name: "this end before start", Key: a.Secret, Method: "PATCH", Path: p + "?scope=this&occurrenceStart=" + occ("03-09"),
				Body: `{"endAt":"2026-03-09T08:00:00"}`, Status: 422, Check: apitest.FieldErrors("endAt:end_before_start")},
			{Name: "all bad rule", Key: a.Secret, Method: "PATCH", Path: p, Body: `{"recurrence":"FREQ=NEVER"}`, Status: 422,
				Check: apitest.FieldErrors("recurrence:invalid_recurrence")},
			{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: p, Header: map[string]string{"If-Match": `"99"`}, Body: `{"title":"x"}`, Status: 412},
			{Name: "B patch", Key: b.Secret, Method: "PATCH", Path: p, Body: `{"title":"x"}`, Status: 404},
			{Name: "B delete", Key: b.Secret, Method: "DELETE", Path: p + "?scope=this&occurrenceStart=" + occ("03-09"), Status: 404},
			{Name: "B get", Key: b.Secret, Path: p, Status: 404},
			{Name: "unknown", Key: a.Secret, Method: "DELETE", Path: "/appointments/" + uuid.NewString(), Status: 404},
		})
		expect(t, "S8", all("S8"))
	})
	var types []string
	r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=appointment.created,appointment.updated,appointment.deleted,appointment.occurrence_updated,appointment.occurrence_cancelled", Key: a.Secret})
	var evs struct {
		Data []struct {
			Type string `json:"type"`
		} `json:"data"`
	}
	r.Decode(t, &evs)
	for _, e := range evs.Data {
		types = append(types, e.Type)
	}
	for _, want := range []string{"appointment.created", "appointment.updated", "appointment.deleted", "appointment.occurrence_updated", "appointment.occurrence_cancelled"} {
		if !slices.Contains(types, want) {
			t.Errorf("no %s among %v", want, types)
		}
	}
	if n := len(list(t, env, b.Secret, "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z")); n != 0 {
		t.Errorf("B lists %d occurrences", n)
	}
	_ = fmt.Sprint
}

// TestAppointments_PatchLocalTimes: PATCH times without an offset are local time in the
// series' timeZone (America/New_York here), for each scope. 02:30 on 29 March 2026 exists in
// New York (its switch was on 8 March) but not in Berlin: read in Berlin, the occurrence below
// would end before it starts.
func TestAppointments_PatchLocalTimes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Sundays 09:00 New York from 15 March 2026: 03-15 03-22 03-29 04-05 04-12.
	s := apitest.Create[appt](t, env, a.Secret, "/appointments", map[string]any{"title": "NY", "startAt": "2026-03-15T09:00:00", "endAt": "2026-03-15T09:30:00",
		"timeZone": "America/New_York", "recurrence": "FREQ=WEEKLY;BYDAY=SU;COUNT=5"})
	occ := func(day, hm string) string { return url.QueryEscape("2026-" + day + "T" + hm + ":00") }
	for _, r := range []apitest.Request{
		{Method: "PATCH", Path: "/appointments/" + s.ID, Body: map[string]any{"startAt": "2026-03-15T10:00:00", "endAt": "2026-03-15T10:30:00"}},
		{Method: "PATCH", Path: "/appointments/" + s.ID + "?scope=this&occurrenceStart=" + occ("03-29", "10:00"),
			Body: map[string]any{"startAt": "2026-03-29T02:30:00", "endAt": "2026-03-29T03:10:00"}},
		{Method: "PATCH", Path: "/appointments/" + s.ID + "?scope=following&occurrenceStart=" + occ("04-05", "10:00"),
			Body: map[string]any{"startAt": "2026-04-05T08:00:00", "endAt": "2026-04-05T08:45:00"}},
	} {
		r.Key = a.Secret
		r.Header = map[string]string{"Content-Type": "application/merge-patch+json"}
		if resp := env.Do(t, r); resp.Status != 200 {
			t.Fatalf("%s %s: %d %s", r.Method, r.Path, resp.Status, resp.Body)
		}
	}
	var got []string
	for _, o := range list(t, env, a.Secret, "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z") {
		got = append(got, o.StartAt.In(ny).Format("01-02 15:04")+"-"+o.EndAt.In(ny).Format("15:04"))
	}
	want := []string{"03-15 10:00-10:30", "03-22 10:00-10:30", "03-29 02:30-03:10", "04-05 08:00-08:45", "04-12 08:00-08:45"}
	if !slices.Equal(got, want) {
		t.Errorf("New York local times %v, want %v", got, want)
	}
}
