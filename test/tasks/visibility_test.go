package tasks

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestTasksAppointments_Visibility: the matrix for tasks and appointments — own (assignee or
// owner), via a contact, delegated, all (company key and manager), another company, the
// sandbox key.
func TestTasksAppointments_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	anna, ben, carl := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	boss := env.NewUser(t, a, "manager")
	a.Delegate(t, ben.ID, carl.ID, nil) // carl sees what ben owns
	annaContact := addContact(t, env, a.ID, &anna.ID)
	own := mustCreate(t, env, a.Secret, map[string]any{"title": "bens", "assigneeId": ben.ID.String()})
	viaContact := mustCreate(t, env, a.Secret, map[string]any{"title": "annas contact", "assigneeId": ben.ID.String(), "contactId": annaContact})
	appt := env.Do(t, apitest.Request{Method: "POST", Path: "/appointments", Key: a.Secret, Body: map[string]any{"title": "bens appt",
		"startAt": "2026-05-04T10:00:00", "endAt": "2026-05-04T11:00:00", "ownerId": ben.ID.String()}})
	var ap struct {
		ID string `json:"id"`
	}
	appt.Decode(t, &ap)
	keys := map[string]string{
		"anna": a.UserKey(t, anna, "tasks:read", "appointments:read"), "ben": a.UserKey(t, ben, "tasks:read", "appointments:read"),
		"carl": a.UserKey(t, carl, "tasks:read", "appointments:read"), "boss": a.UserKey(t, boss, "tasks:read", "appointments:read"),
		"company": a.Secret, "B": b.Secret, "sandbox": a.TestSecret,
	}
	for _, tc := range []struct {
		who                   string
		own, viaContact, appt int
	}{
		{"ben", 200, 404, 200},  // assignee/owner; the contact's visibility wins over the assignee
		{"anna", 404, 200, 404}, // owns the contact only
		{"carl", 200, 404, 200}, // ben delegated to carl
		{"boss", 200, 200, 200}, // managers see everything
		{"company", 200, 200, 200},
		{"B", 404, 404, 404},
		{"sandbox", 404, 404, 404},
	} {
		k := keys[tc.who]
		for path, want := range map[string]int{"/tasks/" + own.ID: tc.own, "/tasks/" + viaContact.ID: tc.viaContact,
			"/tasks/" + own.ID + "/comments": tc.own, "/appointments/" + ap.ID: tc.appt} {
			if r := env.Do(t, apitest.Request{Path: path, Key: k}); r.Status != want {
				t.Errorf("%s GET %s: %d, want %d", tc.who, path, r.Status, want)
			}
		}
		n := 0
		for _, x := range list(t, env, k, "limit=200") {
			if x.ID == own.ID || x.ID == viaContact.ID {
				n++
			}
		}
		want := 0
		for _, s := range []int{tc.own, tc.viaContact} {
			if s == 200 {
				want++
			}
		}
		if n != want {
			t.Errorf("%s lists %d of the two tasks, want %d", tc.who, n, want)
		}
		r := env.Do(t, apitest.Request{Path: "/appointments?from=2026-05-01T00:00:00Z&to=2026-06-01T00:00:00Z", Key: k})
		var body struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		r.Decode(t, &body)
		if got := len(body.Data) == 1; got != (tc.appt == 200) {
			t.Errorf("%s lists %d appointments, want visible=%v", tc.who, len(body.Data), tc.appt == 200)
		}
	}
}
