package httpx

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

type testFilter struct {
	Since  *time.Time
	Status []string
	Owner  *uuid.UUID
	Fields map[string]bool `json:"-"` // shapes the answer, not the rows
}

func TestBinding_OneSpellingPerMeaning(t *testing.T) {
	berlin := time.Date(2026, 11, 27, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	utc := berlin.UTC()
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	a := Binding("tasks", testFilter{Since: &berlin, Status: []string{"open", "done"}, Owner: &id, Fields: map[string]bool{"x": true}})
	b := Binding("tasks", testFilter{Since: &utc, Status: []string{"done", "open"}, Owner: &id})
	if a != b {
		t.Errorf("the same filter in other spellings binds differently (offset vs UTC, order of a set, fields):\n%s\n%s", a, b)
	}
	want := `tasks?{"Owner":"11111111-2222-3333-4444-555555555555","Since":"2026-11-27T10:00:00Z","Status":["done","open"]}`
	if a != want {
		t.Errorf("binding %s, want %s", a, want)
	}
	if Binding("tasks", testFilter{}) != Binding("tasks", testFilter{Status: []string{}}) {
		t.Error("an empty list and no list filter alike, but bind differently")
	}
	for _, other := range []string{
		Binding("leads", testFilter{Since: &utc, Status: []string{"done", "open"}, Owner: &id}),
		Binding("tasks", testFilter{Since: &utc, Status: []string{"done"}, Owner: &id}),
		Binding("tasks", testFilter{Status: []string{"done", "open"}, Owner: &id}),
	} {
		if other == a {
			t.Errorf("another list or filter binds like this one: %s", other)
		}
	}
}

func TestServeList_FilterAndPageErrorsTogether(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := NewPager([]byte("0123456789abcdef0123456789abcdef"), func() time.Time { return now })
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	parse := func(c *fiber.Ctx, v *errs.Invalid) (testFilter, error) {
		return testFilter{Since: QueryTime(c, v, "since")}, nil
	}
	app.Get("/l", func(c *fiber.Ctx) error {
		_, _, err := ParseList(c, p, "l", parse)
		return err
	})
	res, err := app.Test(newReq("/l?since=yesterday&limit=0"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"since"`) || !strings.Contains(string(body), `"limit"`) {
		t.Errorf("got %d %s, want 422 naming since and limit", res.StatusCode, body)
	}
}
