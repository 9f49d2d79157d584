package httpx

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

type patchDoc struct {
	Name    *string                         `json:"name"`
	Address *struct{ City, Street *string } `json:"address"`
	Tags    []string                        `json:"tags"`
}

func (d *patchDoc) Validate() error { return nil }

func TestMergePatch_Handler(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler})
	app.Patch("/x", func(c *fiber.Ctx) error {
		name, city, street := "Ada", "Köln", "Ring 1"
		doc := &patchDoc{Name: &name, Tags: []string{"a", "b"}}
		doc.Address = &struct{ City, Street *string }{&city, &street}
		if err := IfMatch(c, 3, c.Query("required") == "1"); err != nil {
			return err
		}
		if err := MergePatch(c, doc); err != nil {
			return err
		}
		return c.JSON(doc)
	})
	for _, tc := range []struct {
		name, ct, body, ifMatch, query string
		status                         int
		want                           string
	}{
		{"absent keys stay, null clears, objects merge, arrays replace", "application/merge-patch+json",
			`{"name":null,"address":{"City":"Bonn"},"tags":["c"]}`, "", "", 200,
			`{"name":null,"address":{"City":"Bonn","Street":"Ring 1"},"tags":["c"]}`},
		{"application/json accepted", "application/json", `{"tags":[]}`, "", "", 200,
			`{"name":"Ada","address":{"City":"Köln","Street":"Ring 1"},"tags":[]}`},
		{"server-owned field", "application/merge-patch+json", `{"id":"x","createdAt":"y"}`, "", "", 422, ""},
		{"unknown field", "application/merge-patch+json", `{"nick":"x"}`, "", "", 422, ""},
		{"wrong type", "application/merge-patch+json", `{"tags":"x"}`, "", "", 422, ""},
		{"not an object", "application/merge-patch+json", `[1]`, "", "", 400, ""},
		{"malformed", "application/merge-patch+json", `{`, "", "", 400, ""},
		{"other media type", "text/plain", `{}`, "", "", 415, ""},
		{"matching If-Match", "application/json", `{}`, `"3"`, "", 200, ""},
		{"one of several tags", "application/json", `{}`, `"1", "3"`, "", 200, ""},
		{"star", "application/json", `{}`, `*`, "", 200, ""},
		{"stale If-Match", "application/json", `{}`, `"2"`, "", 412, ""},
		{"weak tag never matches", "application/json", `{}`, `W/"3"`, "", 412, ""},
		{"required and missing", "application/json", `{}`, "", "1", 428, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPatch, "/x?required="+tc.query, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ct)
			if tc.ifMatch != "" {
				req.Header.Set("If-Match", tc.ifMatch)
			}
			resp, err := app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			_, _ = body.ReadFrom(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body.String())
			}
			if tc.want != "" && strings.TrimSpace(body.String()) != tc.want {
				t.Errorf("got %s\nwant %s", body.String(), tc.want)
			}
		})
	}
}
