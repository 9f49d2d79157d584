package isolation

import (
	"net/url"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestIsolation_TasksAppointments probes every task, comment, appointment and calendar-token
// operation on company B's records with A's live key and both sandbox keys: item operations
// answer 404, lists and the calendar feed leave B's records out, references to B's users and
// contacts are unknown (422), B's external references are free in A; B's data stays as it was.
func TestIsolation_TasksAppointments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	bUser := env.NewUser(t, b, "agent")
	create := func(path string, body any) string {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "POST", Path: path, Key: b.Secret, Body: body})
		if r.Status != 201 {
			t.Fatalf("B: POST %s: %d %s", path, r.Status, r.Body)
		}
		var v struct{ ID string }
		r.Decode(t, &v)
		return v.ID
	}
	contact := create("/contacts", map[string]any{"type": "private", "firstName": "Bea", "lastName": "Fremd", "ownerId": bUser.ID.String()})
	task := create("/tasks", map[string]any{"title": "Bs Aufgabe", "contactId": contact, "assigneeId": bUser.ID.String(),
		"externalReferences": []map[string]string{{"source": "ams", "externalId": "BT-1"}}})
	create("/tasks/"+task+"/comments", map[string]any{"content": "Bs Kommentar"})
	appt := create("/appointments", map[string]any{"title": "Bs Termin", "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00",
		"recurrence": "FREQ=WEEKLY;COUNT=5", "ownerId": bUser.ID.String(), "contactId": contact})
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + bUser.ID.String() + "/calendar-token", Key: b.UserKey(t, bUser)})
	if r.Status != 201 {
		t.Fatalf("B: token: %d %s", r.Status, r.Body)
	}
	var bTok struct{ Token string }
	r.Decode(t, &bTok)

	occ := "occurrenceStart=" + url.QueryEscape("2026-05-11T10:00:00")
	window := "/appointments?from=2026-05-01T00:00:00Z&to=2026-07-01T00:00:00Z"
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	absent := func(t *testing.T, r *apitest.Response) {
		for _, s := range []string{task, appt, "Bs Aufgabe", "Bs Termin", "Bs Kommentar"} {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("B's %s in A's answer: %s", s, r.Body)
			}
		}
	}
	var cases []apitest.Case
	for _, key := range []struct{ name, key string }{{"A", a.Secret}, {"A's sandbox", a.TestSecret}, {"B's sandbox", b.TestSecret}} {
		for _, p := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/tasks/" + task, nil},
			{"PATCH", "/tasks/" + task, map[string]any{"title": "pwned"}},
			{"DELETE", "/tasks/" + task, nil},
			{"GET", "/tasks/" + task + "/comments", nil},
			{"POST", "/tasks/" + task + "/comments", map[string]any{"content": "pwned"}},
			{"GET", "/appointments/" + appt, nil},
			{"PATCH", "/appointments/" + appt, map[string]any{"title": "pwned"}},
			{"PATCH", "/appointments/" + appt + "?scope=this&" + occ, map[string]any{"title": "pwned"}},
			{"PATCH", "/appointments/" + appt + "?scope=following&" + occ, map[string]any{"title": "pwned"}},
			{"DELETE", "/appointments/" + appt + "?scope=this&" + occ, nil},
			{"DELETE", "/appointments/" + appt, nil},
			{"POST", "/users/" + bUser.ID.String() + "/calendar-token", nil},
			{"DELETE", "/users/" + bUser.ID.String() + "/calendar-token", nil},
		} {
			c := apitest.Case{Name: key.name + " " + p.method + " " + p.path, Key: key.key, Method: p.method,
				Path: p.path, Body: p.body, Status: 404, Problem: "not_found"}
			if p.method == "PATCH" {
				c.Header = merge
			}
			cases = append(cases, c)
		}
		cases = append(cases,
			apitest.Case{Name: key.name + " lists tasks", Key: key.key, Path: "/tasks?limit=200", Status: 200, Check: absent},
			apitest.Case{Name: key.name + " lists tasks by B's assignee", Key: key.key, Path: "/tasks?assigneeId=" + bUser.ID.String(), Status: 200, Check: absent},
			apitest.Case{Name: key.name + " lists tasks by B's contact", Key: key.key, Path: "/tasks?contactId=" + contact, Status: 200, Check: absent},
			apitest.Case{Name: key.name + " lists appointments", Key: key.key, Path: window, Status: 200, Check: absent},
			apitest.Case{Name: key.name + " lists appointments by B's owner", Key: key.key, Path: window + "&ownerId=" + bUser.ID.String(), Status: 200, Check: absent},
			apitest.Case{Name: key.name + " task for B's contact and user", Key: key.key, Method: "POST", Path: "/tasks", Status: 422,
				Body: map[string]any{"title": "x", "contactId": contact, "assigneeId": bUser.ID.String()}},
			apitest.Case{Name: key.name + " appointment for B's contact and user", Key: key.key, Method: "POST", Path: "/appointments", Status: 422,
				Body: map[string]any{"title": "x", "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00",
					"contactId": contact, "ownerId": bUser.ID.String()}},
		)
	}
	cases = append(cases,
		apitest.Case{Name: "B's external reference is free in A", Key: a.Secret, Method: "POST", Path: "/tasks", Status: 201,
			Body: map[string]any{"title": "As Aufgabe", "externalReferences": []map[string]string{{"source": "ams", "externalId": "BT-1"}}}},
		apitest.Case{Name: "A's appointment", Key: a.Secret, Method: "POST", Path: "/appointments", Status: 201,
			Body: map[string]any{"title": "As Termin", "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00", "ownerId": a.Admin.ID.String()}},
	)
	env.Run(t, cases)

	// A's feed shows A's appointment only; B's feed still works and shows B's, unchanged.
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/users/" + a.Admin.ID.String() + "/calendar-token", Key: a.UserKey(t, a.Admin)})
	var aTok struct{ Token string }
	r.Decode(t, &aTok)
	aFeed := env.Do(t, apitest.Request{Path: "/calendar/" + aTok.Token + ".ics"})
	if aFeed.Status != 200 || !strings.Contains(string(aFeed.Body), "As Termin") || strings.Contains(string(aFeed.Body), "Bs Termin") {
		t.Errorf("A's feed: %d %s", aFeed.Status, aFeed.Body)
	}
	bFeed := env.Do(t, apitest.Request{Path: "/calendar/" + bTok.Token + ".ics"})
	if bFeed.Status != 200 || !strings.Contains(string(bFeed.Body), "SUMMARY:Bs Termin") || strings.Contains(string(bFeed.Body), "pwned") ||
		strings.Contains(string(bFeed.Body), "EXDATE") || strings.Contains(string(bFeed.Body), "As Termin") {
		t.Errorf("B's feed after A's probes: %d %s", bFeed.Status, bFeed.Body)
	}
	env.Run(t, []apitest.Case{
		{Name: "B's task unchanged", Key: b.Secret, Path: "/tasks/" + task, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !strings.Contains(string(r.Body), "Bs Aufgabe") {
				t.Errorf("got %s", r.Body)
			}
		}},
		{Name: "B's comments unchanged", Key: b.Secret, Path: "/tasks/" + task + "/comments", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if strings.Count(string(r.Body), `"content"`) != 1 || strings.Contains(string(r.Body), "pwned") {
				t.Errorf("got %s", r.Body)
			}
		}},
		{Name: "B's series unchanged", Key: b.Secret, Path: "/appointments/" + appt, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !strings.Contains(string(r.Body), `"title":"Bs Termin"`) || !strings.Contains(string(r.Body), `"exceptions":[]`) ||
				!strings.Contains(string(r.Body), "COUNT=5") {
				t.Errorf("got %s", r.Body)
			}
		}},
	})
}
