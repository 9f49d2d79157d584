package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Compressed request bodies are decoded once, within the body limit. The bug this catches:
// the limit checked the compressed size and Fiber's c.Body() then inflated gzip/deflate/br
// without bound on every call, so a 20 KB body became 20 MiB in a handler (a decompression
// bomb against the public intake as much as the API), and a body that did not decode reached
// the handler as Fiber's error text.
func TestServer_CompressedBodies(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	base := env.Listen(t)
	bomb := gzipped(t, `{"title":"`+strings.Repeat("a", 20<<20)+`"}`)
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb is %d bytes compressed; want a small one", len(bomb))
	}
	for _, tc := range []struct {
		name, path, encoding string
		body                 []byte
		status               int
		code                 string
	}{
		{"a gzip body is read", "/api/public/v1/tasks", "gzip", gzipped(t, `{"title":"Rückruf"}`), 201, ""},
		{"identity is no coding", "/api/public/v1/tasks", "identity", []byte(`{"title":"Rückruf"}`), 201, ""},
		{"a body that inflates past the limit is 413", "/api/public/v1/tasks", "gzip", bomb, 413, "payload_too_large"},
		{"the intake too", "/api/public/leads", "gzip", bomb, 413, ""},
		{"data that is no gzip is 400", "/api/public/v1/tasks", "gzip", []byte(`{"title":"x"}`), 400, "malformed_body"},
		{"an unknown coding is 415", "/api/public/v1/tasks", "compress", []byte(`{"title":"x"}`), 415, "unsupported_encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", base+tc.path, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", tc.encoding)
			req.Header.Set("Authorization", "Bearer "+co.Secret)
			req.Header.Set("X-API-Key", co.Publishable)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || (tc.code != "" && !strings.Contains(string(body), `"code":"`+tc.code+`"`)) {
				t.Errorf("got %d %s, want %d %s", res.StatusCode, body, tc.status, tc.code)
			}
		})
	}
}
