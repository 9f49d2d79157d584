package intake

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ulule/limiter/v3"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// limited builds a server whose per-sender limits are small; the harness's requests come from a
// trusted proxy, so X-Forwarded-For names the sender.
func limited(t *testing.T, f func(*app.Config)) *apitest.Env {
	t.Helper()
	return apitest.New(t, app.WithConfig(func(cfg *app.Config) {
		var err error
		if cfg.Clients, err = ratelimit.ParseTrustedProxies("0.0.0.0/32, 127.0.0.0/8, ::1"); err != nil {
			t.Fatal(err)
		}
		f(cfg)
	}))
}

func from(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }

// TestIntake_OneSenderUsesTheWholeQuota catches issue 20 A: with the per-sender limit at its
// production default, the 21st submission of a website backend (server to server: one address,
// one key, no Origin) was 429 "rate limit of 20 requests per hour exceeded", though the spec
// gives the key 100 per hour. Now all 100 are 201, on both routes, for a key with allowed
// domains and one without, and the 101st is the key's 429 with the headers the spec promises
// (Retry-After; the legacy retryAfter the same number) and the RateLimit fields of the key's
// quota.
func TestIntake_OneSenderUsesTheWholeQuota(t *testing.T) {
	t.Parallel()
	freshWindow(t, time.Minute)
	env := limited(t, func(cfg *app.Config) {
		cfg.Limits.IntakeSender = limiter.Rate{Limit: ratelimit.IntakeSenderLimit, Period: ratelimit.IntakePeriod}
	})
	co := env.NewCompany(t)
	for name, key := range map[string]string{"key with allowed domains": pk(t, co, "example.com"), "key without": pk(t, co)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			backend := from("198.51.100.20")
			for i := range ratelimit.IntakeLimit {
				r := send(t, env, post{path: paths[i%2], kind: kinds[i%3], fields: valid(uniqueEmail("backend")), key: key, header: backend})
				if r.Status != 201 {
					t.Fatalf("submission %d of one sender: %d %s", i+1, r.Status, r.Body)
				}
				if got, want := r.Header.Get(ratelimit.HeaderRemaining), strconv.Itoa(ratelimit.IntakeLimit-i-1); got != want {
					t.Fatalf("submission %d: RateLimit-Remaining %s, want %s", i+1, got, want)
				}
			}
			for _, path := range paths {
				r := send(t, env, post{path: path, kind: asJSON, fields: valid(uniqueEmail("backend")), key: key, header: backend})
				if r.Status != 429 {
					t.Fatalf("%s: 101st: %d %s, want 429", path, r.Status, r.Body)
				}
				retry, err := strconv.ParseInt(r.Header.Get("Retry-After"), 10, 64)
				if err != nil || retry < 1 || retry > 3600 {
					t.Errorf("%s: 101st: Retry-After %q", path, r.Header.Get("Retry-After"))
				}
				if r.Header.Get(ratelimit.HeaderLimit) != "100" || r.Header.Get(ratelimit.HeaderRemaining) != "0" ||
					r.Header.Get(ratelimit.HeaderReset) != r.Header.Get("Retry-After") ||
					!strings.HasPrefix(r.Header.Get(ratelimit.HeaderPolicy), `"intake";q=100;w=3600`) {
					t.Errorf("%s: 101st: headers %v, want the key's quota used up", path, r.Header)
				}
				if path == legacyPath {
					if b := decodeLegacy(t, r.Body); b.Error != "rate_limit_exceeded" || b.RetryAfter != retry {
						t.Errorf("legacy 101st: body %s, Retry-After %d", r.Body, retry)
					}
				} else if p := r.Problem(t); p.Code != "rate_limited" || p.Status != 429 {
					t.Errorf("v1 101st: %s", r.Body)
				}
			}
		})
	}
}

