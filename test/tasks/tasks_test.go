// Package tasks tests /tasks and their comments: CRUD, the list by due date, completion
// events, threaded comments and company isolation.
package tasks

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type task struct {
	ID                 string     `json:"id"`
	Title              string     `json:"title"`
	Description        string     `json:"description"`
	ContactID          *string    `json:"contactId"`
	LeadID             *string    `json:"leadId"`
	AssigneeID         *string    `json:"assigneeId"`
	CreatorID          *string    `json:"creatorId"`
	DueAt              *time.Time `json:"dueAt"`
	Priority           string     `json:"priority"`
	Status             string     `json:"status"`
	CompletedAt        *time.Time `json:"completedAt"`
	ExternalReferences []struct {
		Source     string `json:"source"`
		ExternalID string `json:"externalId"`
	} `json:"externalReferences"`
}

type comment struct {
	ID              string  `json:"id"`
	TaskID          string  `json:"taskId"`
	ParentCommentID *string `json:"parentCommentId"`
	AuthorID        *string `json:"authorId"`
	Content         string  `json:"content"`
}

func mustCreate(t *testing.T, env *apitest.Env, key string, body any) task {
	t.Helper()
	return apitest.Create[task](t, env, key, "/tasks", body)
}

func list(t *testing.T, env *apitest.Env, key, query string) []task {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/tasks?" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("list tasks: %d %s", r.Status, r.Body)
	}
	var p apitest.Page[task]
	r.Decode(t, &p)
	return p.Data
}

func titles(ts []task) []string {
	out := []string{}
	for _, x := range ts {
		out = append(out, x.Title)
	}
	return out
}

// addContact stores a contact (the contacts endpoints are another issue's).
func addContact(t *testing.T, env *apitest.Env, companyID uuid.UUID, ownerID *uuid.UUID) string {
	t.Helper()
	var id string
	env.InCompany(t, companyID, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName("Kai").SetLastName("Kunde").SetNillableOwnerID(ownerID).Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

type event struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

func events(t *testing.T, env *apitest.Env, key, types string) []event {
	t.Helper()
	var p apitest.Page[event]
	r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=" + types, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &p)
	return p.Data
}

func TestTasks_Create(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	b := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	contact := addContact(t, env, a.ID, nil)
	bContact := addContact(t, env, b.ID, nil)
	userKey := a.UserKey(t, agent, "tasks:write")

	env.Run(t, []apitest.Case{
		{Name: "full task", Key: a.Secret, Method: "POST", Path: "/tasks", Status: 201,
			Body: map[string]any{"title": " Rückruf Kfz ", "description": "Angebot besprechen", "contactId": contact,
				"assigneeId": agent.ID.String(), "dueAt": "2026-12-01T09:00:00", "priority": "high",
				"externalReferences": []map[string]string{{"source": "ams", "externalId": "T-1"}}},
			Check: func(t *testing.T, r *apitest.Response) {
				var x task
				r.Decode(t, &x)
				if x.Title != "Rückruf Kfz" || *x.ContactID != contact || *x.AssigneeID != agent.ID.String() ||
					x.Priority != "high" || x.Status != "open" || x.CompletedAt != nil || x.CreatorID != nil ||
					!x.DueAt.Equal(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)) || len(x.ExternalReferences) != 1 {
					t.Errorf("got %+v", x)
				}
				if r.Header.Get("Location") != "/api/public/v1/tasks/"+x.ID || r.Header.Get("ETag") != `"1"` {
					t.Errorf("Location %q ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
				}
			}},
		{Name: "title alone; defaults", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"title":"Anrufen"}`, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				var x task
				r.Decode(t, &x)
				if x.Priority != "normal" || x.Status != "open" || x.DueAt != nil {
					t.Errorf("got %+v", x)
				}
			}},
		{Name: "user key records its creator", Key: userKey, Method: "POST", Path: "/tasks", Body: `{"title":"Mine"}`, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				var x task
				r.Decode(t, &x)
				if x.CreatorID == nil || *x.CreatorID != agent.ID.String() {
					t.Errorf("creator %v, want %s", x.CreatorID, agent.ID)
				}
			}},
		{Name: "created done is completed", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"title":"Erledigt","status":"done"}`,
			Status: 201, Check: func(t *testing.T, r *apitest.Response) {
				var x task
				r.Decode(t, &x)
				if x.CompletedAt == nil {
					t.Error("completedAt not set")
				}
			}},
		{Name: "title required", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"description":"x"}`, Status: 422,
			Problem: "validation_failed", Check: apitest.FieldErrors("title:required")},
		{Name: "blank title", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"title":"  "}`, Status: 422, Check: apitest.FieldErrors("title:required")},
		{Name: "every bad field is listed", Key: a.Secret, Method: "POST", Path: "/tasks", Status: 422,
			Body: map[string]any{"title": strings.Repeat("x", 501), "contactId": "x", "leadId": "y", "assigneeId": "z",
				"dueAt": "tomorrow", "priority": "asap", "status": "closed", "externalReferences": []map[string]string{{"source": "", "externalId": "1"}}},
			Check: apitest.FieldErrors("title:too_long", "contactId:invalid_uuid", "leadId:invalid_uuid", "assigneeId:invalid_uuid",
				"dueAt:invalid_datetime", "priority:invalid_enum", "status:invalid_enum", "externalReferences.0.source:invalid_length")},
		{Name: "unknown references, B's contact among them", Key: a.Secret, Method: "POST", Path: "/tasks", Status: 422,
			Body:  map[string]any{"title": "x", "contactId": bContact, "leadId": uuid.NewString(), "assigneeId": b.Admin.ID.String()},
			Check: apitest.FieldErrors("contactId:unknown_contact", "leadId:unknown_lead", "assigneeId:unknown_user")},
		{Name: "completedAt is the server's", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"title":"x","completedAt":"2026-01-01T00:00:00Z"}`,
			Status: 422, Check: apitest.FieldErrors("completedAt:unknown_field")},
		{Name: "wrong type", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"title":1}`, Status: 422, Check: apitest.FieldErrors("title:invalid_type")},
		{Name: "malformed JSON", Key: a.Secret, Method: "POST", Path: "/tasks", Body: `{"title":`, Status: 400, Problem: "malformed_json"},
		{Name: "taken external reference", Key: a.Secret, Method: "POST", Path: "/tasks", Status: 409, Problem: "external_reference_taken",
			Body: map[string]any{"title": "x", "externalReferences": []map[string]string{{"source": "ams", "externalId": "T-1"}}}},
		{Name: "no key", Method: "POST", Path: "/tasks", Body: `{"title":"x"}`, Status: 401, Problem: "missing_credential"},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "tasks:read"), Method: "POST", Path: "/tasks", Body: `{"title":"x"}`,
			Status: 403, Problem: "insufficient_scope"},
	})
	// Nothing half-written: only the four created tasks exist.
	if got := list(t, env, a.Secret, "limit=200"); len(got) != 4 {
		t.Errorf("%d tasks, want 4: %v", len(got), titles(got))
	}
}

