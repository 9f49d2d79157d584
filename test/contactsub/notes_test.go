package contactsub

import (
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func timeline(t *testing.T, env *apitest.Env, key, contact, query string) []activity {
	t.Helper()
	var page apitest.Page[activity]
	must(t, do(t, env, "GET", "/contacts/"+contact+"/activities"+query, key, nil), 200).Decode(t, &page)
	return page.Data
}

func TestContactSub_Notes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	ada := insertContact(t, env, a.ID, "private", "Lovelace", nil)
	base := "/contacts/" + ada + "/notes"

	text := "Erstgespräch\n\n- **BU** gewünscht\r\n- Rückruf Montag"
	r := must(t, do(t, env, "POST", base, a.Secret, map[string]any{"content": text, "occurredAt": "2026-01-02T10:00:00",
		"externalReferences": []map[string]any{{"source": "crm", "externalId": "n-1"}}}), 201)
	var note activity
	r.Decode(t, &note)
	if note.Content != text || note.Type != "note" || note.Event != nil {
		t.Errorf("note %+v, want the content as entered", note)
	}
	if at, err := time.Parse(time.RFC3339, note.OccurredAt); err != nil || !at.Equal(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("occurredAt %s, want 10:00 Berlin time", note.OccurredAt)
	}
	loc := strings.TrimPrefix(r.Header.Get("Location"), "/api/public/v1")
	must(t, do(t, env, "GET", loc, a.Secret, nil), 200)
	etag := r.Header.Get("ETag")
	long := strings.Repeat("ä", 50000)
	must(t, do(t, env, "POST", base, a.Secret, map[string]any{"content": long}), 201)
	must(t, do(t, env, "POST", "/contacts/"+ada+"/phones", a.Secret, map[string]any{"number": "030 1234567"}), 201)

	env.Run(t, []apitest.Case{
		{Name: "content too long", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"content": long + "x"}, Status: 422},
		{Name: "content missing", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{}, Status: 422},
		{Name: "content blank", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"content": " \n "}, Status: 422},
		{Name: "bad occurredAt", Key: a.Secret, Method: "POST", Path: base, Body: map[string]any{"content": "x", "occurredAt": "gestern"}, Status: 422},
		{Name: "external reference taken", Key: a.Secret, Method: "POST", Path: base,
			Body:   map[string]any{"content": "x", "externalReferences": []map[string]any{{"source": "crm", "externalId": "n-1"}}},
			Status: 409, Problem: "external_reference_taken"},
		{Name: "other company adds", Key: b.Secret, Method: "POST", Path: base, Body: map[string]any{"content": "x"}, Status: 404},
		{Name: "other company reads", Key: b.Secret, Path: loc, Status: 404},
		{Name: "other company patches", Key: b.Secret, Method: "PATCH", Path: loc, Body: map[string]any{"content": "x"}, Status: 404},
		{Name: "other company deletes", Key: b.Secret, Method: "DELETE", Path: loc, Status: 404},
		{Name: "other company lists", Key: b.Secret, Path: "/contacts/" + ada + "/activities", Status: 404},
		{Name: "activities scope missing", Key: a.KeyWithScopes(t, "contacts:write"), Method: "POST", Path: base, Body: map[string]any{"content": "x"}, Status: 403},
		{Name: "patch other fields", Key: a.Secret, Method: "PATCH", Path: loc, Body: map[string]any{"content": "x", "occurredAt": "2026-01-01T00:00:00Z"}, Status: 422},
		{Name: "patch without content", Key: a.Secret, Method: "PATCH", Path: loc, Body: map[string]any{}, Status: 422},
		{Name: "patch", Key: a.Secret, Method: "PATCH", Path: loc, Header: map[string]string{"If-Match": etag},
			Body: map[string]any{"content": "Rückruf erledigt\n"}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var n activity
				r.Decode(t, &n)
				if n.Content != "Rückruf erledigt\n" {
					t.Errorf("content %q", n.Content)
				}
			}},
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: loc, Header: map[string]string{"If-Match": etag},
			Body: map[string]any{"content": "y"}, Status: 412, Problem: "etag_mismatch"},
		{Name: "bad filter", Key: a.Secret, Path: "/contacts/" + ada + "/activities?filter=calls", Status: 422},
		{Name: "bad limit", Key: a.Secret, Path: "/contacts/" + ada + "/activities?limit=0", Status: 422},
	})

	all := timeline(t, env, a.Secret, ada, "")
	if len(all) != 3 || all[0].Type != "system" || all[2].ID != note.ID {
		t.Fatalf("timeline %+v: want the phone entry, the long note, then the backdated note", all)
	}
	notes := timeline(t, env, a.Secret, ada, "?filter=notes")
	system := timeline(t, env, a.Secret, ada, "?filter=system")
	if len(notes) != 2 || len(system) != 1 || *system[0].Event != "phone.created" {
		t.Errorf("filters: %d notes, %d system entries", len(notes), len(system))
	}
	if n := len(timeline(t, env, a.Secret, ada, "?filter=emails")); n != 0 {
		t.Errorf("%d e-mails", n)
	}
	// Paging newest first with a cursor.
	var page apitest.Page[activity]
	must(t, do(t, env, "GET", "/contacts/"+ada+"/activities?limit=2", a.Secret, nil), 200).Decode(t, &page)
	var rest apitest.Page[activity]
	must(t, do(t, env, "GET", "/contacts/"+ada+"/activities?limit=2&cursor="+page.Pagination.NextCursor, a.Secret, nil), 200).Decode(t, &rest)
	if len(page.Data) != 2 || len(rest.Data) != 1 || rest.Data[0].ID != note.ID {
		t.Errorf("pages %d + %d", len(page.Data), len(rest.Data))
	}
	must(t, do(t, env, "GET", "/contacts/"+ada+"/activities?filter=notes&cursor="+page.Pagination.NextCursor, a.Secret, nil), 422)

	// System entries are no notes.
	must(t, do(t, env, "DELETE", base+"/"+system[0].ID, a.Secret, nil), 404)
	must(t, do(t, env, "PATCH", base+"/"+system[0].ID, a.Secret, map[string]any{"content": "x"}), 404)
	must(t, do(t, env, "DELETE", loc, a.Secret, nil), 204)
	must(t, do(t, env, "DELETE", loc, a.Secret, nil), 404)
	// The external id is free again.
	must(t, do(t, env, "POST", base, a.Secret, map[string]any{"content": "x",
		"externalReferences": []map[string]any{{"source": "crm", "externalId": "n-1"}}}), 201)

	var ev apitest.Page[struct {
		Type string `json:"type"`
	}]
	must(t, do(t, env, "GET", "/events?types=note.created,note.updated,note.deleted&limit=100", a.Secret, nil), 200).Decode(t, &ev)
	if len(ev.Data) != 5 {
		t.Errorf("%d note events, want 3 created, 1 updated, 1 deleted", len(ev.Data))
	}
}