// TestIntake_SenderBucket: browser submissions with a website's key (one with allowed domains)
// count per sender, valid or not: junk from one visitor uses up that visitor's bucket, not the
// key's quota, and other senders (other addresses, other IPv6 /64s) still get through. Requests
// without Origin (servers) and keys without allowed domains are not counted per sender
// (issue 20 A; TestIntake_OneSenderUsesTheWholeQuota).
func TestIntake_SenderBucket(t *testing.T) {
	t.Parallel()
	env := limited(t, func(cfg *app.Config) {
		cfg.Limits.IntakeSender = limiter.Rate{Limit: 3, Period: ratelimit.IntakePeriod}
	})
	co := env.NewCompany(t)
	browser := func(addr string) map[string]string {
		return map[string]string{"X-Forwarded-For": addr, "Origin": "https://www.example.com"}
	}
	for _, path := range paths {
		key := pk(t, co, "example.com")
		junk := post{path: path, kind: asJSON, fields: f("firstName", "x"), key: key}
		for i, addr := range []string{"198.51.100.7", "2001:db8:1:1::1", "2001:db8:1:1::2"} {
			junk.header = browser(addr)
			if r := send(t, env, junk); r.Status != 422 && r.Status != 400 {
				t.Fatalf("%s: junk %d from %s: %d %s", path, i, addr, r.Status, r.Body)
			}
		}
		junk.header = browser("198.51.100.7")
		send(t, env, junk)
		send(t, env, junk)
		if r := send(t, env, junk); r.Status != 429 || r.Header.Get("Retry-After") == "" ||
			!strings.HasPrefix(r.Header.Get(ratelimit.HeaderPolicy), `"intake-sender";q=3;`) {
			t.Errorf("%s: fourth browser request of one sender: %d %v %s", path, r.Status, r.Header, r.Body)
		}
		// Sec-Fetch-Site alone marks a browser too (Origin is what the key's domains judge)
		fetchMeta := post{path: path, kind: asJSON, fields: valid(uniqueEmail("sender")), key: key,
			header: map[string]string{"X-Forwarded-For": "198.51.100.7", "Sec-Fetch-Site": "cross-site"}}
		if r := send(t, env, fetchMeta); r.Status != 429 {
			t.Errorf("%s: a blocked sender's request with Sec-Fetch-Site: %d %s, want 429", path, r.Status, r.Body)
		}
		// the same /64 is one sender; its third request still fits, the fourth does not
		good := post{path: path, kind: asJSON, fields: valid(uniqueEmail("sender")), key: key, header: browser("2001:db8:1:1::ffff")}
		if r := send(t, env, good); r.Status != 201 {
			t.Errorf("%s: third request of the /64: %d %s", path, r.Status, r.Body)
		}
		if r := send(t, env, good); r.Status != 429 {
			t.Errorf("%s: fourth request of the /64: %d %s", path, r.Status, r.Body)
		}
		// another sender is not blocked, and the junk did not use the key's quota
		good.header, good.fields = browser("2001:db8:1:2::1"), valid(uniqueEmail("sender"))
		r := send(t, env, good)
		if r.Status != 201 {
			t.Fatalf("%s: another sender: %d %s", path, r.Status, r.Body)
		}
		if got := r.Header.Get(ratelimit.HeaderRemaining); got != "98" {
			t.Errorf("%s: key quota remaining %s after 2 valid submissions and 5 junk ones, want 98", path, got)
		}
		// the blocked sender's server (no Origin, no Sec-Fetch-Site) is not a browser submission
		server := post{path: path, kind: asJSON, fields: valid(uniqueEmail("sender")), key: key, header: from("198.51.100.7")}
		if r := send(t, env, server); r.Status != 201 {
			t.Errorf("%s: the same address without Origin: %d %s, want 201 (not counted per sender)", path, r.Status, r.Body)
		}
		// a key without allowed domains is not a website's key: its browser submissions are
		// not counted per sender either
		open := post{path: path, kind: asJSON, key: pk(t, co), header: browser("198.51.100.8")}
		for i := range 5 {
			open.fields = valid(uniqueEmail("sender"))
			if r := send(t, env, open); r.Status != 201 {
				t.Errorf("%s: browser submission %d with a key without domains: %d %s", path, i+1, r.Status, r.Body)
			}
		}
	}
}

// TestIntake_ForwardedForNeedsTrustedProxy: without TRUSTED_PROXIES, X-Forwarded-For does not
// choose the bucket: every browser submission of the peer shares one.
func TestIntake_ForwardedForNeedsTrustedProxy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithConfig(func(cfg *app.Config) {
		cfg.Clients = ratelimit.Clients{}
		cfg.Limits.IntakeSender = limiter.Rate{Limit: 2, Period: ratelimit.IntakePeriod}
	}))
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	var last int
	for i := range 3 {
		r := send(t, env, post{path: v1Path, kind: asJSON, fields: valid(uniqueEmail("xff")), key: key,
			header: map[string]string{"X-Forwarded-For": "192.0.2." + string(rune('1'+i)), "Origin": "https://example.com"}})
		last = r.Status
	}
	if last != 429 {
		t.Errorf("third request with a fresh X-Forwarded-For from an untrusted peer: %d, want 429", last)
	}
}

