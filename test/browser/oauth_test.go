package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// partnerApp is a partner application written with golang.org/x/oauth2: /start sends the
// browser to the authorization endpoint with a PKCE challenge, /callback exchanges the code
// with the verifier and shows who GET /me says the token acts for.
type partnerApp struct {
	conf     *oauth2.Config
	apiBase  string
	mu       sync.Mutex
	verifier map[string]string // state -> PKCE verifier
	token    *oauth2.Token
}

func (p *partnerApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/start":
		state, verifier := fmt.Sprintf("state-%d", time.Now().UnixNano()), oauth2.GenerateVerifier()
		p.mu.Lock()
		p.verifier[state] = verifier
		p.mu.Unlock()
		opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
		if s := r.URL.Query().Get("scope"); s != "" {
			opts = append(opts, oauth2.SetAuthURLParam("scope", s))
		}
		http.Redirect(w, r, p.conf.AuthCodeURL(state, opts...), http.StatusFound)
	case "/callback":
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			fmt.Fprintf(w, `<!DOCTYPE html><html><body><p id="error">%s</p></body></html>`, html.EscapeString(e))
			return
		}
		p.mu.Lock()
		verifier, ok := p.verifier[q.Get("state")]
		p.mu.Unlock()
		if !ok {
			http.Error(w, "unknown state", http.StatusBadRequest)
			return
		}
		tok, err := p.conf.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			http.Error(w, "exchange: "+err.Error(), http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		p.token = tok
		p.mu.Unlock()
		resp, err := p.conf.Client(r.Context(), tok).Get(p.apiBase + "/api/public/v1/me")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var me struct {
			User   struct{ Email string }
			Client struct{ Name string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&me)
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><p id="user">%s</p><p id="client">%s</p></body></html>`,
			html.EscapeString(me.User.Email), html.EscapeString(me.Client.Name))
	default:
		http.NotFound(w, r)
	}
}

// TestBrowser_OAuth drives the whole authorization code flow in Chromium: the partner app
// sends the browser to authorize, the user signs in and consents, the code comes back to the
// app, which exchanges it with the PKCE verifier and reads /me; then refresh and revoke; a
// denial returns error=access_denied to the app.
func TestBrowser_OAuth(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	user := env.NewUser(t, co, "agent")
	password := "browser-password-123"
	if err := env.Ops.SetPassword(context.Background(), co.ID, user.Email, password); err != nil {
		t.Fatal(err)
	}
	apiBase := serveAPI(t, env)
	partner := &partnerApp{apiBase: apiBase, verifier: map[string]string{}}
	appBase := servePages(t, partner)
	cl, err := env.Ops.CreateOAuthClient(context.Background(), operator.NewOAuthClientInput{Name: "Maklerverwaltung Plus",
		RedirectURIs: []string{appBase + "/callback"}, Scopes: []string{"contacts:read", "leads:read"}})
	if err != nil {
		t.Fatal(err)
	}
	partner.conf = &oauth2.Config{ClientID: cl.ID.String(), ClientSecret: cl.Secret, RedirectURL: appBase + "/callback",
		Scopes:   []string{"contacts:read"},
		Endpoint: oauth2.Endpoint{AuthURL: apiBase + "/oauth/authorize", TokenURL: apiBase + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	browser := newBrowser(t, ctx)
	tab, _ := newTab(t, browser)

	do(t, tab,
		chromedp.Navigate(appBase+"/start"),
		chromedp.WaitVisible(chromedp.CSS("#password")),
	)
	if name := run(t, tab, chromedp.Text(chromedp.CSS("#client-name"))); name != "Maklerverwaltung Plus" {
		t.Errorf("sign-in page names %q", name)
	}
	do(t, tab,
		chromedp.SendKeys(chromedp.CSS("#email"), user.Email),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#allow")),
	)
	scopes := run(t, tab, chromedp.Text(chromedp.CSS("#scopes")))
	if !strings.Contains(scopes, "read contacts") && !strings.Contains(scopes, "Kontakte lesen") {
		t.Errorf("consent lists %q, want the readable label (read contacts / Kontakte lesen)", scopes)
	}
	do(t, tab,
		chromedp.Click(chromedp.CSS("#allow")),
		chromedp.WaitVisible(chromedp.CSS("#user")),
	)
	if got := run(t, tab, chromedp.Text(chromedp.CSS("#user"))); got != user.Email {
		t.Errorf("the app's /me shows user %q, want %q", got, user.Email)
	}
	if got := run(t, tab, chromedp.Text(chromedp.CSS("#client"))); got != "Maklerverwaltung Plus" {
		t.Errorf("the app's /me shows client %q", got)
	}

	// refresh: x/oauth2 refreshes an expired token by itself
	partner.mu.Lock()
	tok := *partner.token
	partner.mu.Unlock()
	old := tok.AccessToken
	tok.Expiry = time.Now().Add(-time.Minute)
	fresh, err := partner.conf.TokenSource(ctx, &tok).Token()
	if err != nil || fresh.AccessToken == old || fresh.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v (new token %v)", err, fresh != nil && fresh.AccessToken != old)
	}
	if r := env.Do(t, apitest.Request{Path: "/me", Key: fresh.AccessToken}); r.Status != 200 {
		t.Errorf("refreshed token: %d", r.Status)
	}
	// revoke
	form := url.Values{"token": {fresh.RefreshToken}}
	req, _ := http.NewRequest(http.MethodPost, apiBase+"/oauth/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(cl.ID.String(), cl.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if r := env.Do(t, apitest.Request{Path: "/me", Key: fresh.AccessToken}); r.Status != 401 {
		t.Errorf("revoked grant's token: %d, want 401", r.Status)
	}

	// deny: more scopes than consented show the screen again; denying returns to the app
	do(t, tab,
		chromedp.Navigate(appBase+"/start?scope="+url.QueryEscape("contacts:read leads:read")),
		chromedp.WaitVisible(chromedp.CSS("#deny")),
		chromedp.Click(chromedp.CSS("#deny")),
		chromedp.WaitVisible(chromedp.CSS("#error")),
	)
	if got := run(t, tab, chromedp.Text(chromedp.CSS("#error"))); got != "access_denied" {
		t.Errorf("after deny the app got %q, want access_denied", got)
	}
}
