package httpx

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

type note struct {
	ID      uuid.UUID
	Text    string
	Version int64
}

type noteInput struct {
	Text string `json:"text"`
}

func (in noteInput) Validate() error {
	var v errs.Invalid
	v.Require("text", in.Text != "")
	return v.Err()
}

// recipeApp serves PATCH and DELETE /notes/:id over one stored note through the recipes.
func recipeApp(required bool) (*fiber.App, *note, *int) {
	stored := &note{ID: uuid.New(), Text: "old", Version: 3}
	writes := 0
	lock := func(_ context.Context, id uuid.UUID) (*note, error) {
		if id != stored.ID {
			return nil, errs.NotFound("note %s", id)
		}
		return stored, nil
	}
	version := func(n *note) int64 { return n.Version }
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	app.Patch("/notes/:id", Patch[uuid.UUID, *note, noteInput]{Key: PathID("id"), Lock: lock, Version: version,
		IfMatchRequired: required,
		Input:           func(n *note) noteInput { return noteInput{Text: n.Text} },
		Update: func(_ context.Context, n *note, in noteInput) (*note, error) {
			writes++
			n.Text, n.Version = in.Text, n.Version+1
			return n, nil
		},
		View: View(func(n *note) note { return *n })}.Handle)
	app.Delete("/notes/:id", Delete[uuid.UUID, *note]{Key: PathID("id"), Lock: lock, Version: version,
		IfMatchRequired: required,
		Delete:          func(context.Context, *note) error { writes++; return nil }}.Handle)
	return app, stored, &writes
}

func TestRecipes(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, ifMatch, body string
		required                          bool
		status, writes                    int
		etag                              string
	}{
		{"patch merges and answers the new ETag", "PATCH", "", `"3"`, `{"text":"new"}`, false, 200, 1, `"4"`},
		{"patch without If-Match where optional", "PATCH", "", "", `{"text":"new"}`, false, 200, 1, `"4"`},
		{"patch without If-Match where required is 428", "PATCH", "", "", `{"text":"new"}`, true, 428, 0, ""},
		{"patch with a stale ETag is 412 and writes nothing", "PATCH", "", `"2"`, `{"text":"new"}`, false, 412, 0, ""},
		{"patch that breaks validation is 422 and writes nothing", "PATCH", "", `"3"`, `{"text":null}`, false, 422, 0, ""},
		{"patch of a bad id is 400", "PATCH", "/notes/x", "", `{"text":"new"}`, false, 400, 0, ""},
		{"patch of an unknown id is 404", "PATCH", "/notes/" + uuid.NewString(), "", `{"text":"new"}`, false, 404, 0, ""},
		{"delete with the ETag", "DELETE", "", `"3"`, "", true, 204, 1, ""},
		{"delete with a stale ETag is 412", "DELETE", "", `"1"`, "", false, 412, 0, ""},
		{"delete without If-Match where required is 428", "DELETE", "", "", "", true, 428, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, stored, writes := recipeApp(tc.required)
			path := tc.path
			if path == "" {
				path = "/notes/" + stored.ID.String()
			}
			req := httptest.NewRequest(tc.method, path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/merge-patch+json")
			if tc.ifMatch != "" {
				req.Header.Set("If-Match", tc.ifMatch)
			}
			res, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || *writes != tc.writes || res.Header.Get("ETag") != tc.etag {
				t.Errorf("got %d, %d writes, ETag %q (%s); want %d, %d writes, ETag %q",
					res.StatusCode, *writes, res.Header.Get("ETag"), body, tc.status, tc.writes, tc.etag)
			}
			if res.StatusCode == http.StatusOK && !strings.Contains(string(body), `"Text":"new"`) {
				t.Errorf("body %s, want the updated view", body)
			}
		})
	}
}

