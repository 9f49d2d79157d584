package oauth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestOAuth_Attacks: each subtest is one attack of issue 9 and what stops it.
func TestOAuth_Attacks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := serveAPI(t, env)
	co := env.NewCompany(t)
	u := newPerson(t, env, co, "manager")
	a := newApp(t, env, base, operator.NewOAuthClientInput{
		RedirectURIs: []string{redirect, "http://127.0.0.1:8765/cb"}})
	a.conf.Scopes = []string{"contacts:read"}

	t.Run("authorization code replay fails and revokes the tokens of the first use", func(t *testing.T) {
		b := newBrowserClient(t)
		code, verifier := a.code(t, b, u)
		first := a.exchange(t, code, verifier)
		if first.Status != 200 {
			t.Fatalf("first exchange: %+v", first)
		}
		second := a.exchange(t, code, verifier)
		if second.Status != 400 || second.Error != "invalid_grant" {
			t.Errorf("replayed code: %+v, want invalid_grant", second)
		}
		if status, _ := me(t, env, first.AccessToken); status != 401 {
			t.Errorf("access token of the replayed code: %d, want 401", status)
		}
		if r := a.refresh(t, first.RefreshToken); r.Status == 200 {
			t.Errorf("refresh token of the replayed code still works")
		}
	})

	t.Run("wrong or missing PKCE verifier", func(t *testing.T) {
		b := newBrowserClient(t)
		code, _ := a.code(t, b, u)
		if r := a.exchange(t, code, oauth2.GenerateVerifier()); r.Status != 400 || r.Error != "invalid_grant" {
			t.Errorf("wrong verifier: %+v, want invalid_grant", r)
		}
		code2, _ := a.code(t, b, u)
		if r := a.exchange(t, code2, ""); r.Status != 400 {
			t.Errorf("missing verifier: %+v, want 400", r)
		}
	})

	t.Run("no PKCE and the plain method are refused before sign-in", func(t *testing.T) {
		b := newBrowserClient(t)
		for name, q := range map[string]url.Values{
			"plain": {"code_challenge": {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq"}, "code_challenge_method": {"plain"}},
			"none":  {},
		} {
			u, _ := url.Parse(a.conf.AuthCodeURL("state-0001"))
			qq := u.Query()
			for k, v := range q {
				qq[k] = v
			}
			u.RawQuery = qq.Encode()
			p := b.get(u.String())
			loc, _ := url.Parse(p.location)
			if p.status != http.StatusSeeOther || loc == nil || loc.Query().Get("error") != "invalid_request" || loc.Query().Get("code") != "" {
				t.Errorf("%s: %d %s, want a redirect with error=invalid_request", name, p.status, p.location)
			}
		}
	})

	t.Run("unregistered redirect URIs get an error page, never a redirect", func(t *testing.T) {
		b := newBrowserClient(t)
		for _, ru := range []string{
			"https://partner.example/callback/evil", "https://partner.example/call", "https://partner.example/callbackx",
			"https://PARTNER.example/callback", "https://partner.example/Callback", "https://partner.example:8443/callback",
			"http://partner.example/callback", "https://partner.example.evil.com/callback", "https://evil.example/callback",
			"https://partner.example/callback?x=1", "http://127.0.0.1:8766/cb", "http://localhost:8765/cb",
		} {
			q := url.Values{"response_type": {"code"}, "client_id": {a.conf.ClientID}, "redirect_uri": {ru},
				"scope": {"contacts:read"}, "state": {"state-0001"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
				"code_challenge_method": {"S256"}}
			p := b.get(base + "/oauth/authorize?" + q.Encode())
			if p.status != 400 || p.location != "" || !strings.Contains(p.body, "not registered") {
				t.Errorf("%s: %d location %q, want the 400 error page", ru, p.status, p.location)
			}
		}
		// the same with no redirect_uri and more than one registered
		p := b.get(base + "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {a.conf.ClientID}}.Encode())
		if p.status != 400 || p.location != "" {
			t.Errorf("no redirect_uri with two registered: %d %q", p.status, p.location)
		}
		p = b.get(base + "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {"not-a-client"}, "redirect_uri": {redirect}}.Encode())
		if p.status != 400 || p.location != "" {
			t.Errorf("unknown client: %d %q", p.status, p.location)
		}
	})

	t.Run("state cannot redirect elsewhere", func(t *testing.T) {
		b := newBrowserClient(t)
		evil := "https://evil.example/steal?x=" + url.QueryEscape(redirect)
		loc := b.authorize(a.conf.AuthCodeURL(evil, oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), u, "allow")
		if loc.Scheme+"://"+loc.Host+loc.Path != redirect || loc.Query().Get("state") != evil {
			t.Errorf("redirected to %s, want %s with the state echoed as a parameter", loc, redirect)
		}
	})

	t.Run("expired code", func(t *testing.T) {
		b := newBrowserClient(t)
		code, verifier := a.code(t, b, u)
		owner, err := sql.Open("pgx", env.OwnerURL)
		if err != nil {
			t.Fatal(err)
		}
		defer owner.Close()
		// move this code's expiry into the past, in the stored session as fosite reads it; only
		// this one (by the hash of its signature): the database is shared with the sibling
		// subtests, whose codes must stay valid while they run
		res, err := owner.Exec(`UPDATE oauth_tokens SET expires_at = now() - interval '1 minute',
			session = convert_to(jsonb_set(convert_from(session, 'UTF8')::jsonb, '{expires_at,authorize_code}',
			to_jsonb(now() - interval '1 minute'))::text, 'UTF8') WHERE kind = 'authorize_code' AND signature_hash = $1`,
			signatureHash(code))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("expired %d codes (%v), want exactly this one", n, err)
		}
		if r := a.exchange(t, code, verifier); r.Status != 400 || r.Error != "invalid_grant" {
			t.Errorf("expired code: %+v, want invalid_grant", r)
		}
	})

	t.Run("scope escalation on refresh", func(t *testing.T) {
		b := newBrowserClient(t)
		code, verifier := a.code(t, b, u)
		tk := a.exchange(t, code, verifier)
		if r := a.refresh(t, tk.RefreshToken, "contacts:read", "users:write"); r.Status != 400 || r.Error != "invalid_scope" {
			t.Errorf("refresh asking for more: %+v, want invalid_scope", r)
		}
		if r := a.refresh(t, tk.RefreshToken, "contacts:read"); r.Status != 200 || r.Scope != "contacts:read" {
			t.Errorf("refresh with the granted scope: %+v", r)
		}
	})

	t.Run("login CSRF: a form without the browser's token is refused", func(t *testing.T) {
		authURL := a.conf.AuthCodeURL("state-0001", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		attacker := newBrowserClient(t)
		forged := attacker.get(authURL).csrf() // the attacker's own token, from the attacker's session
		victim := newBrowserClient(t)
		for name, tok := range map[string]string{"no token": "", "the attacker's token": forged} {
			p := victim.post(authURL, url.Values{"action": {"login"}, "csrf": {tok}, "email": {u.Email}, "password": {u.password}})
			if p.status != 403 || p.location != "" {
				t.Errorf("%s: %d, want 403", name, p.status)
			}
		}
		// and consent cannot be forged either
		p := victim.post(authURL, url.Values{"action": {"allow"}})
		if p.status != 403 {
			t.Errorf("forged consent: %d, want 403", p.status)
		}
	})

	t.Run("brute force is slowed per account and address, and unknown users get the same answer", func(t *testing.T) {
		victim := newPerson(t, env, co, "agent")
		authURL := a.conf.AuthCodeURL("state-0001", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		b := newBrowserClient(t)
		tok := b.get(authURL).csrf()
		try := func(email, pw string) page {
			return b.post(authURL, url.Values{"action": {"login"}, "csrf": {tok}, "email": {email}, "password": {pw}})
		}
		unknown := try("nobody-"+victim.Email, "wrong password")
		wrong := try(victim.Email, "wrong password")
		if unknown.status != 401 || wrong.status != 401 || errorText(unknown.body) != errorText(wrong.body) {
			t.Errorf("unknown user %d %q vs wrong password %d %q: want the same 401", unknown.status, errorText(unknown.body),
				wrong.status, errorText(wrong.body))
		}
		for range 4 {
			try(victim.Email, "wrong password")
		}
		if p := try(victim.Email, victim.password); p.status != http.StatusTooManyRequests {
			t.Errorf("right password after 5 failures: %d, want 429", p.status)
		}
	})

	t.Run("a user of another company cannot authorize a company-bound client", func(t *testing.T) {
		other := env.NewCompany(t)
		stranger := newPerson(t, env, other, "admin")
		bound := newApp(t, env, base, operator.NewOAuthClientInput{CompanyID: &co.ID})
		loc := newBrowserClient(t).authorize(bound.conf.AuthCodeURL("state-0001", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), stranger, "allow")
		if loc.Query().Get("error") != "access_denied" || loc.Query().Get("code") != "" {
			t.Errorf("stranger: %s, want error=access_denied", loc)
		}
	})

	t.Run("a suspended user cannot sign in", func(t *testing.T) {
		s := newPerson(t, env, co, "agent")
		if n, err := env.AppDBSetUserStatus(context.Background(), co.ID, s.ID, "suspended"); err != nil || n != 1 {
			t.Fatal(n, err)
		}
		p := newBrowserClient(t).signIn(a.conf.AuthCodeURL("state-0001", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), s)
		if p.status != 401 {
			t.Errorf("suspended user: %d, want 401", p.status)
		}
	})
}

// signatureHash is what oauth_tokens stores for a fosite token ("<prefix><key>.<signature>"):
// the SHA-256 of its signature.
func signatureHash(token string) []byte {
	_, sig, _ := strings.Cut(token, ".")
	h := sha256.Sum256([]byte(sig))
	return h[:]
}

func errorText(body string) string {
	i := strings.Index(body, `id="error"`)
	if i < 0 {
		return ""
	}
	rest := body[i:]
	return rest[strings.Index(rest, ">")+1 : strings.Index(rest, "</p>")]
}