func TestTasks_CreateIdempotent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	h := map[string]string{"Idempotency-Key": "task-once"}
	r1 := env.Do(t, apitest.Request{Method: "POST", Path: "/tasks", Key: a.Secret, Body: `{"title":"Once"}`, Header: h})
	r2 := env.Do(t, apitest.Request{Method: "POST", Path: "/tasks", Key: a.Secret, Body: `{"title":"Once"}`, Header: h})
	if r1.Status != 201 || r2.Status != 201 || string(r1.Body) != string(r2.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("first %d, second %d %q", r1.Status, r2.Status, r2.Header.Get("Idempotent-Replayed"))
	}
	env.Run(t, []apitest.Case{{Name: "the key again with another body", Key: a.Secret, Method: "POST", Path: "/tasks",
		Body: `{"title":"Twice"}`, Header: h, Status: 422, Problem: "idempotency_key_reused"}})
	if n := len(list(t, env, a.Secret, "")); n != 1 {
		t.Errorf("%d tasks, want 1", n)
	}
}

func TestTasks_GetPatchDelete(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	x := mustCreate(t, env, a.Secret, map[string]any{"title": "Rückruf", "dueAt": "2026-12-01T09:00:00+01:00"})
	other := mustCreate(t, env, a.Secret, map[string]any{"title": "Andere", "externalReferences": []map[string]string{{"source": "ams", "externalId": "T-9"}}})
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret, Body: map[string]any{"type": "private",
		"firstName": "K", "lastName": "K", "externalReferences": []map[string]string{{"source": "ams", "externalId": "K-1"}}}}); r.Status != 201 {
		t.Fatalf("contact: %d %s", r.Status, r.Body)
	}
	var refs21 []map[string]string
	for i := range 21 {
		refs21 = append(refs21, map[string]string{"source": "ams", "externalId": fmt.Sprint("R-", i)})
	}
	one := "/tasks/" + x.ID
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	env.Run(t, []apitest.Case{
		{Name: "get", Key: a.Secret, Path: one, Status: 200},
		{Name: "get bad id", Key: a.Secret, Path: "/tasks/nope", Status: 400},
		{Name: "get unknown", Key: a.Secret, Path: "/tasks/" + uuid.NewString(), Status: 404, Problem: "not_found"},
		{Name: "get B's view", Key: b.Secret, Path: one, Status: 404},
		{Name: "patch priority", Key: a.Secret, Method: "PATCH", Path: one, Header: merge, Body: `{"priority":"urgent","dueAt":null}`, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var y task
				r.Decode(t, &y)
				if y.Priority != "urgent" || y.DueAt != nil || y.Title != "Rückruf" || r.Header.Get("ETag") != `"2"` {
					t.Errorf("got %+v %s", y, r.Header.Get("ETag"))
				}
			}},
		{Name: "patch with a stale If-Match", Key: a.Secret, Method: "PATCH", Path: one, Header: map[string]string{"If-Match": `"1"`},
			Body: `{"priority":"low"}`, Status: 412},
		{Name: "patch clears the title", Key: a.Secret, Method: "PATCH", Path: one, Body: `{"title":null}`, Status: 422, Check: apitest.FieldErrors("title:required")},
		{Name: "patch bad status", Key: a.Secret, Method: "PATCH", Path: one, Body: `{"status":"closed"}`, Status: 422, Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "patch completedAt", Key: a.Secret, Method: "PATCH", Path: one, Body: `{"completedAt":"2026-01-01T00:00:00Z"}`, Status: 422},
		{Name: "patch id", Key: a.Secret, Method: "PATCH", Path: one, Body: `{"id":"x"}`, Status: 422, Check: apitest.FieldErrors("id:read_only_field")},
		{Name: "patch another task's external reference", Key: a.Secret, Method: "PATCH", Path: one, Status: 409, Problem: "external_reference_taken",
			Body: map[string]any{"externalReferences": []map[string]string{{"source": "ams", "externalId": "T-9"}}}},
		{Name: "a contact's reference is no task's", Key: a.Secret, Method: "PATCH", Path: "/tasks/" + other.ID, Status: 200,
			Body: map[string]any{"externalReferences": []map[string]string{{"source": "ams", "externalId": "T-9"}, {"source": "ams", "externalId": "K-1"}}}},
		{Name: "too many external references", Key: a.Secret, Method: "PATCH", Path: one, Status: 422, Body: map[string]any{"externalReferences": refs21},
			Check: apitest.FieldErrors("externalReferences:too_many")},
		{Name: "patch unknown", Key: a.Secret, Method: "PATCH", Path: "/tasks/" + uuid.NewString(), Body: `{"title":"x"}`, Status: 404},
		{Name: "patch malformed", Key: a.Secret, Method: "PATCH", Path: one, Body: `[`, Status: 400},
		{Name: "patch B", Key: b.Secret, Method: "PATCH", Path: one, Body: `{"title":"pwned"}`, Status: 404},
		{Name: "delete B", Key: b.Secret, Method: "DELETE", Path: one, Status: 404},
		{Name: "delete stale", Key: a.Secret, Method: "DELETE", Path: one, Header: map[string]string{"If-Match": `"1"`}, Status: 412},
		{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 204},
		{Name: "gone", Key: a.Secret, Path: one, Status: 404},
		{Name: "delete again", Key: a.Secret, Method: "DELETE", Path: one, Status: 404},
	})
	got := events(t, env, a.Secret, "task.created,task.updated,task.deleted,task.completed")
	var types []string
	for _, e := range got {
		types = append(types, e.Type)
	}
	if !slices.Equal(types, []string{"task.created", "task.created", "task.updated", "task.updated", "task.deleted"}) { // x and other
		t.Errorf("events %v", types)
	}
	if len(events(t, env, b.Secret, "task.created,task.updated,task.deleted")) != 0 {
		t.Error("B sees A's task events")
	}
}

