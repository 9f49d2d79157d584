// Package oauth is the OAuth 2.0 authorization server for partner apps (ory/fosite): the
// authorization code with PKCE for users (login and consent pages), client credentials for
// company-bound clients, refresh with rotation and reuse detection, revocation (RFC 7009),
// introspection (RFC 7662) and the RFC 8414 metadata. Each request runs in one transaction
// marked tenancy.WithOAuthServer, pinned to no company, and reaches the OAuth tables only through
// the SECURITY DEFINER functions of sql.go. API requests resolve access tokens in tenancy's auth
// middleware, not here (ValidAccessToken checks their signature for it).
package oauth

import (
	"bytes"
	"context"
	stdhmac "crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/token/hmac"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/oauthtoken"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Paths of the authorization server, published in the metadata.
const (
	PathAuthorize  = "/oauth/authorize"
	PathToken      = "/oauth/token"
	PathRevoke     = "/oauth/revoke"
	PathIntrospect = "/oauth/introspect"
	PathMetadata   = "/.well-known/oauth-authorization-server"
)

// Lifetimes (issue 9).
const (
	AccessTokenLifespan  = time.Hour
	RefreshTokenLifespan = 30 * 24 * time.Hour
	CodeLifespan         = 10 * time.Minute
	sessionLifespan      = time.Hour
)

// Server is the authorization server.
type Server struct {
	client   *ent.Client // app-role pool (tenancy.Driver)
	provider fosite.OAuth2Provider
	store    *Store
	enigma   *hmac.HMACStrategy // fosite's token signatures, to check access tokens for tenancy
	secret   []byte             // signs the login session and CSRF tokens
	limits   *ratelimit.Limits
	now      func() time.Time
}

// NewServer builds the server. secret is APP_SECRET: tokens' HMAC key and the cookie key derive
// from it, so replicas sharing it accept each other's tokens.
func NewServer(client *ent.Client, secret []byte, limits *ratelimit.Limits, now func() time.Time) *Server {
	derive := func(label string) []byte {
		m := stdhmac.New(sha256.New, secret)
		m.Write([]byte("brokerdesk oauth " + label))
		return m.Sum(nil)
	}
	store := &Store{lifespans: map[oauthtoken.Kind]time.Duration{
		oauthtoken.KindAccessToken: AccessTokenLifespan, oauthtoken.KindRefreshToken: RefreshTokenLifespan,
		oauthtoken.KindAuthorizeCode: CodeLifespan, oauthtoken.KindPkce: CodeLifespan,
	}}
	cfg := &fosite.Config{
		AccessTokenLifespan:            AccessTokenLifespan,
		RefreshTokenLifespan:           RefreshTokenLifespan,
		AuthorizeCodeLifespan:          CodeLifespan,
		GlobalSecret:                   derive("hmac"),
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.DefaultAudienceMatchingStrategy,
		RefreshTokenScopes:             []string{}, // every code exchange gets a refresh token
		ClientSecretsHasher:            secretHasher{},
		SendDebugMessagesToClients:     false,
	}
	strategy := compose.NewOAuth2HMACStrategy(cfg)
	enigma := &hmac.HMACStrategy{Config: cfg}
	provider := compose.Compose(cfg, store, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2ClientCredentialsGrantFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2PKCEFactory,
	)
	return &Server{client: client, provider: provider, store: store, enigma: enigma, secret: derive("cookies"), limits: limits, now: now}
}

// ValidAccessToken reports whether token is an access token this server (or a replica sharing
// APP_SECRET) made: its signature is the HMAC of its key. tenancy checks it before looking the
// token up (tenancy.NewAuthenticator), so a token row stored by anyone but the server, who
// cannot sign, resolves nothing.
func (s *Server) ValidAccessToken(token string) bool {
	rest, ok := strings.CutPrefix(token, tenancy.AccessTokenPrefix)
	return ok && s.enigma.Validate(context.Background(), rest) == nil
}

// Handler serves every path of the authorization server (net/http: fosite's API; app mounts it
// through Fiber's adaptor).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathAuthorize, s.inTx(s.authorize))
	mux.HandleFunc("POST "+PathAuthorize, s.inTx(s.authorize))
	mux.HandleFunc("POST "+PathToken, s.inTx(challengeBasic(s.token)))
	mux.HandleFunc("POST "+PathRevoke, s.inTx(challengeBasic(s.revoke)))
	mux.HandleFunc("POST "+PathIntrospect, s.inTx(challengeBasic(s.introspect)))
	mux.HandleFunc("GET "+PathMetadata, s.metadata)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l, ok := r.Context().Value(LoggerKey{}).(*zerolog.Logger); ok {
			r = r.WithContext(l.WithContext(r.Context()))
		}
		mux.ServeHTTP(w, r)
	})
}

