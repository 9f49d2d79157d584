// Package webhooks tests /webhook-endpoints and the deliveries end to end: real PostgreSQL, the
// river queue running in the test's server, receivers on loopback, signatures checked with the
// Standard Webhooks library.
package webhooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// clock is the server's clock: real time plus an offset tests move (only tests that are not
// parallel move it, so the parallel ones never see it jump).
type clock struct{ off atomic.Int64 }

func (c *clock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

func (c *clock) advance(t *testing.T, d time.Duration) {
	c.off.Add(int64(d))
	t.Cleanup(func() { c.off.Add(-int64(d)) })
}

var (
	worldOnce sync.Once
	world     *apitest.Env
	clk       = &clock{}
)

// keep is a testing.TB whose cleanups never run: the package's server lives as long as the
// test binary (its database is dropped by apitest.Main at the end).
type keep struct{ testing.TB }

func (keep) Cleanup(func()) {}

// setup returns the package's server: its clock is clk, retries wait 300 ms instead of the
// production schedule, and it works jobs (river, the relay) like a serve process.
func setup(t *testing.T) *apitest.Env {
	t.Helper()
	worldOnce.Do(func() {
		world = apitest.New(keep{t}, app.WithClock(clk.Now), app.WithWebhookSchedule(
			300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond))
		if err := world.Server.StartJobs(context.Background()); err != nil {
			t.Fatalf("start jobs: %v", err)
		}
		apitest.BeforeDrop(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_ = world.Server.StopJobs(ctx)
			world.Server.Close()
		})
	})
	if world == nil {
		t.Fatal("no test server")
	}
	return world
}

// received is one request a receiver got.
type received struct {
	Header http.Header
	Body   []byte
}

// receiver is a webhook endpoint on loopback. It answers 200, or fail's status for the next
// failures requests.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	failures atomic.Int32
	status   atomic.Int32 // the failing answer, default 500
	always   atomic.Int32 // answer this status to everything when set
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.status.Store(500)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{Header: req.Header.Clone(), Body: body})
		r.mu.Unlock()
		if s := r.always.Load(); s != 0 {
			w.WriteHeader(int(s))
			_, _ = w.Write([]byte("always " + http.StatusText(int(s))))
			return
		}
		if r.failures.Add(-1) >= 0 {
			w.WriteHeader(int(r.status.Load()))
			_, _ = w.Write([]byte("try again later"))
			return
		}
		_, _ = w.Write([]byte("thanks"))
	}))
	t.Cleanup(r.Close)
	return r
}

// requests returns a copy of what arrived so far.
func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor polls until ok holds for the requests, or fails after timeout.
func (r *receiver) waitFor(t *testing.T, timeout time.Duration, what string, ok func([]received) bool) []received {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.requests()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver: %s not reached within %s; got %d requests", what, timeout, len(got))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// atLeast is a waitFor condition: n requests.
func atLeast(n int) func([]received) bool { return func(g []received) bool { return len(g) >= n } }

// verify checks a delivery with the Standard Webhooks library and the secret.
func verify(t *testing.T, secret string, r received) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	return wh.Verify(r.Body, r.Header)
}

// verifyAt is verify without the 5-minute timestamp window (deliveries signed at a moved clock).
func verifyAt(t *testing.T, secret string, r received) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	return wh.VerifyIgnoringTimestamp(r.Body, r.Header)
}

// endpoint is the WebhookEndpoint as tests read it.
type endpoint struct {
	ID                      string     `json:"id"`
	URL                     string     `json:"url"`
	Description             *string    `json:"description"`
	Events                  []string   `json:"events"`
	Enabled                 bool       `json:"enabled"`
	DisabledReason          *string    `json:"disabledReason"`
	CredentialID            *string    `json:"credentialId"`
	OAuthClientID           *string    `json:"oauthClientId"`
	FailingSince            *time.Time `json:"failingSince"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	Secret                  string     `json:"secret"`
}

// delivery is the WebhookDelivery as tests read it.
type delivery struct {
	ID            string     `json:"id"`
	EventID       string     `json:"eventId"`
	EventType     string     `json:"eventType"`
	Attempt       int        `json:"attempt"`
	Status        string     `json:"status"`
	HTTPStatus    *int       `json:"httpStatus"`
	ResponseBody  *string    `json:"responseBody"`
	DurationMs    *int       `json:"durationMs"`
	Error         *string    `json:"error"`
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
}

// deliveries reads an endpoint's delivery log (newest first).
func deliveries(t *testing.T, env *apitest.Env, key, id, query string) []delivery {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/webhook-endpoints/" + id + "/deliveries" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	var page apitest.Page[delivery]
	r.Decode(t, &page)
	return page.Data
}

// waitLog polls the delivery log until ok holds.
func waitLog(t *testing.T, env *apitest.Env, key, id string, ok func([]delivery) bool) []delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := deliveries(t, env, key, id, "")
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery log never reached the expected state: %+v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
