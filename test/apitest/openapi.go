package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/openapi"
)

// TestRoutePrefix is where tests mount routes of their own (app.WithTestRoutes): the document
// does not list them, so only their error answers are checked (they must be problems).
const TestRoutePrefix = app.V1Prefix + "/_test/"

// LegacyIntakePath is the legacy intake (lead-intake.md), outside the v1 prefix.
const LegacyIntakePath = "/api/public/leads"

// docURL names the document as a JSON Schema resource: body schemas are compiled from pointers
// into it, so their $refs to #/components/schemas resolve as they do in the document.
const docURL = "https://brokerdesk.dev/openapi.json"

// contract is the OpenAPI document, a router over it and the body schemas compiled so far,
// built once per test binary.
//
// kin-openapi finds the route, validates the request and the response's status and headers.
// Bodies are validated by the JSON Schema 2020-12 engine kin-openapi itself uses
// (santhosh-tekuri/jsonschema), but each schema is compiled once: openapi3filter compiles the
// schema again for every response (about 7 ms for a page of users), which slowed the suite
// enough for a walk racing concurrent inserts never to end.
type contract struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options

	mu       sync.Mutex // guards compiler and schemas
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	doc, err := openapi.Load()
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	// gorillamux honours path-level servers: /healthz and /readyz sit at the server root,
	// everything else under the document's server /api/public/v1.
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi router: %w", err)
	}
	raw, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	resource, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	compiler.AssertFormat() // uuid, email, date-time, uri... are checked, not just annotations
	if err := compiler.AddResource(docURL, resource); err != nil {
		return nil, err
	}
	return &contract{doc: doc, router: router, compiler: compiler, schemas: map[string]*jsonschema.Schema{},
		opts: &openapi3filter.Options{
			// Authentication is tested by the endpoint tables; here any credential passes.
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
			IncludeResponseStatus: true, // a status the document does not list is drift
			ExcludeResponseBody:   true, // see contract
			MultiError:            true,
			SkipSettingDefaults:   true,
		}}, nil
})