// LoggerKey is where the mounting Fiber handler leaves the request's logger (the one carrying
// request_id, app's request-log middleware) for Handler: Fiber's net/http adaptor passes no
// user context along.
type LoggerKey struct{}

// bufferedWriter holds the response until the transaction committed: a token must not reach
// the client unless it is stored.
type bufferedWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.h }
func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

// challengeBasic makes every 401 of h carry WWW-Authenticate: Basic. RFC 6749 §5.2 wants it
// on invalid_client after HTTP Basic client authentication (and HTTP on any 401); fosite sends
// none. Only the client-authenticating endpoints: a 401 of the sign-in page with a Basic
// challenge would open the browser's password dialog.
func challengeBasic(h func(ctx context.Context, w http.ResponseWriter, r *http.Request)) func(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request) {
		h(ctx, challengeWriter{w}, r)
	}
}

type challengeWriter struct{ http.ResponseWriter }

func (c challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", `Basic realm="brokerdesk", charset="UTF-8"`)
	}
	c.ResponseWriter.WriteHeader(code)
}

// grantTypes are the grant types the token endpoint serves (the metadata lists them).
var grantTypes = map[string]bool{"authorization_code": true, "refresh_token": true, "client_credentials": true}

// inTx runs h in one transaction of the authorization server. It commits unless h answered
// 5xx: error answers such as a replayed code's invalid_grant must keep the revocations they
// made.
func (s *Server) inTx(h func(ctx context.Context, w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := tenancy.WithOAuthServer(r.Context())
		tx, err := s.client.Tx(ctx)
		if err != nil {
			zerolog.Ctx(ctx).Error().Err(err).Msg("oauth: begin transaction")
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		ctx = tenancy.WithClient(ctx, tx.Client())
		bw := &bufferedWriter{h: http.Header{}}
		committed := false
		defer func() {
			if !committed {
				_ = tx.Rollback()
			}
		}()
		h(ctx, bw, r.WithContext(ctx))
		if bw.status == 0 {
			bw.status = http.StatusOK
		}
		if bw.status >= 500 {
			_ = tx.Rollback()
		} else if err := tx.Commit(); err != nil {
			zerolog.Ctx(ctx).Error().Err(err).Msg("oauth: commit")
			http.Error(w, "internal error", http.StatusInternalServerError)
			committed = true
			return
		}
		committed = true
		for k, v := range bw.h {
			w.Header()[k] = v
		}
		w.WriteHeader(bw.status)
		_, _ = w.Write(bw.body.Bytes())
	}
}

// token handles POST /oauth/token: authorization_code (with the PKCE verifier), refresh_token
// and client_credentials.
func (s *Server) token(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	// Rate limits: an address that failed client authentication too often is refused before
	// any work; so is a client over its quota. Only authenticated requests count against the
	// client's quota, so nobody exhausts another client's by naming it.
	ip := sender(r)
	if s.refuseFailedAddress(ctx, w, ip) {
		return
	}
	client := claimedClient(r)
	if wait := s.limits.TokenClient.Wait(ctx, "client:"+client); client != "" && wait > 0 {
		tooManyRequests(w, wait, "Too many token requests of this client.")
		return
	}
	// fosite answers a grant type no handler serves with invalid_request (and a hint about
	// redirect URIs); RFC 6749 §5.2 says unsupported_grant_type. A missing one stays
	// invalid_request (fosite's answer).
	if gt := postValue(r, "grant_type"); gt != "" && !grantTypes[gt] {
		s.provider.WriteAccessError(ctx, w, nil, fosite.ErrUnsupportedGrantType.WithHintf("The grant type %q is not supported.", gt))
		return
	}
	sess := &Session{}
	ar, err := s.provider.NewAccessRequest(ctx, r, sess)
	switch {
	case errors.Is(err, fosite.ErrInvalidClient):
		s.countFailedAuth(ctx, ip)
	case client != "":
		s.limits.TokenClient.Allow(ctx, "client:"+client)
	}
	if errors.Is(err, fosite.ErrInvalidGrant) && ar != nil && ar.GetClient() != nil && ar.GetClient().IsPublic() &&
		ar.GetGrantTypes().ExactOne("client_credentials") {
		// fosite calls a public client's client-credentials request invalid_grant; the grant
		// is fine, the client may not use it: unauthorized_client (RFC 6749 §5.2)
		err = fosite.ErrUnauthorizedClient.WithHint("A public client may not use client credentials.")
	}
	if err != nil {
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	cl := ar.GetClient().(*Client)
	switch {
	case ar.GetGrantTypes().ExactOne("client_credentials"):
		// a company-bound client acts at company level, with every scope it holds unless it
		// asked for fewer (fosite checked those against the client's list)
		if cl.c.CompanyID == nil || cl.c.Public {
			s.provider.WriteAccessError(ctx, w, ar, fosite.ErrUnauthorizedClient.WithHint("Only a client bound to one company may use client credentials."))
			return
		}
		sess.CompanyID = *cl.c.CompanyID
		grant := ar.GetRequestedScopes()
		if len(grant) == 0 {
			grant = cl.c.Scopes
		}
		for _, sc := range grant {
			ar.GrantScope(sc)
		}
	default:
		if ar.GetGrantTypes().ExactOne("refresh_token") {
			// a refresh may narrow the scopes, never widen them (RFC 6749 §6); fosite would
			// silently keep the original ones
			for _, sc := range strings.Fields(r.PostForm.Get("scope")) {
				if !ar.GetGrantedScopes().Has(sc) {
					s.provider.WriteAccessError(ctx, w, ar, fosite.ErrInvalidScope.WithHintf("The scope %q was not granted.", sc))
					return
				}
			}
		}
		// code exchange and refresh: the user must still be allowed to sign in
		if u, err := s.lookupUser(ctx, sess.UserID); err != nil || u == nil || !u.Active {
			s.provider.WriteAccessError(ctx, w, ar, fosite.ErrInvalidGrant.WithHint("The user of this grant is inactive."))
			return
		}
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

// claimedClient is the client id a token request names (HTTP Basic or client_id), before it
// is authenticated.
func claimedClient(r *http.Request) string {
	if id, _, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(id); err == nil {
			return u
		}
		return id
	}
	if err := r.ParseForm(); err != nil {
		return ""
	}
	return r.PostForm.Get("client_id")
}

// postValue is the form field name of the request body ("" for a body that does not parse:
// fosite answers that one).
func postValue(r *http.Request, name string) string {
	if err := r.ParseForm(); err != nil {
		return ""
	}
	return r.PostForm.Get(name)
}

// tooManyRequests answers 429 in the OAuth error shape (RFC 6749 §5.2 has no code for it:
// too_many_requests, as common authorization servers answer) with Retry-After.
func tooManyRequests(w http.ResponseWriter, wait time.Duration, desc string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "too_many_requests", "error_description": desc})
}

// refuseFailedAddress answers 429 when the address ip failed client authentication too often:
// at the token, revocation and introspection endpoints alike, one budget (TokenAuthFailures),
// so that no endpoint is a way around the others' to guess a client secret. A refused address
// is refused before any work, even with the right secret.
func (s *Server) refuseFailedAddress(ctx context.Context, w http.ResponseWriter, ip string) bool {
	if wait := s.limits.TokenAuthFailures.Wait(ctx, "ip:"+ip); wait > 0 {
		tooManyRequests(w, wait, "Too many failed client authentications from this address.")
		return true
	}
	return false
}

// countFailedAuth counts a failed client authentication of the address ip.
func (s *Server) countFailedAuth(ctx context.Context, ip string) {
	s.limits.TokenAuthFailures.Allow(ctx, "ip:"+ip)
}

// revoke handles POST /oauth/revoke (RFC 7009): a token of either kind revokes its grant.
// Failed client authentication (invalid_client) counts against the address like at the token
// endpoint.
func (s *Server) revoke(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	ip := sender(r)
	if s.refuseFailedAddress(ctx, w, ip) {
		return
	}
	err := s.provider.NewRevocationRequest(withRevokeReason(ctx, ReasonRevocationRequest), r)
	if errors.Is(err, fosite.ErrInvalidClient) {
		s.countFailedAuth(ctx, ip)
	}
	switch {
	case errors.Is(err, fosite.ErrUnauthorizedClient):
		// another client's token: RFC 7009 §2.1 refuses the request; fosite answers 200 and
		// revokes nothing, which the caller takes for success
		s.provider.WriteAccessError(ctx, w, nil, fosite.ErrUnauthorizedClient.WithHint("The token was issued to another client."))
	case errors.Is(err, fosite.ErrTemporarilyUnavailable):
		// the store failed: the token may still be live, so not the 200 fosite would answer
		// (RFC 7009 §2.2.1: 503, the client retries)
		s.provider.WriteAccessError(ctx, w, nil, err)
	default:
		s.provider.WriteRevocationResponse(ctx, w, err)
	}
}

// introspect handles POST /oauth/introspect (RFC 7662) for confidential clients, which
// authenticate with HTTP Basic. Every request_unauthorized answer is a failed client
// authentication (no Basic credentials, unknown client, wrong secret) and counts against the
// address like at the token endpoint.
func (s *Server) introspect(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	ip := sender(r)
	if s.refuseFailedAddress(ctx, w, ip) {
		return
	}
	if _, _, ok := r.BasicAuth(); !ok {
		s.countFailedAuth(ctx, ip)
		s.provider.WriteIntrospectionError(ctx, w, fosite.ErrRequestUnauthorized.WithHint("Authenticate the client with HTTP Basic."))
		return
	}
	// fosite takes a form or query field access_token as the caller's bearer credential ahead of
	// HTTP Basic (RFC 6750 §2.2), so any access token, with any Basic header beside it, would
	// authorise an introspection. Only HTTP Basic authenticates here (the metadata says so).
	if err := r.ParseForm(); err != nil || r.Form.Has("access_token") {
		s.provider.WriteIntrospectionError(ctx, w, fosite.ErrInvalidRequest.WithHint("Authenticate the client with HTTP Basic only; access_token is not accepted."))
		return
	}
	ir, err := s.provider.NewIntrospectionRequest(ctx, r, &Session{})
	if errors.Is(err, fosite.ErrRequestUnauthorized) {
		s.countFailedAuth(ctx, ip)
	}
	if err != nil {
		s.provider.WriteIntrospectionError(ctx, w, err)
		return
	}
	s.provider.WriteIntrospectionResponse(ctx, w, ir)
}

// metadata handles GET /.well-known/oauth-authorization-server (RFC 8414).
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	base := issuer(r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"revocation_endpoint":%q,"introspection_endpoint":%q,`+
		`"response_types_supported":["code"],"grant_types_supported":["authorization_code","refresh_token","client_credentials"],`+
		`"code_challenge_methods_supported":["S256"],"token_endpoint_auth_methods_supported":["client_secret_basic","client_secret_post","none"],`+
		`"revocation_endpoint_auth_methods_supported":["client_secret_basic","client_secret_post","none"],`+
		`"introspection_endpoint_auth_methods_supported":["client_secret_basic"],"scopes_supported":%s,"ui_locales_supported":["de","en"]}`,
		base, base+PathAuthorize, base+PathToken, base+PathRevoke, base+PathIntrospect, scopesJSON())
}

// issuer is the server's own origin as the request reached it.
func issuer(r *http.Request) string {
	scheme := "https"
	if r.TLS == nil && (isLocal(r.Host) || r.Header.Get("X-Forwarded-Proto") == "") {
		scheme = "http"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}
