package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	bdapp "github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestOAuth_LoginLockoutPerSender: failed sign-ins count per (account, sender) and per sender
// (issue 20 item 6). Before, five wrong passwords from anywhere locked the account's sign-in
// for 15 minutes, the right password from the owner's own address included. An attacker's
// failures from one address (or one IPv6 /64) must not lock out the user signing in from
// another, and the attacker stays limited. The server trusts the loopback proxy, so
// X-Forwarded-For names the sender.
func TestOAuth_LoginLockoutPerSender(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, bdapp.WithConfig(func(c *bdapp.Config) {
		var err error
		if c.Clients, err = ratelimit.ParseTrustedProxies("127.0.0.0/8, ::1"); err != nil {
			t.Fatal(err)
		}
	}))
	base := env.Serve(t, time.Second)
	co := env.NewCompany(t)
	a := newApp(t, env, base, operator.NewOAuthClientInput{})
	authURL := a.conf.AuthCodeURL("state-0001", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))

	for _, tc := range []struct{ name, attacker, neighbour, user string }{
		{"IPv4", "203.0.113.7", "203.0.113.7", "198.51.100.20"},
		{"IPv6 by /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff::99", "2001:db8:1:3::1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victim := newPerson(t, env, co, "agent")
			login := func(from, password string) page {
				b := newBrowserClient(t)
				b.from = from
				tok := b.get(authURL).csrf()
				return b.post(authURL, url.Values{"action": {"login"}, "csrf": {tok}, "email": {victim.Email}, "password": {password}})
			}
			for i := range ratelimit.LoginAccountLimit {
				if p := login(tc.attacker, "wrong password"); p.status != http.StatusUnauthorized {
					t.Fatalf("attacker's failure %d: %d, want 401", i+1, p.status)
				}
			}
			// the attacker stays limited, even with the right password, and so does its /64
			if p := login(tc.attacker, victim.password); p.status != http.StatusTooManyRequests {
				t.Errorf("attacker's address after %d failures, right password: %d, want 429", ratelimit.LoginAccountLimit, p.status)
			}
			if p := login(tc.neighbour, victim.password); p.status != http.StatusTooManyRequests {
				t.Errorf("an address in the attacker's bucket (%s): %d, want 429", tc.neighbour, p.status)
			}
			// the owner, from elsewhere, signs in: the consent screen
			if p := login(tc.user, victim.password); p.status != http.StatusOK || !strings.Contains(p.body, `id="allow"`) {
				t.Errorf("the user from %s after an attacker's failures elsewhere: %d, want the consent screen\n%s", tc.user, p.status, p.body)
			}
		})
	}
}
