package openapi_test

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/openapi"
)

//go:embed openapi.yaml
var source []byte

//go:embed areas/*.yaml
var areaFiles embed.FS

func TestOpenAPI_Document(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi version %q, want 3.1.0", doc.OpenAPI)
	}
	for _, name := range []string{"Problem", "ValidationProblem", "Company", "User", "Me", "Pagination"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	// 405 has no component: no operation answers it (the method is the operation); the error
	// table in info.description documents it, and the harness checks it is a Problem.
	for _, name := range []string{"BadRequest", "Unauthorized", "Forbidden", "NotFound",
		"UnprocessableEntity", "InternalError"} {
		r := doc.Components.Responses[name]
		if r == nil {
			t.Errorf("components.responses.%s is missing", name)
			continue
		}
		if r.Value.Content.Get("application/problem+json") == nil {
			t.Errorf("components.responses.%s is not application/problem+json", name)
		}
		if r.Value.Headers["X-Request-Id"] == nil {
			t.Errorf("components.responses.%s lacks the X-Request-Id header", name)
		}
	}
	if doc.Components.Responses["Unauthorized"].Value.Headers["WWW-Authenticate"] == nil {
		t.Errorf("components.responses.Unauthorized lacks WWW-Authenticate")
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, r := range op.Responses.Map() {
				if r.Value.Headers["X-Request-Id"] == nil {
					t.Errorf("%s %s: response %s lacks the X-Request-Id header", method, path, status)
				}
			}
			if op.Responses.Value("500") == nil {
				t.Errorf("%s %s: response 500 is not documented", method, path)
			}
		}
	}
}

// TestOpenAPI_JSON checks that the served JSON holds exactly what openapi.yaml and the area
// files say.
func TestOpenAPI_JSON(t *testing.T) {
	var fromYAML map[string]any
	if err := yaml.Unmarshal(source, &fromYAML); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	names, _ := fs.Glob(areaFiles, "areas/*.yaml")
	for _, name := range names {
		b, _ := areaFiles.ReadFile(name)
		var area map[string]any
		if err := yaml.Unmarshal(b, &area); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for key, val := range area {
			switch v := val.(type) {
			case []any: // tags
				fromYAML[key] = append(fromYAML[key].([]any), v...)
			case map[string]any: // paths, webhooks, components.<kind>
				if fromYAML[key] == nil {
					fromYAML[key] = map[string]any{}
				}
				for k, x := range v {
					if key == "components" {
						comps := fromYAML[key].(map[string]any)
						if comps[k] == nil {
							comps[k] = map[string]any{}
						}
						maps.Copy(comps[k].(map[string]any), x.(map[string]any))
					} else {
						fromYAML[key].(map[string]any)[k] = x
					}
				}
			}
		}
	}
	// The one addition: 503 on every operation with the generic 500 (addUnavailable).
	for _, item := range fromYAML["paths"].(map[string]any) {
		for _, op := range item.(map[string]any) {
			o, _ := op.(map[string]any) // also path-level parameters and servers: lists
			rs, _ := o["responses"].(map[string]any)
			if r, _ := rs["500"].(map[string]any); r["$ref"] == "#/components/responses/InternalError" && rs["503"] == nil {
				rs["503"] = map[string]any{"$ref": "#/components/responses/Unavailable"}
			}
		}
	}
	want, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	got, err := openapi.JSON()
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("served JSON does not parse: %v", err)
	}
	_ = json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("served JSON differs from openapi.yaml")
	}
	if !strings.HasPrefix(string(got), `{"openapi":"3.1.0","info":`) {
		t.Errorf("served JSON does not keep the YAML key order: %.40s", got)
	}
}

