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
