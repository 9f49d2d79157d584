package apitest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds cmd/brokerdesk once per test process.
func binary() (string, error) {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "brokerdesk-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "brokerdesk")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/brokerdesk/brokerdesk/cmd/brokerdesk").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return binPath, binErr
}

// RedisURL returns the Redis of the tests (test/testsvc.RedisURL): TEST_REDIS_URL, else the
// Redis on 127.0.0.1:6379 when it answers, else a private redis-server the run's test binaries
// share. With none it fails the test, saying what to install.
func RedisURL(t testing.TB) string {
	t.Helper()
	u, err := testsvc.RedisURL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// StartProcess runs `brokerdesk serve` as its own process on the package database, with
// extra environment (e.g. REDIS_URL), and returns its base URL. The process gets SIGTERM at
// cleanup.
func (e *Env) StartProcess(t testing.TB, extra map[string]string) string {
	t.Helper()
	return e.StartServe(t, extra).URL
}

// Process is a `brokerdesk serve` started by StartServe.
type Process struct {
	URL  string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
}

// Kill ends the process with SIGKILL (no graceful shutdown) and waits for it.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Terminate sends SIGTERM (graceful shutdown) and waits until the process exits, at most
// within timeout (then it is killed and Terminate reports false).
func (p *Process) Terminate(timeout time.Duration) bool {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		p.Kill()
		return false
	}
}

// Output is what the process wrote so far (stdout and stderr).
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// StartServe is StartProcess returning the process, for tests that stop it themselves.
func (e *Env) StartServe(t testing.TB, extra map[string]string) *Process {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+e.OwnerURL, "APP_DATABASE_URL="+e.AppURL,
		"APP_SECRET="+TestSecret, "LISTEN_ADDR="+addr, "LOG_LEVEL=warn",
		"WEBHOOK_ALLOW_INSECURE=true",
		// per-sender limits off, as in New (every test client is 127.0.0.1); extra may set them
		"INTAKE_SENDER_LIMIT=1000000", "AUTH_FAILURE_LIMIT=1000000")
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &Process{cmd: cmd, out: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	w := syncWriter{p.out, p.mu}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get(base + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				p.URL = base
				return p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("brokerdesk serve did not become ready:\n%s", p.Output())
	return nil
}

// syncWriter lets the process write its output while a test reads it.
type syncWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Listen serves the env's in-process app on a real loopback listener (closed when t ends) and
// returns its base URL: for tests that need a real connection (bodies sent chunked or stalled,
// streamed downloads, keep-alive), which App.Test does not give.
func (e *Env) Listen(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.Server.App.Listener(ln) }()
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String()
}
