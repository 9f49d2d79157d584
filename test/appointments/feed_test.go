package appointments

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestAppointments_Feed: the iCalendar feed, parsed by github.com/emersion/go-ical (nobody
// here wrote it), expands to exactly the occurrences GET /appointments lists for the user:
// RRULE with EXDATE (a cancelled occurrence, the DST-gap instance), a RECURRENCE-ID exception,
// a split series, a single appointment and a New York series.
func TestAppointments_Feed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	other := env.NewUser(t, a, "agent")
	key := a.UserKey(t, agent, "appointments:write")
	weekly := apitest.Create[appt](t, env, key, "/appointments", map[string]any{"title": "Jour fixe, Team; \"A\"", "startAt": "2026-03-16T09:00:00",
		"endAt": "2026-03-16T09:30:00", "recurrence": "FREQ=WEEKLY;BYDAY=MO;COUNT=12", "location": "Büro\nHamburg"})
	apitest.Create[appt](t, env, key, "/appointments", map[string]any{"title": "Backup", "startAt": "2026-03-27T02:30:00", "endAt": "2026-03-27T02:45:00",
		"recurrence": "FREQ=DAILY;COUNT=5"})
	apitest.Create[appt](t, env, key, "/appointments", map[string]any{"title": "Einzeltermin", "startAt": "2026-04-01T14:00:00", "endAt": "2026-04-01T15:00:00"})
	apitest.Create[appt](t, env, key, "/appointments", map[string]any{"title": "NY call", "startAt": "2026-03-05T09:00:00", "endAt": "2026-03-05T09:15:00",
		"timeZone": "America/New_York", "recurrence": "FREQ=WEEKLY;BYDAY=TH;UNTIL=20260430T000000Z"})
	apitest.Create[appt](t, env, a.Secret, "/appointments", map[string]any{"title": "not mine", "startAt": "2026-04-01T14:00:00", "endAt": "2026-04-01T15:00:00",
		"ownerId": other.ID.String()})
	occ := func(day string) string { return url.QueryEscape("2026-" + day + "T09:00:00") }
	for _, r := range []apitest.Request{
		{Method: "DELETE", Path: "/appointments/" + weekly.ID + "?scope=this&occurrenceStart=" + occ("03-23")},
		{Method: "PATCH", Path: "/appointments/" + weekly.ID + "?scope=this&occurrenceStart=" + occ("03-30"),
			Body: map[string]any{"title": "Jour fixe verschoben", "startAt": "2026-03-31T10:00:00", "endAt": "2026-03-31T11:00:00"}},
		{Method: "PATCH", Path: "/appointments/" + weekly.ID + "?scope=following&occurrenceStart=" + occ("04-20"),
			Body: map[string]any{"title": "Jour fixe neu"}},
	} {
		r.Key = key
		if resp := env.Do(t, r); resp.Status >= 300 {
			t.Fatalf("%s %s: %d %s", r.Method, r.Path, resp.Status, resp.Body)
		}
	}

	r := env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + agent.ID.String() + "/calendar-token", Key: key})
	if r.Status != 201 {
		t.Fatalf("token: %d %s", r.Status, r.Body)
	}
	var tok struct {
		Token string `json:"token"`
		URL   string `json:"url"`
	}
	r.Decode(t, &tok)
	if !strings.HasPrefix(tok.Token, "cal_") || !strings.HasSuffix(tok.URL, "/calendar/"+tok.Token+".ics") {
		t.Fatalf("token %+v", tok)
	}
	feed := env.Do(t, apitest.Request{Path: "/calendar/" + tok.Token + ".ics"})
	if feed.Status != 200 || !strings.HasPrefix(feed.Header.Get("Content-Type"), "text/calendar") {
		t.Fatalf("feed: %d %s %s", feed.Status, feed.Header.Get("Content-Type"), feed.Body)
	}
	cal, err := ical.NewDecoder(strings.NewReader(string(feed.Body))).Decode()
	if err != nil {
		t.Fatalf("go-ical cannot parse the feed: %v\n%s", err, feed.Body)
	}
	for _, line := range strings.Split(string(feed.Body), "\r\n") {
		if len(line) > 75 {
			t.Errorf("line longer than 75 octets: %q", line)
		}
	}
	for _, want := range []string{"BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "TZID:America/New_York", "EXDATE;TZID=Europe/Berlin:20260323T090000",
		"EXDATE;TZID=Europe/Berlin:20260329T033000", "RECURRENCE-ID;TZID=Europe/Berlin:20260330T090000", `SUMMARY:Jour fixe\, Team\; "A"`,
		`LOCATION:Büro\nHamburg`} {
		if !strings.Contains(strings.ReplaceAll(string(feed.Body), "\r\n ", ""), want) {
			t.Errorf("feed lacks %s", want)
		}
	}

	// Expand the feed with go-ical's recurrence set and compare with the API's list.
	from, to := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	type inst struct{ uid, start string }
	overridden := map[inst]bool{}
	var fromFeed []string
	for _, ev := range cal.Events() {
		uid := ev.Props.Get(ical.PropUID).Value
		if rid := ev.Props.Get(ical.PropRecurrenceID); rid != nil {
			orig, err := rid.DateTime(time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			overridden[inst{uid, orig.UTC().Format(time.RFC3339)}] = true
		}
	}
	for _, ev := range cal.Events() {
		uid := ev.Props.Get(ical.PropUID).Value
		summary, _ := ev.Props.Text(ical.PropSummary)
		start, err := ev.DateTimeStart(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		set, err := ev.RecurrenceSet(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if set == nil || ev.Props.Get(ical.PropRecurrenceID) != nil {
			if !start.Before(from) && start.Before(to) {
				fromFeed = append(fromFeed, start.UTC().Format(time.RFC3339)+" "+summary)
			}
			continue
		}
		for _, s := range set.Between(from, to, true) {
			if !overridden[inst{uid, s.UTC().Format(time.RFC3339)}] {
				fromFeed = append(fromFeed, s.UTC().Format(time.RFC3339)+" "+summary)
			}
		}
	}
	var fromAPI []string
	for _, o := range list(t, env, key, from.Format(time.RFC3339), to.Format(time.RFC3339), "&ownerId="+agent.ID.String()) {
		fromAPI = append(fromAPI, o.StartAt.UTC().Format(time.RFC3339)+" "+o.Title)
	}
	slices.Sort(fromFeed)
	slices.Sort(fromAPI)
	if !slices.Equal(fromFeed, fromAPI) {
		t.Errorf("feed expansion differs from the API\nfeed %v\n api %v", fromFeed, fromAPI)
	}
	if len(fromAPI) != 24 || slices.ContainsFunc(fromAPI, func(s string) bool { return strings.Contains(s, "not mine") }) {
		t.Errorf("api list %v", fromAPI)
	}

	env.Run(t, []apitest.Case{
		{Name: "unknown token", Path: "/calendar/cal_nope.ics", Status: 404},
		{Name: "other user's token by an agent", Key: key, Method: "POST", Path: "/users/" + other.ID.String() + "/calendar-token", Status: 403},
		{Name: "B's user", Key: b.Secret, Method: "POST", Path: "/users/" + agent.ID.String() + "/calendar-token", Status: 404},
		{Name: "bad user id", Key: a.Secret, Method: "POST", Path: "/users/x/calendar-token", Status: 400},
		{Name: "unknown user", Key: a.Secret, Method: "DELETE", Path: "/users/" + uuid.NewString() + "/calendar-token", Status: 404},
		{Name: "no scope", Key: a.KeyWithScopes(t, "tasks:read"), Method: "POST", Path: "/users/" + agent.ID.String() + "/calendar-token", Status: 403},
		{Name: "admin's key rotates", Key: a.UserKey(t, a.Admin), Method: "POST", Path: "/users/" + agent.ID.String() + "/calendar-token", Status: 201},
		{Name: "rotated token is dead", Path: "/calendar/" + tok.Token + ".ics", Status: 404},
	})
	var rotated struct {
		Token string `json:"token"`
	}
	env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + agent.ID.String() + "/calendar-token", Key: key}).Decode(t, &rotated)
	if r := env.Do(t, apitest.Request{Path: "/calendar/" + rotated.Token + ".ics"}); r.Status != 200 {
		t.Errorf("new token: %d", r.Status)
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + agent.ID.String() + "/calendar-token", Key: key}); r.Status != 204 {
		t.Errorf("revoke: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, apitest.Request{Path: "/calendar/" + rotated.Token + ".ics"}); r.Status != 404 {
		t.Errorf("revoked token: %d", r.Status)
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + agent.ID.String() + "/calendar-token", Key: key}); r.Status != 404 {
		t.Errorf("revoke twice: %d", r.Status)
	}
}