// TestIntake_AttachmentBudget: attachment bytes per company per day are bounded; over the
// budget the submission is refused with the intake's 429 and nothing is stored.
func TestIntake_AttachmentBudget(t *testing.T) {
	t.Parallel()
	env := limited(t, func(cfg *app.Config) {
		cfg.Limits.AttachmentBytes = limiter.Rate{Limit: 1500, Period: ratelimit.AttachmentPeriod}
	})
	co := env.NewCompany(t)
	key := pk(t, co)
	file := func() []upload {
		return []upload{{"document", "a.txt", "text/plain", []byte(strings.Repeat("x", 1000))}}
	}
	email := uniqueEmail("budget")
	if r := send(t, env, post{path: v1Path, kind: asMultipart, fields: valid(email), key: key, files: file()}); r.Status != 201 {
		t.Fatalf("first file: %d %s", r.Status, r.Body)
	}
	for _, path := range paths {
		r := send(t, env, post{path: path, kind: asMultipart, fields: valid(uniqueEmail("budget")), key: key, files: file()})
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: over the budget: %d %s", path, r.Status, r.Body)
		}
	}
	// a submission without files still goes through
	if r := send(t, env, post{path: v1Path, kind: asJSON, fields: valid(uniqueEmail("budget")), key: key}); r.Status != 201 {
		t.Errorf("without files: %d %s", r.Status, r.Body)
	}
	l := leadByEmail(t, env, co.ID, email)
	if atts := attachmentsOf(t, env, co.ID, l.ID); len(atts) != 1 {
		t.Errorf("%d attachments stored, want the first only", len(atts))
	}
}

// TestAuth_FailuresLimitedPerSender: 401 and 403 answers are counted per sender; past the limit
// the sender gets 429 before any database work, on the v1 API and the intake, while another
// sender is served.
func TestAuth_FailuresLimitedPerSender(t *testing.T) {
	t.Parallel()
	var statements atomic.Int64
	env := apitest.New(t, app.WithSQLTrace(func(string, any) { statements.Add(1) }), app.WithConfig(func(cfg *app.Config) {
		cfg.Clients, _ = ratelimit.ParseTrustedProxies("0.0.0.0/32, 127.0.0.0/8, ::1")
		cfg.Limits.AuthFailures = limiter.Rate{Limit: 3, Period: ratelimit.AuthFailurePeriod}
	}))
	co := env.NewCompany(t)
	unknown := "sk_live_" + strings.Repeat("A", 43)
	me := func(key, addr string) *apitest.Response {
		return env.Do(t, apitest.Request{Path: "/me", Key: key, Header: from(addr)})
	}
	before := statements.Load()
	if r := me("sk_live_short", "203.0.113.9"); r.Status != 401 {
		t.Fatalf("malformed key: %d", r.Status)
	}
	if n := statements.Load() - before; n != 0 {
		t.Errorf("a malformed key cost %d statements, want none", n)
	}
	me(unknown, "203.0.113.9")
	if r := send(t, env, post{path: v1Path, kind: asJSON, fields: valid(uniqueEmail("flood")),
		key: "pk_live_" + strings.Repeat("B", 43), header: from("203.0.113.9")}); r.Status != 401 {
		t.Fatalf("unknown publishable key: %d %s", r.Status, r.Body)
	}
	for _, r := range []*apitest.Response{
		me(co.Secret, "203.0.113.9"),
		send(t, env, post{path: v1Path, kind: asJSON, fields: valid(uniqueEmail("flood")), key: pk(t, co), header: from("203.0.113.9")}),
		send(t, env, post{path: legacyPath, kind: asJSON, fields: valid(uniqueEmail("flood")), key: pk(t, co), header: from("203.0.113.9")}),
	} {
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("after 3 refusals the sender got %d %s, want 429 with Retry-After", r.Status, r.Body)
		}
	}
	if r := me(co.Secret, "203.0.113.10"); r.Status != 200 {
		t.Errorf("another sender: %d %s", r.Status, r.Body)
	}
}

// TestIntake_V1Challenge: the v1 intake's 401 challenges for an API key in X-API-Key, not a
// Bearer token.
func TestIntake_V1Challenge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, key := range []string{"", "pk_live_" + strings.Repeat("C", 43)} {
		r := send(t, env, post{path: v1Path, kind: asJSON, fields: valid(uniqueEmail("challenge")), key: key})
		ch := r.Header.Get("WWW-Authenticate")
		if r.Status != 401 || !strings.HasPrefix(ch, "APIKey ") || !strings.Contains(ch, "X-API-Key") || strings.Contains(ch, "Bearer") {
			t.Errorf("key %q: %d, WWW-Authenticate %q", key, r.Status, ch)
		}
	}
}
