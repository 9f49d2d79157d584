package apitest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// CheckHTTP validates one exchange a test made with its own HTTP client (a server on a real
// listener, another process, a browser) against the OpenAPI document, exactly as Env.Do
// validates its own: the route, the request when it succeeded, the status, headers and body.
// reqBody and body are the bytes sent and received (the bodies of req and resp are not read).
func CheckHTTP(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	path := req.URL.Path
	if req.URL.RawQuery != "" {
		path += "?" + req.URL.RawQuery
	}
	validateOpenAPI(t, req.Method, path, req.Header, reqBody, &Response{Status: resp.StatusCode, Header: resp.Header, Body: body})
}

// Client returns an HTTP client that validates every exchange with CheckHTTP. It does not
// follow redirects (the intake's 302 is an answer to check, and its target another site).
func Client(t testing.TB) *http.Client {
	return &http.Client{
		Transport:     Transport(t, http.DefaultTransport),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Transport wraps next so that every exchange through it is validated with CheckHTTP; the
// caller still reads the response body as usual.
func Transport(t testing.TB, next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		var reqBody []byte
		if req.Body != nil {
			var err error
			if reqBody, err = io.ReadAll(req.Body); err != nil {
				return nil, err
			}
			req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(reqBody))
		}
		resp, err := next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		CheckHTTP(t, req, reqBody, resp, body)
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Proxy serves a reverse proxy to base (an API server's http://host:port) that validates every
// exchange with CheckHTTP, and returns its own base URL: point a browser at it and whatever the
// browser asks and gets is checked against the document. It closes at cleanup.
func Proxy(t testing.TB, base string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatalf("apitest: proxy target %q: %v", base, err)
	}
	p := httputil.NewSingleHostReverseProxy(target)
	p.Transport = Transport(t, http.DefaultTransport)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}
