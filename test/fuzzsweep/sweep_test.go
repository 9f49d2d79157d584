// Package fuzzsweep sends malformed input to every operation of the OpenAPI document: path ids
// that are not UUIDs, name nothing or belong to another company; query parameters of the wrong
// type, out of range, repeated, invalid UTF-8; bodies that are empty, null, of the wrong JSON
// type, deeply nested, with NUL, invalid UTF-8, huge numbers, duplicate or unknown keys; garbage
// If-Match and Idempotency-Key headers, wrong content types. Every answer must be a documented
// status with a problem body carrying a code (the harness checks the status and body against
// the document), and never a 5xx.
package fuzzsweep

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/ulule/limiter/v3"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/openapi"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// foreignMarker is in the names of company B's records: no answer to A may contain it.
const foreignMarker = "Zweitfirma"

// world is what the sweep works on: company A with one record of each kind (so sub-resource
// operations get past their parent and decode their input), company B with the same, and the
// bodies that A's create and update operations accept.
type world struct {
	env  *apitest.Env
	a, b *apitest.Company
	ids  map[string]string // path parameter -> A's record
	bIDs map[string]string // path parameter -> B's record
	base map[string]string // "METHOD /path" -> a body the operation accepts
	curs []cursor

	requests int
}

func TestSweep(t *testing.T) {
	// The sweep sends thousands of requests with one key: no quota in the way.
	env := apitest.New(t, app.WithConfig(func(c *app.Config) {
		c.Limits.API = limiter.Rate{Limit: 1 << 30, Period: time.Hour}
	}))
	w := &world{env: env, a: env.NewCompany(t, policy.Features...), b: env.NewCompany(t, policy.Features...)}
	w.ids = w.seed(t, w.a, "Erstfirma")
	w.bIDs = w.seed(t, w.b, foreignMarker)
	w.base = bases(w.ids)
	w.curs = w.cursors(t)

	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	// Deletes last: until then every operation works on A's live records.
	for _, deletes := range []bool{false, true} {
		for _, p := range paths {
			item := doc.Paths.Find(p)
			prefix := ""
			if len(item.Servers) > 0 && item.Servers[0].URL == "/" {
				prefix = "/" // apitest: a path starting with "//" is taken from the server root
			}
			ops := item.Operations()
			methods := make([]string, 0, len(ops))
			for m := range ops {
				methods = append(methods, m)
			}
			sort.Strings(methods)
			for _, m := range methods {
				if m == http.MethodOptions || (m == http.MethodDelete) != deletes {
					continue
				}
				op := ops[m]
				t.Run(m+" "+p, func(t *testing.T) { w.sweep(t, m, prefix, p, op) })
			}
		}
	}
	t.Logf("%d requests", w.requests)
}

// probe is one malformed request.
type probe struct {
	name   string
	path   string
	body   any
	header map[string]string
	// foreign is company B's id the probe carries: the answer must be a 4xx other than 409 and
	// 429, with none of B's data (foreignMarker).
	foreign string
}