func TestTasks_CompleteOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	x := mustCreate(t, env, a.Secret, map[string]any{"title": "Police schicken"})
	patch := func(body string) task {
		r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/tasks/" + x.ID, Key: a.Secret, Body: body})
		if r.Status != 200 {
			t.Fatalf("patch %s: %d %s", body, r.Status, r.Body)
		}
		var y task
		r.Decode(t, &y)
		return y
	}
	done := patch(`{"status":"done"}`)
	if done.CompletedAt == nil || done.Status != "done" {
		t.Fatalf("got %+v", done)
	}
	again := patch(`{"status":"done"}`)
	if !again.CompletedAt.Equal(*done.CompletedAt) {
		t.Errorf("completedAt moved from %v to %v", done.CompletedAt, again.CompletedAt)
	}
	if n := len(events(t, env, a.Secret, "task.completed")); n != 1 {
		t.Errorf("%d task.completed, want 1 after setting done twice", n)
	}
	reopened := patch(`{"status":"in_progress"}`)
	if reopened.CompletedAt != nil {
		t.Errorf("reopened keeps completedAt %v", reopened.CompletedAt)
	}
	patch(`{"status":"done"}`)
	if n := len(events(t, env, a.Secret, "task.completed")); n != 2 {
		t.Errorf("%d task.completed, want 2 after completing again", n)
	}
	if n := len(events(t, env, a.Secret, "task.updated")); n != 3 {
		t.Errorf("%d task.updated, want 3 (done, reopened, done; the no-op records nothing)", n)
	}
}

