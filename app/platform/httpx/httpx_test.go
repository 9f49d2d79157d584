package httpx

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
)

func TestToProblem(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{errs.BadRequest("malformed_json", "x"), 400, "malformed_json"},
		{errs.Unauthenticated("missing_credential", "x"), 401, "missing_credential"},
		{errs.Forbidden("insufficient_scope", "x"), 403, "insufficient_scope"},
		{errs.NotFound("x"), 404, "not_found"},
		{errs.Conflict("email_taken", "x"), 409, "email_taken"},
		{&errs.E{Kind: errs.ErrPrecondition, Code: "etag_mismatch"}, 412, "etag_mismatch"},
		{&errs.E{Kind: errs.ErrPreconditionReq, Code: "if_match_required"}, 428, "if_match_required"},
		{errs.InvalidField("limit", "out_of_range", "x"), 422, "validation_failed"},
		{&errs.E{Kind: errs.ErrRateLimited, Code: "rate_limited"}, 429, "rate_limited"},
		{fmt.Errorf("wrapped: %w", errs.NotFound("x")), 404, "not_found"},
		{fiber.ErrNotFound, 404, "route_not_found"},
		{fiber.ErrMethodNotAllowed, 405, "method_not_allowed"},
		{fiber.ErrRequestEntityTooLarge, 413, "payload_too_large"},
		{&ent.NotFoundError{}, 404, "not_found"},
		{&ent.ConstraintError{}, 409, "conflict"},
		{&ent.ValidationError{Name: "first_name"}, 422, "validation_failed"},
		{fmt.Errorf("query: %w", privacy.Deny), 403, "forbidden"},
		{errors.New("boom"), 500, "internal"},
	} {
		p := ToProblem(tc.err)
		if p.Status != tc.status || p.Code != tc.code || p.Type == "" || p.Title == "" {
			t.Errorf("ToProblem(%v) = %d %q %q, want %d %q", tc.err, p.Status, p.Code, p.Type, tc.status, tc.code)
		}
		if p.Status == 500 && p.Detail != "internal error" {
			t.Errorf("500 detail leaks %q", p.Detail)
		}
	}
	if p := ToProblem(&ent.ValidationError{Name: "first_name"}); p.Errors[0].Field != "firstName" {
		t.Errorf("field %q, want firstName", p.Errors[0].Field)
	}
}

func TestPager(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := NewPager([]byte("0123456789abcdef0123456789abcdef"), func() time.Time { return now })
	other := NewPager([]byte("another-secret-another-secret-xx"), func() time.Time { return now })
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	var issued string
	app.Get("/list", func(c *fiber.Ctx) error {
		q, err := p.Parse(c, "list?f="+c.Query("f"))
		if err != nil {
			return err
		}
		return WritePage(c, q, []int{1, 2, 3}, func(i int) []string { return []string{fmt.Sprint(i)} },
			Plain(func(i int) int { return i }))
	})
	app.Get("/issue", func(c *fiber.Ctx) error {
		q, _ := p.Parse(c, "list?f=")
		q.Limit = 2
		return WritePage(c, q, []int{1, 2, 3}, func(i int) []string { return []string{fmt.Sprint(i)} },
			Plain(func(i int) int { return i }))
	})
	get := func(path string) *http.Response {
		r, err := app.Test(newReq(path), -1)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	body := readPage(t, get("/issue"))
	if !body.Pagination.HasMore || len(body.Data) != 2 {
		t.Fatalf("page %+v", body)
	}
	issued = body.Pagination.NextCursor
	cur, code, _ := p.open(issued)
	if code != "" || fmt.Sprint(cur.Key) != "[2]" {
		t.Fatalf("cursor opened to %+v %q", cur, code)
	}
	if _, code, _ := other.open(issued); code != "invalid_cursor" {
		t.Errorf("another secret opened the cursor: %q", code)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/list?cursor=" + issued, 200},
		{"/list?cursor=" + issued + "x", 422},
		{"/list?f=other&cursor=" + issued, 422},
		{"/list?limit=201", 422},
		{"/list?limit=-1", 422},
		{"/list?limit=1.5", 422},
	} {
		if r := get(tc.path); r.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.path, r.StatusCode, tc.status)
		}
	}
	now = now.Add(CursorTTL + time.Second)
	if r := get("/list?cursor=" + issued); r.StatusCode != 422 {
		t.Errorf("expired cursor: %d", r.StatusCode)
	}
}
