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

	"github.com/redis/go-redis/v9"
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

// RedisURL returns the Redis of the tests: TEST_REDIS_URL, default redis://127.0.0.1:6379/0.
// It fails the test, saying what to set, when Redis does not answer.
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		u = "redis://127.0.0.1:6379/0"
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("no Redis at %s (%v): start Redis there or set TEST_REDIS_URL=redis://host:port/db", u, err)
	}
	return u
}

// StartProcess runs `brokerdesk serve` as its own process on the package database, with
// extra environment (e.g. REDIS_URL), and returns its base URL. The process gets SIGTERM at
// cleanup.
func (e *Env) StartProcess(t testing.TB, extra map[string]string) string {
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
		"APP_SECRET="+TestSecret, "LISTEN_ADDR="+addr, "LOG_LEVEL=warn")
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
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
				return base
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("brokerdesk serve did not become ready:\n%s", out.String())
	return ""
}
