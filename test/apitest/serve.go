package apitest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// Serve serves e's server on a loopback listener until the test ends (then it shuts down with
// grace for in-flight requests) and returns its base URL once /healthz answers. For tests that
// need a real listener: browsers' cookie jars, keep-alive connections, signals.
func (e *Env) Serve(t testing.TB, grace time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Server.ServeListener(ctx, ln, grace); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return WaitHealthy(t, "http://"+ln.Addr().String())
}

// WaitHealthy waits until the server at base answers /healthz (about a second at most) and
// returns base.
func WaitHealthy(t testing.TB, base string) string {
	t.Helper()
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			return base
		}
		if i == 50 {
			t.Fatalf("server at %s does not answer: %v", base, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
