package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"

	"github.com/google/uuid"
	"github.com/ory/fosite"

	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

const (
	sessionCookie = "bd_oauth_session"
	csrfCookie    = "bd_oauth_csrf"
)

// loginUser is a user who signed in (oauth_server_login) or whose session or grant names it
// (oauth_server_user).
type loginUser struct {
	ID, CompanyID                   uuid.UUID
	CompanyName, Email, First, Last string
	Role                            string
	Active                          bool
}

// lookupUser returns the user of a signed-in session or a grant, or nil when there is none in a
// live company.
func (s *Server) lookupUser(ctx context.Context, id uuid.UUID) (*loginUser, error) {
	var u loginUser
	err := tenancy.QueryRow(ctx, sqlUser, []any{id}, &u.ID, &u.CompanyID, &u.CompanyName, &u.Email, &u.First, &u.Last, &u.Role, &u.Active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth user %s: %w", id, err)
	}
	return &u, nil
}

// dummyParams are the argon2id parameters and salt an unknown e-mail's password is derived
// with, so that it takes as long as a wrong password.
var dummyParams = sync.OnceValue(func() string {
	h := passhash.Hash("brokerdesk-no-such-user")
	return h[:strings.LastIndex(h, "$")]
})

// signIn checks email and password. Unknown e-mail, wrong password, no password set and an
// inactive or suspended user all give the same nil answer, after the same work. The database
// gives the parameters and salt of each of the e-mail's passwords, the server derives the
// argon2id hash of the typed password for each, and the database says which user, if any, it
// belongs to: the stored hashes never leave it (oauth_server_login).
func (s *Server) signIn(ctx context.Context, email, password string) (*loginUser, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, sqlLoginParams, email)
	if err != nil {
		return nil, fmt.Errorf("oauth sign-in: %w", err)
	}
	var hashes []string
	for rows.Next() {
		var params string
		if err := rows.Scan(&params); err != nil {
			rows.Close()
			return nil, fmt.Errorf("oauth sign-in: %w", err)
		}
		if h := passhash.Derive(params, password); h != "" {
			hashes = append(hashes, h)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("oauth sign-in: %w", err)
	}
	if len(hashes) == 0 {
		passhash.Derive(dummyParams(), password)
		return nil, nil
	}
	var u loginUser
	err = tenancy.QueryRow(ctx, sqlLogin, []any{email, hashes}, &u.ID, &u.CompanyID, &u.CompanyName, &u.Email, &u.First, &u.Last, &u.Role, &u.Active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth sign-in: %w", err)
	}
	return &u, nil
}

