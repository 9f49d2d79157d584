package visibility

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestVisibility_TasksAppointments is the matrix over the task, comment and appointment
// endpoints: a task and a recurring appointment on agent A's contact, and a task without a
// contact assigned to A. Each credential reads them exactly when it sees A's rows; for the
// others every item operation (all scopes) is a 404 that names nothing, lists and the event
// feed leave them out. test/tasks has the own/assignee/creator cases.
func TestVisibility_TasksAppointments(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ofA := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Vertraulich", "ownerId": w.agentA.ID})
	create := func(path string, body map[string]any) string {
		t.Helper()
		r := w.env.Do(t, apitest.Request{Method: "POST", Path: path, Key: w.co.Secret, Body: body})
		if r.Status != 201 {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		var v struct{ ID string }
		r.Decode(t, &v)
		return v.ID
	}
	onContact := create("/tasks", map[string]any{"title": "Geheime Aufgabe", "contactId": ofA.ID})
	assigned := create("/tasks", map[string]any{"title": "Geheime Zuweisung", "assigneeId": w.agentA.ID.String()})
	create("/tasks/"+onContact+"/comments", map[string]any{"content": "Geheimer Kommentar"})
	appt := create("/appointments", map[string]any{"title": "Geheimer Termin", "startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00",
		"recurrence": "FREQ=WEEKLY;COUNT=4", "contactId": ofA.ID, "ownerId": w.agentA.ID.String()})
	occ := "occurrenceStart=" + url.QueryEscape("2026-05-11T10:00:00")
	window := "/appointments?from=2026-05-01T00:00:00Z&to=2026-06-01T00:00:00Z"
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			sees := w.seesA[name]
			want := 404
			if sees {
				want = 200
			}
			for _, p := range []string{"/tasks/" + onContact, "/tasks/" + assigned, "/tasks/" + onContact + "/comments", "/appointments/" + appt} {
				r := w.env.Do(t, apitest.Request{Path: p, Key: key})
				if r.Status != want {
					t.Errorf("GET %s: %d, want %d", p, r.Status, want)
				}
				if want == 404 && strings.Contains(string(r.Body), "Geheim") {
					t.Errorf("404 body names the record: %s", r.Body)
				}
			}
			for _, q := range []string{"/tasks?limit=200", "/tasks?contactId=" + ofA.ID, "/tasks?assigneeId=" + w.agentA.ID.String(),
				window, window + "&contactId=" + ofA.ID, window + "&ownerId=" + w.agentA.ID.String()} {
				r := w.env.Do(t, apitest.Request{Path: q, Key: key})
				if r.Status != 200 {
					t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
				}
				if strings.Contains(string(r.Body), "Geheim") != sees {
					t.Errorf("list %s shows A's records: %v, want %v", q, !sees, sees)
				}
			}
			evs := w.eventSubjects(t, key, "task.created,appointment.created")
			for _, id := range []string{onContact, assigned, appt} {
				if slices.Contains(evs, id) != sees {
					t.Errorf("feed has %s: %v, want %v", id, !sees, sees)
				}
			}
			if sees {
				return
			}
			for _, p := range []struct {
				method, path string
				body         any
			}{
				{"PATCH", "/tasks/" + onContact, map[string]any{"title": "X"}},
				{"PATCH", "/tasks/" + assigned, map[string]any{"title": "X"}},
				{"DELETE", "/tasks/" + onContact, nil},
				{"DELETE", "/tasks/" + assigned, nil},
				{"POST", "/tasks/" + onContact + "/comments", map[string]any{"content": "X"}},
				{"PATCH", "/appointments/" + appt, map[string]any{"title": "X"}},
				{"PATCH", "/appointments/" + appt + "?scope=this&" + occ, map[string]any{"title": "X"}},
				{"PATCH", "/appointments/" + appt + "?scope=following&" + occ, map[string]any{"title": "X"}},
				{"DELETE", "/appointments/" + appt + "?scope=this&" + occ, nil},
				{"DELETE", "/appointments/" + appt, nil},
			} {
				r := w.env.Do(t, apitest.Request{Method: p.method, Path: p.path, Key: key, Body: p.body, Header: merge})
				if r.Status != 404 || strings.Contains(string(r.Body), "Geheim") {
					t.Errorf("%s %s: %d %s, want 404", p.method, p.path, r.Status, r.Body)
				}
			}
		})
	}
	// Nothing the refused credentials sent changed anything.
	r := w.env.Do(t, apitest.Request{Path: "/appointments/" + appt, Key: w.co.Secret})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"exceptions":[]`) || !strings.Contains(string(r.Body), "Geheimer Termin") {
		t.Errorf("A's series after the probes: %d %s", r.Status, r.Body)
	}
	r = w.env.Do(t, apitest.Request{Path: "/tasks/" + onContact + "/comments", Key: w.co.Secret})
	if strings.Count(string(r.Body), `"content"`) != 1 {
		t.Errorf("A's comments after the probes: %s", r.Body)
	}
}
