// Package oauth tests the OAuth 2.0 authorization server against the real server on a real
// listener: clients of golang.org/x/oauth2 and plain HTTP, sign-in and consent forms posted as
// a browser would (test/browser drives the same flow in Chromium), and every attack of issue 9.
package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// served is the package server's base URL: one listener for the package, serving until the
// test binary exits (a shutdown would stop the shared server for every parallel test).
var (
	servedOnce sync.Once
	servedBase string
)

// serveAPI serves the package's server on a loopback listener and returns its base URL.
func serveAPI(t *testing.T, env *apitest.Env) string {
	t.Helper()
	servedOnce.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = env.Server.ServeListener(context.Background(), ln, time.Second) }()
		servedBase = "http://" + ln.Addr().String()
	})
	return apitest.WaitHealthy(t, servedBase)
}

var seq atomic.Int64

// app is a partner app registered for the test: its client and x/oauth2 configuration.
type app struct {
	client operator.OAuthClient
	conf   *oauth2.Config
}

const redirect = "https://partner.example/callback"

func newApp(t *testing.T, env *apitest.Env, base string, in operator.NewOAuthClientInput) *app {
	t.Helper()
	if in.Name == "" {
		in.Name = fmt.Sprintf("Partner App %d", seq.Add(1))
	}
	if in.RedirectURIs == nil {
		in.RedirectURIs = []string{redirect}
	}
	if in.Scopes == nil {
		in.Scopes = []string{"contacts:read", "leads:read", "users:read", "users:write", "company:read"}
	}
	c, err := env.Ops.CreateOAuthClient(context.Background(), in)
	if err != nil {
		t.Fatalf("create oauth client: %v", err)
	}
	return &app{client: c, conf: &oauth2.Config{ClientID: c.ID.String(), ClientSecret: c.Secret,
		Endpoint:    oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
		RedirectURL: in.RedirectURIs[0], Scopes: []string{"contacts:read", "leads:read"}}}
}

// person is a company user with a password.
type person struct {
	operator.User
	password string
}

func newPerson(t *testing.T, env *apitest.Env, co *apitest.Company, role string) person {
	t.Helper()
	u := env.NewUser(t, co, role)
	pw := "correct horse " + uuid.NewString()[:8]
	if err := env.Ops.SetPassword(context.Background(), co.ID, u.Email, pw); err != nil {
		t.Fatalf("set password: %v", err)
	}
	return person{User: u, password: pw}
}

// browser is a user agent: a cookie jar, redirects not followed (the tests read them).
type browser struct {
	t *testing.T
	c *http.Client
	// from, when set, is sent as X-Forwarded-For: the address the browser signs in from, for a
	// server that trusts the loopback proxy (TestOAuth_LoginLockoutPerSender).
	from string
}

func newBrowserClient(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status   int
	location string
	body     string
}

func (p page) csrf() string {
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return m[1]
}

func (b *browser) get(u string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Language", "en")
	return b.do(req)
}

func (b *browser) post(u string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "en")
	return b.do(req)
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	if b.from != "" {
		req.Header.Set("X-Forwarded-For", b.from)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(body)}
}

// signIn opens authURL, signs in and returns the next page (consent, or the redirect).
func (b *browser) signIn(authURL string, p person) page {
	b.t.Helper()
	login := b.get(authURL)
	if login.status != 200 || login.csrf() == "" {
		b.t.Fatalf("authorize: status %d %s, want the sign-in form\n%s", login.status, login.location, login.body)
	}
	return b.post(authURL, url.Values{"action": {"login"}, "csrf": {login.csrf()}, "email": {p.Email}, "password": {p.password}})
}

// authorize runs the whole browser side and returns the redirect back to the app.
func (b *browser) authorize(authURL string, p person, action string) *url.URL {
	b.t.Helper()
	next := b.get(authURL)
	if next.status == 200 && strings.Contains(next.body, `name="password"`) {
		next = b.post(authURL, url.Values{"action": {"login"}, "csrf": {next.csrf()}, "email": {p.Email}, "password": {p.password}})
	}
	if next.status == 200 {
		if !strings.Contains(next.body, `id="allow"`) {
			b.t.Fatalf("after sign-in: want the consent screen\n%s", next.body)
		}
		next = b.post(authURL, url.Values{"action": {action}, "csrf": {next.csrf()}})
	}
	if next.status != http.StatusSeeOther && next.status != http.StatusFound {
		b.t.Fatalf("want a redirect back to the app, got %d\n%s", next.status, next.body)
	}
	u, err := url.Parse(next.location)
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// code runs the flow with PKCE and returns the code and its verifier.
func (a *app) code(t *testing.T, b *browser, p person, opts ...oauth2.AuthCodeOption) (string, string) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	state := uuid.NewString()
	u := b.authorize(a.conf.AuthCodeURL(state, append(opts, oauth2.S256ChallengeOption(verifier))...), p, "allow")
	if got := u.Query().Get("state"); got != state {
		t.Fatalf("state %q, want %q", got, state)
	}
	c := u.Query().Get("code")
	if c == "" {
		t.Fatalf("no code in %s", u)
	}
	return c, verifier
}

// tokenResp is the token endpoint's answer, or its error.
type tokenResp struct {
	Status       int
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	ExpiresIn    int    `json:"expires_in"`
	Error        string `json:"error"`
}

// token posts form to the token endpoint as the app (HTTP Basic).
func (a *app) token(t *testing.T, form url.Values) tokenResp {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.conf.Endpoint.TokenURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if a.client.Secret != "" {
		req.SetBasicAuth(url.QueryEscape(a.conf.ClientID), url.QueryEscape(a.conf.ClientSecret))
	} else {
		form.Set("client_id", a.conf.ClientID)
		req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out tokenResp
	_ = json.NewDecoder(resp.Body).Decode(&out)
	out.Status = resp.StatusCode
	return out
}

func (a *app) exchange(t *testing.T, code, verifier string) tokenResp {
	t.Helper()
	f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {a.conf.RedirectURL}}
	if verifier != "" {
		f.Set("code_verifier", verifier)
	}
	return a.token(t, f)
}

func (a *app) refresh(t *testing.T, rt string, scope ...string) tokenResp {
	t.Helper()
	f := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}
	if len(scope) > 0 {
		f.Set("scope", strings.Join(scope, " "))
	}
	return a.token(t, f)
}

// me is GET /me with a bearer token, through the harness (validated against the OpenAPI document).
type meView struct {
	Company struct {
		ID   uuid.UUID
		Name string
	}
	User *struct {
		ID    uuid.UUID
		Email string
	}
	Client *struct {
		ID   uuid.UUID
		Name string
	}
	Credential struct{ Kind, Env string }
	Scopes     []string
}

func me(t *testing.T, env *apitest.Env, token string) (int, meView) {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/me", Key: token})
	var v meView
	if r.Status == 200 {
		r.Decode(t, &v)
	}
	return r.Status, v
}