// authorize handles GET and POST /oauth/authorize: checks the client and its redirect URI
// (an unknown one gets an error page, never a redirect), then the login form, the consent
// screen, and the code back to the client (or error=access_denied).
func (s *Server) authorize(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	lang := pickLanguage(r.Header.Get("Accept-Language"))
	q := r.URL.Query()
	var post url.Values
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			s.errorPage(w, lang, http.StatusBadRequest, msgBadRequest)
			return
		}
		post = r.PostForm
	}
	cl, err := s.store.GetClient(ctx, q.Get("client_id"))
	if err != nil {
		s.errorPage(w, lang, http.StatusBadRequest, msgUnknownClient)
		return
	}
	client := cl.(*Client)
	if ru := q.Get("redirect_uri"); ru == "" && len(client.c.RedirectUris) != 1 ||
		ru != "" && !slices.Contains(client.c.RedirectUris, ru) {
		// exact match only: no prefix, suffix, case or port variants (fosite would accept other
		// loopback ports), and never a redirect to an unregistered address
		s.errorPage(w, lang, http.StatusBadRequest, msgBadRedirect)
		return
	}
	// fosite sees the OAuth parameters of the query only: the login fields must never reach
	// its request (it stores the form).
	fr := r.Clone(ctx)
	fr.Method, fr.Body, fr.Form, fr.PostForm = http.MethodGet, http.NoBody, nil, nil
	ar, err := s.provider.NewAuthorizeRequest(ctx, fr)
	if err != nil {
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	if !ar.GetResponseTypes().ExactOne("code") {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrUnsupportedResponseType)
		return
	}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrInvalidRequest.WithHint("PKCE with code_challenge_method=S256 is required."))
		return
	}
	csrf := s.csrfSecret(w, r)
	var user *loginUser
	if uid, ok := s.readSession(r); ok {
		if u, err := s.lookupUser(ctx, uid); err == nil && u != nil && u.Active {
			user = u
		}
	}
	action := ""
	if post != nil {
		if !s.validCSRF(r, post.Get("csrf")) {
			s.errorPage(w, lang, http.StatusForbidden, msgCSRF)
			return
		}
		action = post.Get("action")
	}
	if action == "login" {
		email := strings.ToLower(strings.TrimSpace(post.Get("email")))
		// Failures count per (account, sender) and per sender, never per account alone: five
		// wrong passwords from one address must not lock the account's owner out everywhere
		// (docs/decisions/auth-and-oauth.md "No lockout by e-mail").
		from := sender(r)
		acct := "acct:" + email + "|" + from
		if s.limits.LoginAccount.Exhausted(ctx, acct) || s.limits.LoginIP.Exhausted(ctx, "ip:"+from) {
			s.loginPage(w, lang, http.StatusTooManyRequests, client, r.URL, csrf, email, msgTooMany)
			return
		}
		u, err := s.signIn(ctx, email, post.Get("password"))
		if err != nil {
			s.errorPage(w, lang, http.StatusInternalServerError, msgInternal)
			return
		}
		if u == nil {
			s.limits.LoginAccount.Allow(ctx, acct)
			s.limits.LoginIP.Allow(ctx, "ip:"+from)
			s.loginPage(w, lang, http.StatusUnauthorized, client, r.URL, csrf, email, msgBadLogin)
			return
		}
		s.writeSession(w, r, u.ID)
		user = u
		action = ""
	}
	if user == nil {
		s.loginPage(w, lang, http.StatusOK, client, r.URL, csrf, "", msgBadLogin)
		return
	}
	if client.c.CompanyID != nil && *client.c.CompanyID != user.CompanyID {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The client acts for another company."))
		return
	}
	if action == "deny" {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The user denied the request."))
		return
	}
	granted := s.grantable(user, ar.GetRequestedScopes())
	if len(granted) == 0 {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrInvalidScope.WithHint("The user's role may hold none of the requested scopes."))
		return
	}
	var remembered []byte
	err = tenancy.QueryRow(ctx, sqlConsent, []any{user.ID, client.c.ID}, &remembered)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		s.errorPage(w, lang, http.StatusInternalServerError, msgInternal)
		return
	}
	var consented []string
	if remembered != nil && json.Unmarshal(remembered, &consented) != nil {
		consented = nil
	}
	if action != "allow" && !containsAll(consented, granted) {
		s.consentPage(w, lang, client, user, granted, r.URL, csrf)
		return
	}
	if action == "allow" {
		scopes, _ := json.Marshal(granted)
		if _, err := tenancy.Client(ctx).ExecContext(ctx, sqlConsentSave, user.ID, client.c.ID, string(scopes)); err != nil {
			s.errorPage(w, lang, http.StatusInternalServerError, msgInternal)
			return
		}
	}
	for _, sc := range granted {
		ar.GrantScope(sc)
	}
	sess := &Session{CompanyID: user.CompanyID, UserID: user.ID}
	sess.Subject = user.ID.String()
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// grantable is requested ∩ what the user's role may hold (the client's own list was checked by
// fosite already).
func (s *Server) grantable(u *loginUser, requested []string) []string {
	e := policy.Default()
	out := []string{}
	for _, sc := range requested {
		res, act, ok := strings.Cut(sc, ":")
		if ok && e.RoleAllows(u.Role, u.CompanyID.String(), res, act) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// SenderKey is where the mounting Fiber handler leaves the request's sender for Handler: the
// client address as ratelimit.Clients tells it (X-Forwarded-For from TRUSTED_PROXIES only), an
// IPv6 address as its /64 (ratelimit.AddrBucket), the key of every per-address limit here.
type SenderKey struct{}

// sender is the request's sender (SenderKey); without one (Handler served directly), the peer
// address, bucketed the same way.
func sender(r *http.Request) string {
	if s, ok := r.Context().Value(SenderKey{}).(string); ok && s != "" {
		return s
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return ratelimit.AddrBucket(ap.Addr().Unmap())
}

func isLocal(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

func (s *Server) mac(parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s.secret)
	for _, p := range parts {
		m.Write(p)
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// writeSession sets the login session: user id and expiry, signed. HttpOnly, SameSite=Lax,
// Secure unless served on localhost.
func (s *Server) writeSession(w http.ResponseWriter, r *http.Request, uid uuid.UUID) {
	b := make([]byte, 24)
	copy(b, uid[:])
	binary.BigEndian.PutUint64(b[16:], uint64(s.now().Add(sessionLifespan).Unix()))
	v := base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(s.mac([]byte("session"), b))
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: v, Path: "/oauth", HttpOnly: true,
		Secure: !isLocal(r.Host), SameSite: http.SameSiteLaxMode, MaxAge: int(sessionLifespan / time.Second)})
}

func (s *Server) readSession(r *http.Request) (uuid.UUID, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return uuid.Nil, false
	}
	p, m, ok := strings.Cut(c.Value, ".")
	b, err1 := base64.RawURLEncoding.DecodeString(p)
	sig, err2 := base64.RawURLEncoding.DecodeString(m)
	if !ok || err1 != nil || err2 != nil || len(b) != 24 || !hmac.Equal(sig, s.mac([]byte("session"), b)) {
		return uuid.Nil, false
	}
	if time.Unix(int64(binary.BigEndian.Uint64(b[16:])), 0).Before(s.now()) {
		return uuid.Nil, false
	}
	uid, _ := uuid.FromBytes(b[:16])
	return uid, true
}

// csrfSecret returns the form token for this browser: the HMAC of a random cookie, set now if
// missing (double submit, bound to the server's secret). A form posted from another site lacks
// the cookie's pair and is refused, login included (login CSRF).
func (s *Server) csrfSecret(w http.ResponseWriter, r *http.Request) string {
	raw := ""
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		raw = c.Value
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		raw = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: raw, Path: "/oauth", HttpOnly: true,
			Secure: !isLocal(r.Host), SameSite: http.SameSiteLaxMode})
	}
	return base64.RawURLEncoding.EncodeToString(s.mac([]byte("csrf"), []byte(raw)))
}

func (s *Server) validCSRF(r *http.Request, token string) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || token == "" {
		return false
	}
	want := base64.RawURLEncoding.EncodeToString(s.mac([]byte("csrf"), []byte(c.Value)))
	return subtle.ConstantTimeCompare([]byte(want), []byte(token)) == 1
}