// TestAppointments_FeedVisibility: the feed runs with its user's visibility pinned, as that
// user's requests do (RLS and ent privacy): an agent's feed leaves out an appointment the agent
// owns on a colleague's contact the agent cannot see; a manager's feed (visibility all) keeps
// it. A revoked token is 404.
func TestAppointments_FeedVisibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent, colleague, boss := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "manager")
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret,
		Body: map[string]any{"type": "private", "firstName": "Kai", "lastName": "Kunde", "ownerId": colleague.ID.String()}})
	if r.Status != 201 {
		t.Fatalf("contact: %d %s", r.Status, r.Body)
	}
	var ct struct {
		ID string `json:"id"`
	}
	r.Decode(t, &ct)
	at := func(owner uuid.UUID, title string, contact bool) {
		body := map[string]any{"title": title, "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00", "ownerId": owner.String()}
		if contact {
			body["contactId"] = ct.ID
		}
		apitest.Create[appt](t, env, a.Secret, "/appointments", body)
	}
	at(agent.ID, "agent own", false)
	at(agent.ID, "colleague contact for agent", true)
	at(boss.ID, "colleague contact for boss", true)
	adminKey := a.UserKey(t, a.Admin)
	feed := func(u uuid.UUID) (string, string) {
		t.Helper()
		var tok struct {
			Token string `json:"token"`
		}
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + u.String() + "/calendar-token", Key: adminKey})
		if r.Status != 201 {
			t.Fatalf("token: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &tok)
		f := env.Do(t, apitest.Request{Path: "/calendar/" + tok.Token + ".ics"})
		if f.Status != 200 {
			t.Fatalf("feed: %d %s", f.Status, f.Body)
		}
		return tok.Token, string(f.Body)
	}
	summaries := func(body string) []string {
		cal, err := ical.NewDecoder(strings.NewReader(body)).Decode()
		if err != nil {
			t.Fatalf("go-ical: %v", err)
		}
		var out []string
		for _, ev := range cal.Events() {
			s, _ := ev.Props.Text(ical.PropSummary)
			out = append(out, s)
		}
		slices.Sort(out)
		return out
	}
	tok, body := feed(agent.ID)
	if got := summaries(body); !slices.Equal(got, []string{"agent own"}) {
		t.Errorf("agent's feed %v, want only [agent own]", got)
	}
	if _, body := feed(boss.ID); !slices.Equal(summaries(body), []string{"colleague contact for boss"}) {
		t.Errorf("manager's feed %v", summaries(body))
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + agent.ID.String() + "/calendar-token", Key: a.Secret}); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, apitest.Request{Path: "/calendar/" + tok + ".ics"}); r.Status != 404 {
		t.Errorf("revoked token: %d", r.Status)
	}
}