func TestRead(t *testing.T) {
	stored := &note{ID: uuid.New(), Text: "old", Version: 3}
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	app.Get("/notes/:id", Read[uuid.UUID, *note]{Key: PathID("id"),
		Get: func(_ context.Context, id uuid.UUID) (*note, error) {
			if id != stored.ID {
				return nil, errs.NotFound("note %s not found", id)
			}
			return stored, nil
		},
		Version: func(n *note) int64 { return n.Version },
		View:    View(func(n *note) note { return *n })}.Handle)
	// Finances before their first write: version 0 and yet an ETag.
	app.Get("/unwritten/:id", Read[uuid.UUID, note]{Key: PathID("id"),
		Get:     func(context.Context, uuid.UUID) (note, error) { return note{Text: "none yet"}, nil },
		Version: func(n note) int64 { return n.Version }, ETagAtZero: true,
		View: View(func(n note) note { return n })}.Handle)
	// A parent's unpaged list: {"data": [...]} and no ETag.
	app.Get("/lists/:id", Read[uuid.UUID, []note]{Key: PathID("id"),
		Get:  func(context.Context, uuid.UUID) ([]note, error) { return []note{*stored, *stored}, nil },
		View: DataView(func(n note) string { return n.Text })}.Handle)
	for _, tc := range []struct {
		name, path string
		status     int
		etag, body string
	}{
		{"the row, its view and ETag", "/notes/" + stored.ID.String(), 200, `"3"`, `"Text":"old"`},
		{"version 0 with ETagAtZero has ETag 0", "/unwritten/" + stored.ID.String(), 200, `"0"`, `"Text":"none yet"`},
		{"no Version, no ETag", "/lists/" + stored.ID.String(), 200, "", `{"data":["old","old"]}`},
		{"another id is 404", "/notes/" + uuid.NewString(), 404, "", "not found"},
		{"a malformed id is 400", "/notes/x", 400, "", ""},
	} {
		res, err := app.Test(httptest.NewRequest("GET", tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != tc.status || res.Header.Get("ETag") != tc.etag || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s: got %d ETag %q %s, want %d ETag %q containing %q", tc.name, res.StatusCode,
				res.Header.Get("ETag"), b, tc.status, tc.etag, tc.body)
		}
	}
}

func TestCreate(t *testing.T) {
	var made []note
	create := func(_ context.Context, in noteInput) (note, error) {
		n := note{ID: uuid.New(), Text: in.Text, Version: 1}
		made = append(made, n)
		return n, nil
	}
	parent := uuid.New()
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	app.Post("/notes", Create[noteInput, note]{Create: create,
		Location: func(n note) string { return "/notes/" + n.ID.String() },
		Version:  func(n note) int64 { return n.Version },
		View:     View(func(n note) note { return n })}.Handle)
	app.Post("/parents/:id/notes", CreateUnder[uuid.UUID, noteInput, note]{Key: PathID("id"),
		Create: func(ctx context.Context, p uuid.UUID, in noteInput) (note, error) {
			if p != parent {
				return note{}, errs.NotFound("parent %s not found", p)
			}
			return create(ctx, in)
		},
		View: View(func(n note) note { return n })}.Handle)
	for _, tc := range []struct {
		name, path, body string
		status, made     int
		location, etag   bool
	}{
		{"201 with Location and ETag", "/notes", `{"text":"a"}`, 201, 1, true, true},
		{"invalid body is 422, nothing made", "/notes", `{"text":""}`, 422, 0, false, false},
		{"malformed body is 400, nothing made", "/notes", `{`, 400, 0, false, false},
		{"under a parent: 201, no Location or ETag when not declared", "/parents/" + parent.String() + "/notes", `{"text":"a"}`, 201, 1, false, false},
		{"a malformed parent id is 400 before the body", "/parents/x/notes", `{`, 400, 0, false, false},
		{"an unknown parent is 404", "/parents/" + uuid.NewString() + "/notes", `{"text":"a"}`, 404, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			made = nil
			req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			res, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || len(made) != tc.made {
				t.Fatalf("got %d with %d made (%s), want %d with %d", res.StatusCode, len(made), body, tc.status, tc.made)
			}
			if got := res.Header.Get("Location") != ""; got != tc.location {
				t.Errorf("Location %q, want one: %v", res.Header.Get("Location"), tc.location)
			}
			if got := res.Header.Get("ETag") == `"1"`; got != tc.etag {
				t.Errorf("ETag %q, want \"1\": %v", res.Header.Get("ETag"), tc.etag)
			}
		})
	}
}
