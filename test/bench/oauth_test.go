package bench

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// BenchmarkMeTokenVsKey: GET /me with a secret key against GET /me with an OAuth access token
// (client credentials) of the same company. Both resolve the credential in one statement of the
// request transaction (auth_credential, auth_token); issue 9 wants the token within 10 %.
func BenchmarkMeTokenVsKey(b *testing.B) {
	env := apitest.New(b)
	co := env.NewCompany(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = env.Server.ServeListener(ctx, ln, time.Second) }()
	b.Cleanup(cancel)
	url := "http://" + ln.Addr().String() + app.V1Prefix + "/me"
	b.Run("key", func(b *testing.B) {
		ring := &keyRing{co: co}
		for b.Loop() {
			do(b, "GET", url, ring.next(b), "")
		}
	})
	b.Run("token", func(b *testing.B) {
		var tok string
		n := 0
		for b.Loop() {
			if n%500 == 0 { // a new grant (its own quota) every 500 requests
				b.StopTimer()
				tok = co.OAuthToken(b, "live")
				b.StartTimer()
			}
			n++
			do(b, "GET", url, tok, "")
		}
	})
}
