package httpx

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

type decodeInput struct {
	Title *string `json:"title,omitempty"`
	Note  *string `json:"note,omitempty"`
}

func (in *decodeInput) Validate() error {
	var v errs.Invalid
	v.Require("title", in.Title != nil)
	return v.Err()
}

// TestDecode_Shapes: a body of the wrong JSON type is 400 malformed_json (no field to name);
// null for a member the route marks non-nullable is 422 not_nullable, listed with the
// validator's other errors once per field; a documented query parameter that is not UTF-8
// text is 422 invalid_encoding.
func TestDecode_Shapes(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	handle := func(c *fiber.Ctx) error {
		if err := CheckQuery(c, map[string]bool{"q": true}); err != nil {
			return err
		}
		SetNonNullable(c, map[string]bool{"title": true, "note": true})
		var in decodeInput
		if err := Decode(c, &in); err != nil {
			return err
		}
		return c.SendStatus(http.StatusNoContent)
	}
	app.Post("/x", handle)
	for _, tc := range []struct {
		name, query, body string
		status            int
		code              string
		fields            string
	}{
		{"object", "", `{"title":"a"}`, 204, "", ""},
		{"array", "", `[]`, 400, "malformed_json", ""},
		{"string", "", `"x"`, 400, "malformed_json", ""},
		{"number", "", `1`, 400, "malformed_json", ""},
		{"null", "", ` null `, 400, "malformed_json", ""},
		{"member of the wrong type", "", `{"title":1}`, 422, "validation_failed", "title"},
		{"null member", "", `{"title":"a","note":null}`, 422, "validation_failed", "note"},
		{"null required member", "", `{"title":null,"note":null}`, 422, "validation_failed", "note,title"},
		{"the word null in a value", "", `{"title":"null"}`, 204, "", ""},
		{"query invalid UTF-8", "?q=%ff", `{"title":"a"}`, 422, "validation_failed", "q"},
		{"query NUL", "?q=a%00b", `{"title":"a"}`, 422, "validation_failed", "q"},
		{"query parameter nobody reads", "?z=%ff", `{"title":"a"}`, 204, "", ""},
		{"query UTF-8", "?q=M%C3%BCller", `{"title":"a"}`, 204, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/x"+tc.query, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.code == "" {
				return
			}
			var p Problem
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			if p.Code != tc.code {
				t.Errorf("code %q, want %q: %s", p.Code, tc.code, body)
			}
			var fields []string
			for _, e := range p.Errors {
				fields = append(fields, e.Field)
			}
			if strings.Join(fields, ",") != tc.fields {
				t.Errorf("fields %v, want %s: %s", fields, tc.fields, body)
			}
		})
	}
}