// validateOpenAPI checks a request and its response against the OpenAPI document (app/openapi).
// A request the document does not describe is reported only when it got a 2xx: tests send
// invalid requests on purpose (a bad limit, a bad uuid, malformed JSON) to check the error
// answers, and those answers are validated in full. A route missing from the document is fine
// only when the server did not serve it either (404 route_not_found, 405) or when it is a test
// route under TestRoutePrefix; either way an error answer must be a problem.
func validateOpenAPI(t testing.TB, method, path string, h http.Header, body []byte, r *Response) {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	ctx := context.Background()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header = h.Clone()
	if method == http.MethodHead {
		req.Method = http.MethodGet // Fiber answers HEAD for every GET; the document lists the GET
	}

	route, params, err := c.router.FindRoute(req)
	if err != nil {
		// The legacy intake answers in its own shape everywhere under its path, also where no
		// route is (404, 405).
		legacy := req.URL.Path == LegacyIntakePath || strings.HasPrefix(req.URL.Path, LegacyIntakePath+"/")
		legacyUnrouted := legacy && (r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed)
		if !unrouted(r) && !legacyUnrouted && !strings.HasPrefix(req.URL.Path, TestRoutePrefix) {
			t.Errorf("openapi: %s %s answered %d but the route is not in the OpenAPI document (%v)",
				method, path, r.Status, err)
		}
		if r.Status >= 400 {
			schema, mt := "#/components/schemas/Problem", "application/problem+json"
			if legacy {
				schema, mt = "#/components/schemas/LegacyIntakeMessage", "application/json"
			}
			if err := c.validateBody(r, schema, mt); err != nil {
				t.Errorf("openapi: %s %s answered %d: %v", method, path, r.Status, err)
			}
		}
		return
	}

	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && r.Status >= 200 && r.Status < 300 {
		t.Errorf("openapi: %s %s answered %d to a request the OpenAPI document does not allow:\n%v",
			method, path, r.Status, describe(err))
	}

	fail := func(err error) {
		t.Helper()
		t.Errorf("openapi: %s %s (%s %s): response %d does not match the OpenAPI document:\n%v\nbody: %s",
			method, path, route.Method, route.Path, r.Status, describe(err), r.Body)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 r.Status,
		Header:                 r.Header,
		Options:                c.opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil { // status and headers
		fail(err)
		return
	}
	if method == http.MethodHead || r.Status == http.StatusNotModified {
		return // no body
	}
	if err := c.validateResponseBody(route, r); err != nil {
		fail(err)
	}
}

// validateResponseBody checks r's content type and body against the response its route
// documents for r.Status.
func (c *contract) validateResponseBody(route *routers.Route, r *Response) error {
	key, ref := responseFor(route.Operation.Responses, r.Status)
	if ref == nil {
		return fmt.Errorf("status %d is not documented", r.Status)
	}
	// The pointer to the response object: its component when it is a $ref, else its place
	// under paths.
	ptr := ref.Ref
	if ptr == "" {
		ptr = "#/paths/" + escapePointer(route.Path) + "/" + strings.ToLower(route.Method) + "/responses/" + key
	}
	content := ref.Value.Content
	if len(content) == 0 {
		if len(r.Body) > 0 {
			return fmt.Errorf("the document gives response %s no body, got %d bytes", key, len(r.Body))
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	mkey := mediaKey(content, mt)
	if err != nil || mkey == "" {
		types := make([]string, 0, len(content))
		for k := range content {
			types = append(types, k)
		}
		return fmt.Errorf("content type %q, want one of %v", r.Header.Get("Content-Type"), types)
	}
	if content[mkey].Schema == nil || !isJSON(mt) {
		return nil // a file: its bytes have no schema to check
	}
	return c.validateBody(r, ptr+"/content/"+escapePointer(mkey)+"/schema", mt)
}

// mediaKey is the key of content that describes media type mt: mt itself, else its range
// ("text/*"), else "*/*"; "" when none does.
func mediaKey(content openapi3.Content, mt string) string {
	typ, _, _ := strings.Cut(mt, "/")
	for _, k := range []string{mt, typ + "/*", "*/*"} {
		if content[k] != nil {
			return k
		}
	}
	return ""
}

// isJSON reports whether mt is JSON (application/json or a +json type).
func isJSON(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }

// validateBody checks that r has content type mt and a JSON body valid against the schema at
// ptr (a fragment of the document).
func (c *contract) validateBody(r *Response, ptr, mt string) error {
	if got, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); got != mt {
		return fmt.Errorf("content type %q, want %s", r.Header.Get("Content-Type"), mt)
	}
	if r.Header.Get("X-Request-Id") == "" {
		return errors.New("no X-Request-Id header")
	}
	sch, err := c.schema(ptr)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("body does not match %s:\n%v", ptr, err)
	}
	return nil
}

// schema compiles the schema at ptr once.
func (c *contract) schema(ptr string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[ptr]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(docURL + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", ptr, err)
	}
	c.schemas[ptr] = s
	return s, nil
}

// responseFor finds the documented response for status as openapi3filter does: the exact code,
// then its class (4XX), then default.
func responseFor(rs *openapi3.Responses, status int) (string, *openapi3.ResponseRef) {
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if ref := rs.Value(key); ref != nil {
			return key, ref
		}
	}
	return "", nil
}

// escapePointer escapes s as one JSON Pointer token (RFC 6901) inside a URI fragment.
func escapePointer(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	s = strings.ReplaceAll(s, "/", "~1")
	return strings.NewReplacer("{", "%7B", "}", "%7D").Replace(s)
}

// unrouted reports whether the server itself found no route: 404 route_not_found or 405.
func unrouted(r *Response) bool {
	switch r.Status {
	case http.StatusMethodNotAllowed:
		return true
	case http.StatusNotFound:
		var p struct {
			Code string `json:"code"`
		}
		return json.Unmarshal(r.Body, &p) == nil && p.Code == "route_not_found"
	}
	return false
}

// describe flattens kin-openapi's nested errors into one line per problem.
func describe(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, len(me))
		for i, e := range me {
			parts[i] = "  - " + describe(e)
		}
		return strings.Join(parts, "\n")
	}
	return err.Error()
}
