package sdk_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/sdk"
)

func serve(t *testing.T, method string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	return serveAt(t, method, sdk.Path, h)
}

func serveAt(t *testing.T, method, path string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	a := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler})
	sdk.Mount(a)
	req := httptest.NewRequest(method, path, nil)
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
	if got, want := resp.Header.Get("Cache-Control"), "public, max-age=300"; got != want {
		t.Errorf("cache control %q, want %q (the alias: short, so fixes reach every site)", got, want)
	}
	if got, want := resp.Header.Get("Link"), "<"+sdk.Current().Path+`>; rel="canonical"`; got != want {
		t.Errorf("Link %q, want %q", got, want)
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
		if resp.Header.Get("Cache-Control") != sdk.AliasCacheControl {
			t.Errorf("If-None-Match %s: cache control %q, want %q", inm, resp.Header.Get("Cache-Control"), sdk.AliasCacheControl)
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

// TestSDK_Releases: every release is served under its content hash, immutable, and the current
// script is one of them.
func TestSDK_Releases(t *testing.T) {
	cur := sdk.Current()
	rel, ok := sdk.Releases()[cur.Hash]
	if !ok || !bytes.Equal(rel.Content, sdk.Script()) {
		t.Fatalf("brokerdesk.js is not released: cp app/sdk/brokerdesk.js app/sdk/releases/brokerdesk.%s.js "+
			"(and keep the older releases: pages pin them)", cur.Hash)
	}
	if len(sdk.Releases()) < 1 {
		t.Fatal("no releases")
	}
	for hash, r := range sdk.Releases() {
		if want := sdk.NewRelease(r.Content); hash != want.Hash || r.Path != "/sdk/v1/brokerdesk."+hash+".js" {
			t.Errorf("release %s: its content hashes to %s (a release file never changes: add a new one)", hash, want.Hash)
			continue
		}
		resp, body := serveAt(t, http.MethodGet, r.Path, nil)
		if resp.StatusCode != 200 || !bytes.Equal(body, r.Content) {
			t.Errorf("GET %s: %d with %d bytes", r.Path, resp.StatusCode, len(body))
		}
		if got := resp.Header.Get("Cache-Control"); got != sdk.CacheControl {
			t.Errorf("GET %s: cache control %q, want %q", r.Path, got, sdk.CacheControl)
		}
		if resp.Header.Get("ETag") != r.ETag || resp.Header.Get("Content-Type") != sdk.ContentType ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: headers %v", r.Path, resp.Header)
		}
		if resp, body := serveAt(t, http.MethodGet, r.Path, map[string]string{"If-None-Match": r.ETag}); resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("GET %s with its ETag: %d", r.Path, resp.StatusCode)
		}
		if !strings.HasPrefix(r.Integrity, "sha384-") || len(r.Integrity) != len("sha384-")+64 {
			t.Errorf("integrity %q", r.Integrity)
		}
	}
	for _, p := range []string{"/sdk/v1/brokerdesk.000000000000.js", "/sdk/v1/brokerdesk." + cur.Hash[:11] + ".js",
		"/sdk/v1/brokerdesk." + strings.ToUpper(cur.Hash) + ".js"} {
		if resp, _ := serveAt(t, http.MethodGet, p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, resp.StatusCode)
		}
	}
}

func TestSDK_OtherPaths(t *testing.T) {
	a := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler})
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

// TestSDK_PageAddressWithoutQuery catches issue 20 item 9: the SDK sent location.href as
// _meta.url, query and fragment included (a visitor's e-mail from a link, tokens). The request
// body's page address must be origin and path only, and no location.href may reach the body.
// test/browser checks what a real page stores ("SDK form submits with the page address").
func TestSDK_PageAddressWithoutQuery(t *testing.T) {
	src := string(sdk.Script())
	body := regexp.MustCompile(`(?s)\n  function body\(fields\) \{\n(.*?)\n  \}\n`).FindStringSubmatch(src)
	if body == nil {
		t.Fatal("brokerdesk.js has no function body(fields)")
	}
	if !strings.Contains(body[1], "b._meta = { url: pageAddress() };") || strings.Contains(body[1], "location.href") {
		t.Errorf("body() sets _meta.url from something other than pageAddress():\n%s", body[1])
	}
	page := regexp.MustCompile(`(?s)\n  function pageAddress\(\) \{\n(.*?)\n  \}\n`).FindStringSubmatch(src)
	if page == nil {
		t.Fatal("brokerdesk.js has no function pageAddress()")
	}
	if !strings.Contains(page[1], "return location.origin + location.pathname;") ||
		regexp.MustCompile(`location\.(href|search|hash)`).MatchString(page[1]) {
		t.Errorf("pageAddress() is not origin + path:\n%s", page[1])
	}
}

// TestSDK_FormatCharacters: the SDK removes exactly the format characters the server removes
// (Go's unicode.Cf), so its validate() agrees with the server on a name of nothing but them.
func TestSDK_FormatCharacters(t *testing.T) {
	want := "var FORMAT = '" + formatClass() + "';"
	if !strings.Contains(string(sdk.Script()), want) {
		t.Errorf("brokerdesk.js lacks\n%s\n(Go's Unicode tables changed: paste this line)", want)
	}
}

// formatClass is Go's unicode.Cf as a JavaScript regular expression source (no u flag, so
// ES2017 browsers read it): a class of the BMP ranges, then each astral range as its high
// surrogate and a class of low surrogates.
func formatClass() string {
	var runes []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Cf, r) {
			runes = append(runes, r)
		}
	}
	hex := func(r rune) string { return fmt.Sprintf(`\\u%04x`, r) }
	var bmp strings.Builder
	astral := map[rune]*strings.Builder{}
	var highs []rune
	for i := 0; i < len(runes); {
		j := i
		for j+1 < len(runes) && runes[j+1] == runes[j]+1 && (runes[j+1] > 0xffff) == (runes[i] > 0xffff) {
			j++
		}
		lo, hi := runes[i], runes[j]
		i = j + 1
		if lo <= 0xffff {
			bmp.WriteString(hex(lo))
			if hi > lo {
				bmp.WriteString("-" + hex(hi))
			}
			continue
		}
		for lo <= hi { // split the range where the high surrogate changes
			h, l := utf16.EncodeRune(lo)
			end := min(hi, lo+rune(0xdfff-l))
			_, le := utf16.EncodeRune(end)
			if astral[h] == nil {
				astral[h] = &strings.Builder{}
				highs = append(highs, h)
			}
			astral[h].WriteString(hex(l))
			if end > lo {
				astral[h].WriteString("-" + hex(le))
			}
			lo = end + 1
		}
	}
	out := "[" + bmp.String() + "]"
	for _, h := range highs {
		out += "|" + hex(h) + "[" + astral[h].String() + "]"
	}
	return out
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
