package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestIntake_RateLimit: 100 valid submissions per key per clock hour (invalid ones cost the key
// nothing; browser ones count against their sender's bucket, TestIntake_SenderBucket); the 101st is 429
// with equal Retry-After and retryAfter; another key is unaffected.
func TestIntake_RateLimit(t *testing.T) {
	t.Parallel()
	freshWindow(t, 30*time.Second)
	env := apitest.New(t)
	co := env.NewCompany(t)
	key, other := pk(t, co, "example.com"), pk(t, co, "example.com")
	email := uniqueEmail("quota")
	for i, n := 0, 0; n < 100; i++ {
		fs, invalid := valid(email), i%4 == 3
		if invalid {
			fs = fs.without("lastName")
		}
		r := send(t, env, post{path: paths[i%2], kind: kinds[i%3], fields: fs, key: key})
		if invalid {
			if (r.Status != 400 && r.Status != 422) || r.Header.Get("RateLimit-Remaining") != "" {
				t.Fatalf("invalid submission %d: %d, RateLimit-Remaining %q", i+1, r.Status, r.Header.Get("RateLimit-Remaining"))
			}
			continue
		}
		n++
		if r.Status != 201 {
			t.Fatalf("submission %d: %d %s", i+1, r.Status, r.Body)
		}
		if got, want := r.Header.Get("RateLimit-Remaining"), strconv.Itoa(100-n); got != want {
			t.Fatalf("submission %d: RateLimit-Remaining %s, want %s", i+1, got, want)
		}
		if r.Header.Get("RateLimit-Limit") != "100" || !strings.HasPrefix(r.Header.Get("RateLimit-Policy"), `"intake";q=100;w=3600`) {
			t.Fatalf("submission %d: headers %v", i+1, r.Header)
		}
	}
	r := send(t, env, post{path: legacyPath, kind: asForm, fields: valid(email), key: key})
	if r.Status != 429 {
		t.Fatalf("101st: %d %s", r.Status, r.Body)
	}
	b := decodeLegacy(t, r.Body)
	retry, _ := strconv.ParseInt(r.Header.Get("Retry-After"), 10, 64)
	if b.Error != "rate_limit_exceeded" || b.RetryAfter != retry || retry < 1 || retry > 3600 {
		t.Errorf("101st: Retry-After %q, body %s", r.Header.Get("Retry-After"), r.Body)
	}
	if reset := r.Header.Get("RateLimit-Reset"); reset != r.Header.Get("Retry-After") {
		t.Errorf("RateLimit-Reset %s, Retry-After %s", reset, r.Header.Get("Retry-After"))
	}
	r = send(t, env, post{path: v1Path, kind: asJSON, fields: valid(email), key: key})
	if p := r.Problem(t); r.Status != 429 || p.Code != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Errorf("v1 after the quota: %d %s", r.Status, r.Body)
	}
	if n := leadByEmail(t, env, co.ID, email).Submissions; n != 100 {
		t.Errorf("%d submissions stored, want 100", n)
	}
	if r := send(t, env, post{path: legacyPath, kind: asJSON, fields: valid(email), key: other}); r.Status != 201 ||
		r.Header.Get("RateLimit-Remaining") != "99" {
		t.Errorf("second key: %d remaining %s", r.Status, r.Header.Get("RateLimit-Remaining"))
	}
}

// TestIntake_RateLimitSharedAcrossProcesses: two server processes on one Redis count one key's
// hour together; 401s cost nothing.
func TestIntake_RateLimitSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	freshWindow(t, 30*time.Second)
	env := apitest.New(t)
	redisURL := apitest.RedisURL(t)
	co := env.NewCompany(t)
	key, other := pk(t, co, "example.com"), pk(t, co, "example.com")
	p1 := env.StartProcess(t, map[string]string{"REDIS_URL": redisURL})
	p2 := env.StartProcess(t, map[string]string{"REDIS_URL": redisURL})
	procs := []string{p1, p2}
	email := uniqueEmail("shared-quota")

	for range 5 {
		if status, h, _ := sendTo(t, p1, post{path: legacyPath, kind: asJSON, fields: valid(email), key: "pk_live_unknown"}); status != 401 ||
			h.Get("RateLimit-Remaining") != "" {
			t.Fatalf("401: %d %v", status, h)
		}
	}
	for i := range 100 {
		status, h, body := sendTo(t, procs[i%2], post{path: paths[i%2], kind: kinds[i%3], fields: valid(email), key: key})
		if status != 201 {
			t.Fatalf("submission %d: %d %s", i+1, status, body)
		}
		if got, want := h.Get("RateLimit-Remaining"), strconv.Itoa(99-i); got != want {
			t.Fatalf("submission %d on process %d: RateLimit-Remaining %s, want %s", i+1, i%2+1, got, want)
		}
	}
	for _, p := range procs {
		status, h, body := sendTo(t, p, post{path: legacyPath, kind: asForm, fields: valid(email), key: key})
		var b legacyBody
		_ = json.Unmarshal(body, &b)
		if status != 429 || b.Error != "rate_limit_exceeded" || strconv.FormatInt(b.RetryAfter, 10) != h.Get("Retry-After") {
			t.Errorf("101st on %s: %d %v %s", p, status, h, body)
		}
	}
	for _, p := range procs {
		if status, _, body := sendTo(t, p, post{path: v1Path, kind: asJSON, fields: valid(email), key: other}); status != 201 {
			t.Errorf("second key on %s: %d %s", p, status, body)
		}
	}
	if n := leadByEmail(t, env, co.ID, email).Submissions; n != 102 {
		t.Errorf("%d submissions, want 102", n)
	}
}