func TestTasks_List(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	contact := addContact(t, env, a.ID, nil)
	mustCreate(t, env, a.Secret, map[string]any{"title": "no due"})
	mustCreate(t, env, a.Secret, map[string]any{"title": "dec", "dueAt": "2026-12-10T10:00:00Z", "assigneeId": agent.ID.String(), "priority": "high"})
	mustCreate(t, env, a.Secret, map[string]any{"title": "nov", "dueAt": "2026-11-10T10:00:00Z", "contactId": contact, "status": "done"})
	mustCreate(t, env, a.Secret, map[string]any{"title": "nov2", "dueAt": "2026-11-10T10:00:00Z", "status": "in_progress"})
	mustCreate(t, env, a.Secret, map[string]any{"title": "no due 2"})

	all := list(t, env, a.Secret, "")
	if got := titles(all); !slices.Equal(got[:3], []string{"nov", "nov2", "dec"}) && !slices.Equal(got[:3], []string{"nov2", "nov", "dec"}) ||
		len(got) != 5 || all[3].DueAt != nil || all[4].DueAt != nil {
		t.Errorf("order %v: by due date, none last", got)
	}
	for _, tc := range []struct{ query, want string }{
		{"assigneeId=" + agent.ID.String(), "dec"},
		{"contactId=" + contact, "nov"},
		{"status=done,in_progress", "nov,nov2"},
		{"status=open", "dec,no due,no due 2"},
		{"priority=high", "dec"},
		{"dueFrom=2026-11-01T00:00:00Z&dueTo=2026-11-30T00:00:00Z", "nov,nov2"},
		{"dueFrom=2026-12-01T00:00:00", "dec"},
	} {
		got := titles(list(t, env, a.Secret, tc.query))
		slices.Sort(got)
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s: %v, want %s", tc.query, got, tc.want)
		}
	}
	// Paging one by one walks the same order, past the tasks without a due date.
	var walked []string
	cursor := ""
	for range 10 {
		r := env.Do(t, apitest.Request{Path: "/tasks?limit=1" + cursor, Key: a.Secret})
		var p apitest.Page[task]
		r.Decode(t, &p)
		walked = append(walked, titles(p.Data)...)
		if !p.Pagination.HasMore {
			break
		}
		cursor = "&cursor=" + p.Pagination.NextCursor
	}
	if !slices.Equal(walked, titles(all)) {
		t.Errorf("paged %v, want %v", walked, titles(all))
	}
	env.Run(t, []apitest.Case{
		{Name: "bad filters", Key: a.Secret, Path: "/tasks?status=closed&priority=x&assigneeId=1&dueFrom=x&limit=0", Status: 422,
			Check: apitest.FieldErrors("dueFrom:invalid_datetime", "assigneeId:invalid_uuid", "status:invalid_enum", "priority:invalid_enum", "limit:out_of_range")},
		{Name: "inverted range", Key: a.Secret, Path: "/tasks?dueFrom=2026-12-01T00:00:00Z&dueTo=2026-11-01T00:00:00Z", Status: 422,
			Check: apitest.FieldErrors("dueTo:invalid_range")},
		{Name: "cursor of other filters", Key: a.Secret, Path: "/tasks?status=open&cursor=" + func() string {
			var p apitest.Page[task]
			env.Do(t, apitest.Request{Path: "/tasks?limit=1", Key: a.Secret}).Decode(t, &p)
			return p.Pagination.NextCursor
		}(), Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "no scope", Key: a.KeyWithScopes(t, "leads:read"), Path: "/tasks", Status: 403},
	})
}