func TestOpenAPI_Serve(t *testing.T) {
	a := fiber.New()
	openapi.Mount(a.Group("/api/public/v1"))
	want, _ := openapi.JSON()

	get := func(h map[string]string) *http.Response {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/api/public/v1/openapi.json", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := a.Test(req, -1)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		return resp
	}

	resp := get(nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q, want application/json", ct)
	}
	if string(body) != string(want) {
		t.Errorf("body differs from openapi.JSON()")
	}
	etag := resp.Header.Get("ETag")
	if !regexp.MustCompile(`^"[A-Za-z0-9_-]+"$`).MatchString(etag) {
		t.Errorf("etag %q, want a strong quoted tag", etag)
	}
	if resp.Header.Get("Cache-Control") == "" {
		t.Errorf("no Cache-Control")
	}

	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if resp := get(map[string]string{"If-None-Match": inm}); resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s: status %d, want 304", inm, resp.StatusCode)
		} else if resp.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: etag %q, want %q", inm, resp.Header.Get("ETag"), etag)
		}
	}
	if resp := get(map[string]string{"If-None-Match": `"stale"`}); resp.StatusCode != http.StatusOK {
		t.Errorf("stale If-None-Match: status %d, want 200", resp.StatusCode)
	}
}

// TestOpenAPI_CoversEveryRoute builds the real route table (the pool connects lazily, so no
// database is needed) and compares it with the document both ways.
func TestOpenAPI_CoversEveryRoute(t *testing.T) {
	cfg, err := app.LoadConfig(func(k string) string {
		switch k {
		case "DATABASE_URL":
			return "postgres://nobody@127.0.0.1:1/none?sslmode=disable" // never dialled
		case "APP_SECRET":
			return "openapi-test-secret-openapi-test-secret"
		}
		return ""
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	s, err := app.NewServer(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	t.Cleanup(s.Close)

	served := map[string]bool{}
	for _, r := range s.App.GetRoutes(true) {
		if r.Method == fiber.MethodHead { // Fiber adds HEAD to every GET
			continue
		}
		served[r.Method+" "+openAPIPath(r.Path)] = true
	}

	doc, err := openapi.Load()
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		servers := doc.Servers
		if len(item.Servers) > 0 {
			servers = item.Servers
		}
		for method := range item.Operations() {
			for _, srv := range servers {
				documented[method+" "+strings.TrimSuffix(srv.URL, "/")+path] = true
			}
		}
	}

	for _, op := range sortedKeys(served) {
		if !documented[op] {
			t.Errorf("%s is served but not in openapi.yaml", op)
		}
	}
	for _, op := range sortedKeys(documented) {
		if !served[op] {
			t.Errorf("%s is in openapi.yaml but not served", op)
		}
	}
	if len(served) == 0 {
		t.Fatalf("no routes served")
	}
}

var fiberParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// openAPIPath turns Fiber's /users/:userId into /users/{userId}.
func openAPIPath(p string) string { return fiberParam.ReplaceAllString(p, "{$1}") }

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The document must resolve every reference (Load does) and name each path parameter.
func TestOpenAPI_PathParams(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
				p := op.Parameters.GetByInAndName(openapi3.ParameterInPath, m[1])
				if p == nil || p.Schema == nil {
					t.Errorf("%s %s: path parameter %s is not documented", method, path, m[1])
					continue
				}
				// Our ids are UUIDs (the spec says so); a caller's own keys (external references,
				// the source system), the SDK's release hash, calendar feed, tracking and portal link
				// tokens, the address of DELETE /email-opt-outs/{email} (the spec's path), a change
				// request's decision and a portal change form's kind (enums) are strings.
				notID := m[1] == "source" || m[1] == "externalId" || m[1] == "hash" || m[1] == "token" || m[1] == "email" ||
					m[1] == "decision" || m[1] == "kind"
				if !notID && p.Schema.Value.Format != "uuid" {
					t.Errorf("%s %s: path parameter %s is not a documented uuid", method, path, m[1])
				}
			}
		}
	}
}

// Every $ref names a whole component (#/components/<kind>/<Name>), never a place inside one
// (…/Lead/properties/source/anyOf/0): client generators such as openapi-typescript turn such
// references into types that do not compile. A shared enum is a schema of its own (LeadSource).
func TestOpenAPI_RefsNameComponents(t *testing.T) {
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	whole := regexp.MustCompile(`^#/components/(schemas|responses|parameters|headers|requestBodies|examples|securitySchemes|links|callbacks|pathItems)/[^/]+$`)
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" && !whole.MatchString(s) {
					t.Errorf("%s: $ref %q points inside a component; name the shared part as a component of its own", at, s)
				}
				walk(x, at+"/"+k)
			}
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
}