// TestIntake_KeyDeactivatedViaCLI: a key deactivated (or deleted) by the operator CLI is refused
// by the very next request to another server process; nothing caches keys.
func TestIntake_KeyDeactivatedViaCLI(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	p1 := env.StartProcess(t, nil)
	p2 := env.StartProcess(t, nil)
	for _, action := range []string{"deactivate", "delete"} {
		key := pk(t, co, "example.com")
		email := uniqueEmail(action)
		// Both processes have served the key, so any cache would hold it.
		for _, p := range []string{p1, p2} {
			if status, _, body := sendTo(t, p, post{path: legacyPath, kind: asJSON, fields: valid(email), key: key}); status != 201 {
				t.Fatalf("%s before: %d %s", action, status, body)
			}
		}
		out := env.CLI(t, "key", action, keyPrefix(key))
		if action == "deactivate" && !strings.Contains(out, "inactive") {
			t.Errorf("key deactivate printed %q", out)
		}
		for _, p := range []string{p2, p1} {
			status, _, body := sendTo(t, p, post{path: legacyPath, kind: asForm, fields: valid(email), key: key})
			if status != 401 || string(body) != `{"error":"Invalid or inactive API key"}` {
				t.Errorf("%s, legacy on %s: %d %s", action, p, status, body)
			}
			p := post{path: v1Path, kind: asJSON, fields: valid(email).with("_key", key)}
			if status, _, body := sendTo(t, p1, p); status != 401 || !bytes.Contains(body, []byte(`"invalid_credential"`)) {
				t.Errorf("%s, v1 _key: %d %s", action, status, body)
			}
		}
		if n := leadByEmail(t, env, co.ID, email).Submissions; n != 2 {
			t.Errorf("%s: %d submissions, want 2", action, n)
		}
	}
}

// TestIntake_TooLarge: a body over the server's 10 MB is 413 in each endpoint's shape (the
// server answers from the Content-Length, before reading the body); a broken multipart body is
// 400.
func TestIntake_TooLarge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	base := env.StartProcess(t, nil)
	problem := func(b []byte, h http.Header) bool {
		return bytes.Contains(b, []byte(`"payload_too_large"`)) && strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") &&
			h.Get("X-Request-Id") != ""
	}
	for _, c := range []struct {
		method, path string
		check        func(body []byte, h http.Header) bool
	}{
		{"POST", "/api/public/leads", func(b []byte, h http.Header) bool {
			return string(b) == `{"error":"Request Entity Too Large"}` && h.Get("Content-Type") == "application/json" &&
				h.Get("Access-Control-Allow-Origin") == "*" && h.Get("X-Request-Id") != ""
		}},
		{"POST", "/api/public/v1/leads/intake", problem},
		// Any route: the server refuses the body before routing.
		{"OPTIONS", "/api/public/v1/leads/intake", problem},
		{"GET", "/healthz", problem},
		{"GET", "/api/public/v1/openapi.json", problem},
	} {
		status, h, body := announce(t, base, c.method, c.path, co.Publishable, 11<<20)
		if status != 413 || !c.check(body, h) {
			t.Errorf("%s %s: %d %v %s", c.method, c.path, status, h, body)
		}
	}
	// A broken multipart body: parsed in the handler (DisablePreParseMultipartForm), answered 400
	// (docs/decisions/api-conventions.md "Request body limits").
	status, _, body := sendTo(t, base, post{path: legacyPath, ct: "multipart/form-data; boundary=xyz",
		raw: []byte("--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb"), key: co.Publishable})
	if status != 400 {
		t.Errorf("broken multipart: %d %s", status, body)
	}
}

// announce sends the head of a JSON POST declaring a body of size bytes and a few of them, and
// reads the answer: a server refusing the size answers without reading further.
func announce(t *testing.T, base, method, path, key string, size int) (int, http.Header, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: %s\r\n"+
		"Origin: https://www.example.com\r\nContent-Length: %d\r\n\r\n{\"notes\":\"", method, path, key, size)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// The answer is checked against the OpenAPI document like any other (the body was never
	// sent whole, so the request is described without it).
	req, _ := http.NewRequest(method, base+path, nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Origin", "https://www.example.com")
	apitest.CheckHTTP(t, req, nil, resp, b)
	return resp.StatusCode, resp.Header, b
}