func TestTasks_Comments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	x := mustCreate(t, env, a.Secret, map[string]any{"title": "Schaden", "assigneeId": agent.ID.String()})
	y := mustCreate(t, env, a.Secret, map[string]any{"title": "Other"})
	path := "/tasks/" + x.ID + "/comments"
	post := func(key string, body any) comment {
		r := env.Do(t, apitest.Request{Method: "POST", Path: path, Key: key, Body: body})
		if r.Status != 201 {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
		var c comment
		r.Decode(t, &c)
		return c
	}
	first := post(a.UserKey(t, agent, "tasks:write"), map[string]any{"content": "Kunde angerufen"})
	if first.AuthorID == nil || *first.AuthorID != agent.ID.String() || first.TaskID != x.ID || first.ParentCommentID != nil {
		t.Errorf("first %+v", first)
	}
	reply := post(a.Secret, map[string]any{"content": "Danke", "parentCommentId": first.ID})
	post(a.Secret, map[string]any{"content": "Antwort auf Antwort", "parentCommentId": reply.ID})
	otherTask := func() string {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/tasks/" + y.ID + "/comments", Key: a.Secret, Body: `{"content":"y"}`})
		var c comment
		r.Decode(t, &c)
		return c.ID
	}()
	env.Run(t, []apitest.Case{
		{Name: "content required", Key: a.Secret, Method: "POST", Path: path, Body: `{}`, Status: 422, Check: apitest.FieldErrors("content:required")},
		{Name: "content 10000", Key: a.Secret, Method: "POST", Path: path, Body: map[string]any{"content": strings.Repeat("ä", 10000)}, Status: 201},
		{Name: "content 10001", Key: a.Secret, Method: "POST", Path: path, Body: map[string]any{"content": strings.Repeat("ä", 10001)},
			Status: 422, Check: apitest.FieldErrors("content:too_long")},
		{Name: "parent of another task", Key: a.Secret, Method: "POST", Path: path, Body: map[string]any{"content": "x", "parentCommentId": otherTask},
			Status: 422, Check: apitest.FieldErrors("parentCommentId:unknown_comment")},
		{Name: "parent not a uuid", Key: a.Secret, Method: "POST", Path: path, Body: `{"content":"x","parentCommentId":"1"}`,
			Status: 422, Check: apitest.FieldErrors("parentCommentId:invalid_uuid")},
		{Name: "unknown task", Key: a.Secret, Method: "POST", Path: "/tasks/" + uuid.NewString() + "/comments", Body: `{"content":"x"}`, Status: 404},
		{Name: "B's post", Key: b.Secret, Method: "POST", Path: path, Body: `{"content":"x"}`, Status: 404},
		{Name: "B's list", Key: b.Secret, Path: path, Status: 404},
		{Name: "read scope cannot post", Key: a.KeyWithScopes(t, "tasks:read"), Method: "POST", Path: path, Body: `{"content":"x"}`, Status: 403},
	})
	var walked []string
	cursor := ""
	for range 10 {
		r := env.Do(t, apitest.Request{Path: path + "?limit=2" + cursor, Key: a.Secret})
		if r.Status != 200 {
			t.Fatalf("comments: %d %s", r.Status, r.Body)
		}
		var p apitest.Page[comment]
		r.Decode(t, &p)
		for _, c := range p.Data {
			walked = append(walked, c.Content[:min(len(c.Content), 6)])
		}
		if !p.Pagination.HasMore {
			break
		}
		cursor = "&cursor=" + p.Pagination.NextCursor
	}
	if fmt.Sprint(walked) != fmt.Sprint([]string{"Kunde ", "Danke", "Antwor", strings.Repeat("ä", 3)}) {
		t.Errorf("comments oldest first: %q", walked)
	}
	// Deleting the task removes its comments.
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/tasks/" + x.ID, Key: a.Secret}); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, apitest.Request{Path: path, Key: a.Secret}); r.Status != 404 {
		t.Errorf("comments of a deleted task: %d", r.Status)
	}
	if n := len(events(t, env, a.Secret, "task_comment.created")); n != 5 {
		t.Errorf("%d task_comment.created, want 5", n)
	}
}
