// Package testsvc starts the services the tests need when the environment names none: a
// private PostgreSQL cluster (the code of `brokerdesk dev`, app/platform/devdb) and a private
// redis-server, both under <module>/.data/test/ on free loopback ports; and it finds the
// browser tests' Chromium, installing Debian's when it may (chromium.go).
//
// `go test ./...` runs the test binaries of many packages in parallel, as separate processes,
// so the services are shared through files: a lock file (flock) per service makes the first
// process start it while the others wait, and a port file (PostgreSQL's postmaster.pid,
// redis.port) lets every later process, and the next run, find it. A service records in
// <name>.run the BROKERDESK_TEST_RUN of the run that started it; `go tool task test` sets
// that variable and, when the run ends, stops what its own run started (cmd/testsvc stop -run).
// The data stays, so the next run starts in a second and reuses the migrated template.
package testsvc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RunEnv names the variable that tells a test process which run it belongs to.
const RunEnv = "BROKERDESK_TEST_RUN"

// Service is a server the tests use.
type Service struct {
	URL      string // admin URL (PostgreSQL) or redis:// URL
	Describe string // one line: what it is and where it lives
	Started  bool   // this call started it
}

// Options say where private services live and which run starts them.
type Options struct {
	Dir string // the data directory: <module>/.data/test
	Run string // recorded in <service>.run when this process starts the service
}

// DefaultOptions is the data directory of the module the tests run in and the run of the
// environment.
func DefaultOptions() (Options, error) {
	root, err := ModuleRoot()
	if err != nil {
		return Options{}, err
	}
	return Options{Dir: filepath.Join(root, ".data", "test"), Run: os.Getenv(RunEnv)}, nil
}

// ModuleRoot is the nearest directory at or above the working directory that holds go.mod
// (test binaries run in their package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
	}
}

// lockWait bounds how long a process waits for another to start a service.
const lockWait = 3 * time.Minute

// lock takes the exclusive lock dir/name.lock, waiting while another process holds it (at most
// lockWait), and returns its release. The kernel releases it when a holder dies, so a killed
// test never leaves it taken.
func lock(ctx context.Context, dir, name string) (func(), error) {
	return lockFor(ctx, dir, name, lockWait)
}

// lockFor is lock waiting at most wait.
func lockFor(ctx context.Context, dir, name string, wait time.Duration) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, name+".lock")
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		if time.Now().After(deadline) {
			holder, _ := os.ReadFile(file)
			f.Close()
			return nil, fmt.Errorf("lock %s: still held after %s by process %s", file, wait, strings.TrimSpace(string(holder)))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Who holds it, for the message of a process that gives up waiting.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// markStarted records which run started service name.
func markStarted(dir, name, run string) error {
	return os.WriteFile(filepath.Join(dir, name+".run"), []byte(run+"\n"), 0o644)
}

// startedBy returns the run that started service name ("" when unknown or none).
func startedBy(dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name+".run"))
	return strings.TrimSpace(string(b))
}