// TestContactSub_ActivitiesWalk: a walk through the timeline while notes are added returns
// every entry that existed at its start exactly once (new ones sort before the cursor).
func TestContactSub_ActivitiesWalk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ada := insertContact(t, env, co.ID, "private", "Lovelace", nil)
	want := map[string]bool{}
	for range 7 {
		var a activity
		must(t, do(t, env, "POST", "/contacts/"+ada+"/notes", co.Secret, map[string]any{"content": "n",
			"occurredAt": time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).Format(time.RFC3339)}), 201).Decode(t, &a) // equal times: id breaks ties
		want[a.ID] = true
	}
	seen := map[string]int{}
	cursor := ""
	for page := 0; page < 10; page++ {
		var p struct {
			Data       []activity
			Pagination struct {
				NextCursor string
				HasMore    bool
			}
		}
		must(t, do(t, env, "GET", "/contacts/"+ada+"/activities?limit=2&cursor="+cursor, co.Secret, nil), 200).Decode(t, &p)
		for _, a := range p.Data {
			seen[a.ID]++
		}
		must(t, do(t, env, "POST", "/contacts/"+ada+"/notes", co.Secret, map[string]any{"content": "während"}), 201)
		cursor = p.Pagination.NextCursor
		if !p.Pagination.HasMore {
			break
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("note %s seen %d times", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("the walk saw %d entries, want the %d that existed", len(seen), len(want))
	}
}
