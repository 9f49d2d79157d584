package httpx

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

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
	for _, tc := range []struct {
		name, path string
		status     int
		etag, body string
	}{
		{"the row, its view and ETag", "/notes/" + stored.ID.String(), 200, `"3"`, `"Text":"old"`},
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
