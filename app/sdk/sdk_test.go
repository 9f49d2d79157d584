package sdk_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/sdk"
)

func serve(t *testing.T, method string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	a := fiber.New()
	sdk.Mount(a)
	req := httptest.NewRequest(method, sdk.Path, nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := a.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, sdk.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

func TestSDK_Serve(t *testing.T) {
	resp, body := serve(t, http.MethodGet, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if got, want := resp.Header.Get("Content-Type"), "text/javascript; charset=utf-8"; got != want {
		t.Errorf("content type %q, want %q", got, want)
	}
	if got, want := resp.Header.Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
		t.Errorf("cache control %q, want %q", got, want)
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Access-Control-Allow-Origin %q, want * (Subresource Integrity needs CORS)", got)
	}
	if !bytes.Equal(body, sdk.Script()) || len(body) == 0 {
		t.Errorf("body (%d bytes) is not the embedded script (%d bytes)", len(body), len(sdk.Script()))
	}
	etag := resp.Header.Get("ETag")
	if !regexp.MustCompile(`^"[A-Za-z0-9_-]{22}"$`).MatchString(etag) || etag != sdk.ETag() {
		t.Errorf("etag %q, want a strong quoted content hash %q", etag, sdk.ETag())
	}
}

func TestSDK_NotModified(t *testing.T) {
	etag := sdk.ETag()
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		resp, body := serve(t, http.MethodGet, map[string]string{"If-None-Match": inm})
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s: status %d, want 304", inm, resp.StatusCode)
			continue
		}
		if len(body) != 0 {
			t.Errorf("If-None-Match %s: 304 with a %d-byte body", inm, len(body))
		}
		if resp.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: etag %q, want %q", inm, resp.Header.Get("ETag"), etag)
		}
		if resp.Header.Get("Cache-Control") != sdk.CacheControl {
			t.Errorf("If-None-Match %s: cache control %q, want %q", inm, resp.Header.Get("Cache-Control"), sdk.CacheControl)
		}
	}
	for _, inm := range []string{`"stale"`, "W/\"stale\"", etag[:len(etag)-2] + `"`} {
		if resp, body := serve(t, http.MethodGet, map[string]string{"If-None-Match": inm}); resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("If-None-Match %s: status %d with %d bytes, want 200 with the script", inm, resp.StatusCode, len(body))
		}
	}
}

func TestSDK_Head(t *testing.T) {
	resp, body := serve(t, http.MethodHead, nil)
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("HEAD: status %d with %d bytes, want 200 and no body", resp.StatusCode, len(body))
	}
	if resp.Header.Get("ETag") != sdk.ETag() || resp.Header.Get("Content-Type") != sdk.ContentType {
		t.Errorf("HEAD: etag %q, content type %q", resp.Header.Get("ETag"), resp.Header.Get("Content-Type"))
	}
}

func TestSDK_OtherPaths(t *testing.T) {
	a := fiber.New()
	sdk.Mount(a)
	for _, p := range []string{"/sdk/brokerdesk.js", "/sdk/v2/brokerdesk.js", "/sdk/v1/brokerdesk.min.js"} {
		resp, err := a.Test(httptest.NewRequest(http.MethodGet, p, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, resp.StatusCode)
		}
	}
}

// The script is plain ES2017 for every browser the brokerages' visitors use: no syntax from
// later editions, no module syntax, no build step.
func TestSDK_ScriptSyntax(t *testing.T) {
	src := string(sdk.Script())
	for _, bad := range []struct{ re, why string }{
		{`\?\.`, "optional chaining (ES2020)"},
		{`\?\?`, "nullish coalescing (ES2020)"},
		{`(?m)^\s*(import|export)\s`, "module syntax"},
		{`\brequire\(`, "CommonJS require"},
		{`#[a-zA-Z_]\w*\s*[=;(]`, "private class fields (ES2022)"},
	} {
		if loc := regexp.MustCompile(bad.re).FindStringIndex(src); loc != nil {
			t.Errorf("brokerdesk.js uses %s at byte %d: %q", bad.why, loc[0], src[loc[0]:min(len(src), loc[1]+20)])
		}
	}
	if len(src) > 24<<10 {
		t.Errorf("brokerdesk.js is %d bytes; keep it small (< 24 KiB)", len(src))
	}
	if !strings.Contains(src, "'/api/public/leads'") {
		t.Errorf("the default endpoint is not /api/public/leads")
	}
}

// example.html loads the versioned script and binds a form with the SDK.
func TestSDK_Example(t *testing.T) {
	page := string(sdk.Example())
	for _, want := range []string{`<meta charset="utf-8">`, sdk.Path + `"></script>`, "BrokerDesk.init({ key: 'pk_live_", ".bind(form", `name="firstName"`, `name="lastName"`, `name="email"`, `name="phone"`} {
		if !strings.Contains(page, want) {
			t.Errorf("example.html lacks %q", want)
		}
	}
}
