package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// The examples of RFC 7396 Appendix A.
func TestApplyMergePatch_RFC7396(t *testing.T) {
	for _, tc := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	} {
		var target, patch any
		_ = json.Unmarshal([]byte(tc.target), &target)
		_ = json.Unmarshal([]byte(tc.patch), &patch)
		got, _ := json.Marshal(ApplyMergePatch(target, patch))
		var a, b any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal([]byte(tc.want), &b)
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if string(ga) != string(gb) {
			t.Errorf("MergePatch(%s, %s) = %s, want %s", tc.target, tc.patch, ga, gb)
		}
	}
}

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
