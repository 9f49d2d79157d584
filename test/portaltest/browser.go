package portaltest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// Browser is a customer's browser for the portal's tests over HTTP: a cookie jar, redirects
// not followed (the tests look at them). Requests go to Base + path; Header is sent with each
// (X-Forwarded-For of a test of the throttle).
type Browser struct {
	Base   string
	Header map[string]string
	c      *http.Client
}

// NewBrowser is a browser of base; rt, when not nil, carries its requests (an in-process app,
// so that a jar keeps the Secure cookies of an https base).
func NewBrowser(t testing.TB, base string, rt http.RoundTripper) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{Base: base, Header: map[string]string{}, c: &http.Client{Jar: jar, Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Page is what a page answered.
type Page struct {
	Status   int
	Body     string
	Header   http.Header
	Location string
}

// Do sends a request (form posted when not nil).
func (b *Browser) Do(t testing.TB, method, path string, form url.Values) Page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.Base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", "portal-test/1.0 (Go)")
	for k, v := range b.Header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Page{Status: resp.StatusCode, Body: string(got), Header: resp.Header, Location: resp.Header.Get("Location")}
}

// Cookies are the cookies the browser would send to path.
func (b *Browser) Cookies(t testing.TB, path string) []*http.Cookie {
	t.Helper()
	u, err := url.Parse(b.Base + path)
	if err != nil {
		t.Fatal(err)
	}
	return b.c.Jar.Cookies(u)
}

// Get loads path.
func (b *Browser) Get(t testing.TB, path string) Page { t.Helper(); return b.Do(t, "GET", path, nil) }

// Post posts form to path as it is (a test of a missing or foreign CSRF token).
func (b *Browser) Post(t testing.TB, path string, form url.Values) Page {
	t.Helper()
	return b.Do(t, "POST", path, form)
}

// Submit loads page, takes the csrf field of its form posting to action and posts form with it.
func (b *Browser) Submit(t testing.TB, page, action string, form url.Values) Page {
	t.Helper()
	p := b.Get(t, page)
	tok, ok := signingtest.CSRF(p.Body)[action]
	if !ok {
		t.Fatalf("GET %s (%d): no form to %s:\n%s", page, p.Status, action, p.Body)
	}
	form.Set("csrf", tok)
	return b.Post(t, action, form)
}