func (w *world) sweep(t *testing.T, method, prefix, tmpl string, op *openapi3.Operation) {
	params := pathParams(tmpl)
	fill := func(over map[string]string) string {
		out := tmpl
		for _, name := range params {
			v, ok := over[name]
			if !ok {
				v = w.ids[name]
			}
			if v == "" {
				v = uuid.NewString()
			}
			out = strings.Replace(out, "{"+name+"}", v, 1)
		}
		return prefix + out
	}
	good := fill(nil)
	key := method + " " + tmpl
	base := w.base[key]
	jsonBody := op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") != nil
	if jsonBody && base == "" {
		base = "{}"
	}
	send := func(pr probe) {
		t.Helper()
		h := map[string]string{}
		if pr.body != nil && jsonBody {
			h["Content-Type"] = "application/json"
		}
		for k, v := range pr.header {
			h[k] = v
		}
		if method == http.MethodPatch && h["Content-Type"] == "application/json" &&
			op.RequestBody.Value.Content.Get("application/merge-patch+json") != nil {
			h["Content-Type"] = "application/merge-patch+json"
		}
		r := w.env.Do(t, apitest.Request{Method: method, Path: pr.path, Key: w.a.Secret, Body: pr.body, Header: h})
		w.requests++
		check(t, pr.name, method, pr.path, r)
		if pr.foreign != "" {
			// Company B's id with A's key: never found, nothing of B's in the answer.
			if r.Status < 400 || r.Status == http.StatusConflict || r.Status == http.StatusTooManyRequests ||
				strings.Contains(string(r.Body), foreignMarker) {
				t.Errorf("%s: %s %s answered %d with B's id: %s", pr.name, method, trunc(pr.path), r.Status, r.Body)
			}
		}
	}
	var body any
	if jsonBody {
		body = base
	}

	// Path parameters, one at a time, the others A's own records.
	for _, name := range params {
		bad := []struct{ name, v string }{
			{"not a uuid", "not-a-uuid"},
			{"uuid of nothing", uuid.NewString()},
			{"NUL", "%00"},
			{"dot dot", "%2e%2e"},
			{"long", strings.Repeat("a", 3000)},
			{"invalid UTF-8", "%ff%fe"},
		}
		for _, b := range bad {
			send(probe{name: "path " + name + ": " + b.name, path: fill(map[string]string{name: b.v}), body: body})
		}
		if id := w.bIDs[name]; id != "" && uuid.Validate(id) == nil {
			send(probe{name: "path " + name + ": company B's record", path: fill(map[string]string{name: id}), body: body, foreign: id})
		}
	}

	// Query parameters of the document, one at a time.
	var query []string
	for _, pr := range op.Parameters {
		if pr.Value.In == "query" {
			query = append(query, pr.Value.Name)
		}
	}
	sep := "?"
	if strings.Contains(good, "?") {
		sep = "&"
	}
	for _, q := range query {
		for _, v := range []string{"abc", "99999999999999999999", "%ff%fe", "a%00b"} {
			send(probe{name: "query " + q + "=" + trunc(v), path: good + sep + q + "=" + v, body: body})
		}
		send(probe{name: "query " + q + " repeated", path: good + sep + q + "=1&" + q + "=2", body: body})
	}
	// Cursors from another list and another company, and tampered.
	for _, c := range w.curs {
		if !slices.Contains(query, "cursor") {
			break
		}
		send(probe{name: "query cursor " + c.name, path: good + sep + "cursor=" + url.QueryEscape(c.v), body: body})
	}

	// Bodies.
	if jsonBody {
		deepArr := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
		deepObj := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
		for _, b := range []struct{ name, v string }{
			{"empty", ""}, {"null", "null"}, {"array", "[]"}, {"string", `"x"`}, {"number", "1e400"},
			{"two values", base + base}, {"truncated", base[:len(base)-1]}, {"deep array", deepArr}, {"deep object", deepObj},
			{"invalid UTF-8", "{\"\xff\xfe\":1}"}, {"NUL byte", "{\x00}"},
			{"unknown field", merge(base, `"zzUnknown":1`)},
			{"duplicate keys", merge(base, strings.TrimSuffix(strings.TrimPrefix(base, "{"), "}"))},
		} {
			send(probe{name: "body " + b.name, path: good, body: b.v})
		}
		// Every top-level property of the request schema, set to each bad value.
		for _, prop := range properties(op) {
			values := []struct{ name, v string }{{"NUL", `"a\u0000b"`}}
			if method != http.MethodPatch {
				// A PATCH is a merge patch: null clears (TaskPatch, WebhookEndpointPatch:
				// their member schemas do not say so yet; see the report of branch redteam).
				values = append(values, struct{ name, v string }{"null", "null"})
			}
			for _, v := range values {
				send(probe{name: "body " + prop + " " + v.name, path: good, body: set(base, prop, v.v)})
			}
			if id := w.foreignRef(prop); id != "" {
				send(probe{name: "body " + prop + " company B's record", path: good, body: set(base, prop, `"`+id+`"`), foreign: id})
			}
		}
	}

	// Headers.
	var headers []struct{ name, k, v string }
	switch method {
	case http.MethodPatch, http.MethodDelete, http.MethodPut:
		headers = append(headers, []struct{ name, k, v string }{
			{"If-Match garbage", "If-Match", "garbage"},
			{"If-Match long", "If-Match", `"` + strings.Repeat("9", 3000) + `"`},
			{"If-Match list", "If-Match", `"1", W/"2", *`},
		}...)
	case http.MethodPost:
		headers = append(headers, []struct{ name, k, v string }{
			{"Idempotency-Key long", "Idempotency-Key", strings.Repeat("k", 3000)},
			{"Idempotency-Key control characters", "Idempotency-Key", "a\x01b\x7fc"},
			{"Idempotency-Key non-ASCII", "Idempotency-Key", "schl\xfcssel"},
		}...)
	case http.MethodGet:
		headers = append(headers, []struct{ name, k, v string }{
			{"If-None-Match garbage", "If-None-Match", "\"\x01\""},
		}...)
	}
	if jsonBody {
		headers = append(headers, []struct{ name, k, v string }{
			{"Content-Type text/plain", "Content-Type", "text/plain"},
			{"Content-Type charset latin1", "Content-Type", "application/json; charset=iso-8859-1"},
			{"Content-Type upper case", "Content-Type", "APPLICATION/JSON; Charset=UTF-8"},
			{"Content-Type broken parameter", "Content-Type", "application/json; charset"},
			{"Content-Type multipart without boundary", "Content-Type", "multipart/form-data"},
		}...)
	} else if op.RequestBody != nil {
		headers = append(headers, []struct{ name, k, v string }{
			{"Content-Type multipart without boundary", "Content-Type", "multipart/form-data"},
			{"Content-Type multipart bad boundary", "Content-Type", "multipart/form-data; boundary=\"\""},
			{"Content-Type json", "Content-Type", "application/json"},
		}...)
	}
	for _, h := range headers {
		b := body
		if b == nil && op.RequestBody != nil {
			b = "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n" + strings.Repeat("\x00", 100)
		}
		send(probe{name: "header " + h.name, path: good, body: b, header: map[string]string{h.k: h.v}})
	}
}

