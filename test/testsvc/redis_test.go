package testsvc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// closedAddr is a loopback address nothing listens on: the probe of a machine without Redis.
func closedAddr(t *testing.T) string {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", p)
}

func stopAll(t *testing.T, o Options) {
	t.Cleanup(func() { _, _ = Stop(context.Background(), o, "") })
}

// With nothing on the probe address, the private redis-server starts once: parallel test
// processes share it, a later call reuses it, and the run's stop stops it.
func TestFindRedis_PrivateWhenProbeSilent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := Options{Dir: filepath.Join(t.TempDir(), "test"), Run: "run-1"}
	stopAll(t, o)
	ch := RedisChoice{Probe: closedAddr(t), Server: "redis-server"}

	results := RunProcesses(ctx, t, 4, "TestHelperProcess",
		"TESTSVC_HELPER_DIR="+o.Dir, "TESTSVC_HELPER_PROBE="+ch.Probe, RunEnv+"="+o.Run)
	u := OneStarted(t, results).URL
	if !strings.HasPrefix(u, "redis://127.0.0.1:") || u == "redis://"+ch.Probe+"/0" {
		t.Fatalf("URL %s, want a private port on 127.0.0.1", u)
	}
	c := client(t, u)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	cfg, err := c.ConfigGet(ctx, "save").Result()
	if err != nil || cfg["save"] != "" {
		t.Errorf("CONFIG GET save = %v (%v), want no persistence", cfg, err)
	}
	cfg, err = c.ConfigGet(ctx, "bind").Result()
	if err != nil || cfg["bind"] != "127.0.0.1" {
		t.Errorf("CONFIG GET bind = %v (%v), want 127.0.0.1 only", cfg, err)
	}

	again, err := FindRedis(ctx, o, ch)
	if err != nil || again.URL != u || again.Started {
		t.Fatalf("second FindRedis: %+v, %v; want %s reused", again, err, u)
	}

	lines, err := Stop(ctx, o, "run-2")
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "left running: private redis-server") {
		t.Fatalf("stop by another run: %q, %v; want it left running", lines, err)
	}
	lines, err = Stop(ctx, o, "run-1")
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "stopped private redis-server") {
		t.Fatalf("stop by its run: %q, %v; want it stopped", lines, err)
	}
	if err := pingURL(ctx, u); err == nil {
		t.Fatalf("%s answers after stop", u)
	}
}

// The order: TEST_REDIS_URL, then the probe address when it answers, then the private server;
// nothing at all is one line saying what to install.
func TestFindRedis_Order(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A Redis to point at: a private one of another directory, so the machine's Redis on
	// 6379 plays no part.
	other := Options{Dir: filepath.Join(t.TempDir(), "other"), Run: "other"}
	stopAll(t, other)
	running, err := PrivateRedis(ctx, other, "redis-server")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(running.URL, "redis://"), "/0")
	closed := closedAddr(t)

	cases := []struct {
		name    string
		ch      RedisChoice
		wantURL string // "" with wantErr
		wantErr string
		started bool
	}{
		{"URL wins over an answering probe", RedisChoice{URL: "redis://" + addr + "/3", Probe: addr, Server: "redis-server"},
			"redis://" + addr + "/3", "", false},
		{"URL that does not answer fails, no fallback", RedisChoice{URL: "redis://" + closed + "/0", Probe: addr, Server: "redis-server"},
			"", "TEST_REDIS_URL redis://" + closed + "/0 does not answer", false},
		{"answering probe", RedisChoice{Probe: addr, Server: "redis-server"}, "redis://" + addr + "/0", "", false},
		{"silent probe, no redis-server", RedisChoice{Probe: closed, Server: "no-such-redis-server-bd"}, "", ErrNoRedis.Error(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Dir: filepath.Join(t.TempDir(), "test"), Run: "r"}
			s, err := FindRedis(ctx, o, tc.ch)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil || s.URL != tc.wantURL || s.Started != tc.started {
				t.Fatalf("got %+v, %v; want %s started=%v", s, err, tc.wantURL, tc.started)
			}
		})
	}
}

// A port file naming a Redis that is not ours (the machine's, another checkout's) is neither
// used nor shut down.
func TestPrivateRedis_ForeignPortFile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other := Options{Dir: filepath.Join(t.TempDir(), "other"), Run: "x"}
	stopAll(t, other)
	foreign, err := PrivateRedis(ctx, other, "redis-server")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: filepath.Join(t.TempDir(), "test"), Run: "x"}
	stopAll(t, o)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(other.Dir, "redis.port"))
	if err := os.WriteFile(filepath.Join(o.Dir, "redis.port"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if lines, err := Stop(ctx, o, ""); err != nil || len(lines) != 0 {
		t.Fatalf("stop with a foreign port file: %q, %v; want nothing stopped", lines, err)
	}
	if err := pingURL(ctx, foreign.URL); err != nil {
		t.Fatalf("the foreign Redis was stopped: %v", err)
	}
	own, err := PrivateRedis(ctx, o, "redis-server")
	if err != nil || !own.Started || own.URL == foreign.URL {
		t.Fatalf("got %+v, %v; want a redis-server of its own", own, err)
	}
}

// TestHelperProcess is one test binary of a parallel run (started by runRedisHelpers).
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("TESTSVC_HELPER_DIR")
	if dir == "" {
		return // not a helper
	}
	o := Options{Dir: dir, Run: os.Getenv(RunEnv)}
	s, err := FindRedis(context.Background(), o, RedisChoice{Probe: os.Getenv("TESTSVC_HELPER_PROBE"), Server: "redis-server"})
	if err != nil {
		t.Fatal(err)
	}
	PrintResult(s)
}

func client(t *testing.T, u string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