// check asserts that r is not a server error and that an error answer is a problem with a code.
// The harness (apitest.Env.Do) has checked status, headers and body against the document.
func check(t *testing.T, name, method, path string, r *apitest.Response) {
	t.Helper()
	if r.Status >= 500 {
		t.Errorf("%s: %s %s answered %d: %s", name, method, trunc(path), r.Status, r.Body)
		return
	}
	if r.Status < 400 {
		return
	}
	var p struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
		Type   string `json:"type"`
	}
	if strings.HasPrefix(path, "/"+apitest.LegacyIntakePath) || strings.HasPrefix(path, "//oauth/") ||
		strings.HasPrefix(path, "//sign/") || strings.HasPrefix(path, "//portal/") {
		// the legacy intake (lead-intake.md) and OAuth (RFC 6749) answer in their own shapes, the
		// signing page and the customer portal (a person's browser) in HTML pages; the harness
		// checks them against the document
		return
	}
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Code == "" || p.Status != r.Status || p.Type == "" {
		t.Errorf("%s: %s %s answered %d without a problem body: %s", name, method, trunc(path), r.Status, r.Body)
	}
}

func trunc(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%s...(%d bytes)", s[:120], len(s))
	}
	return s
}

func pathParams(tmpl string) []string {
	var out []string
	for rest := tmpl; ; {
		i := strings.Index(rest, "{")
		if i < 0 {
			return out
		}
		j := strings.Index(rest[i:], "}")
		out = append(out, rest[i+1:i+j])
		rest = rest[i+j+1:]
	}
}

// properties lists the top-level properties of the operation's JSON request schema.
func properties(op *openapi3.Operation) []string {
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	seen := map[string]bool{}
	var walk func(s *openapi3.Schema)
	walk = func(s *openapi3.Schema) {
		for k := range s.Properties {
			seen[k] = true
		}
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			for _, r := range list {
				walk(r.Value)
			}
		}
	}
	walk(mt.Schema.Value)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// set returns the JSON object base with prop set to the raw JSON value v (invalid JSON in v is
// sent as it is).
func set(base, prop, v string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(base), &m) != nil {
		m = map[string]json.RawMessage{}
	}
	delete(m, prop)
	b, _ := json.Marshal(m)
	return merge(string(b), fmt.Sprintf("%q:%s", prop, v))
}

// merge adds the members in raw to the JSON object base.
func merge(base, raw string) string {
	inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(base), "{"), "}"))
	if inner == "" {
		return "{" + raw + "}"
	}
	return "{" + inner + "," + raw + "}"
}

// foreignRef is company B's record of the kind body member prop refers to; "" when prop is no
// reference to a company's record.
func (w *world) foreignRef(prop string) string {
	kind := map[string]string{"contactId": "contactId", "relatedContactId": "contactId", "leadId": "leadId",
		"ownerId": "userId", "assigneeId": "userId", "delegateId": "userId", "userId": "userId",
		"mappingId": "mappingId", "contractId": "contractId", "stageId": "stageId"}[prop]
	return w.bIDs[kind]
}
