package testsvc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedRedis is the Redis the tests use when TEST_REDIS_URL is unset and it answers PING.
const SharedRedis = "127.0.0.1:6379"

// RedisChoice is what FindRedis looks at, in order.
type RedisChoice struct {
	URL    string // TEST_REDIS_URL: used as it is; it must answer
	Probe  string // host:port of a Redis to use when it answers PING ("" skips the probe)
	Server string // the redis-server to start privately: a name looked up in PATH, or a path
}

// ErrNoRedis is the one line a machine without any Redis gets.
var ErrNoRedis = errors.New("no Redis for tests: install redis-server (apt-get install redis-server), " +
	"run Redis on " + SharedRedis + ", or set TEST_REDIS_URL=redis://host:port/db")

var (
	redisOnce sync.Once
	redisURL  string
	redisErr  error
)

// RedisURL returns the Redis of this test process, found once: TEST_REDIS_URL, else the Redis
// on 127.0.0.1:6379 when it answers, else a private redis-server shared by the run's test
// binaries. It never skips: no Redis is an error saying what to install.
func RedisURL(ctx context.Context) (string, error) {
	redisOnce.Do(func() {
		o, err := DefaultOptions()
		if err != nil {
			redisErr = err
			return
		}
		s, err := FindRedis(ctx, o, RedisChoice{URL: os.Getenv("TEST_REDIS_URL"), Probe: SharedRedis, Server: "redis-server"})
		redisURL, redisErr = s.URL, err
	})
	return redisURL, redisErr
}

// FindRedis picks the tests' Redis by ch: ch.URL when set (an error when it does not answer),
// else ch.Probe when it answers PING, else the private redis-server of o.Dir.
func FindRedis(ctx context.Context, o Options, ch RedisChoice) (Service, error) {
	if ch.URL != "" {
		if err := pingURL(ctx, ch.URL); err != nil {
			return Service{}, fmt.Errorf("TEST_REDIS_URL %s does not answer (%v): start Redis there or unset it", ch.URL, err)
		}
		return Service{URL: ch.URL, Describe: "TEST_REDIS_URL"}, nil
	}
	if ch.Probe != "" {
		u := "redis://" + ch.Probe + "/0"
		if pingURL(ctx, u) == nil {
			return Service{URL: u, Describe: "Redis on " + ch.Probe}, nil
		}
	}
	return PrivateRedis(ctx, o, ch.Server)
}

// pingURL reports whether the Redis of u answers PING within a second.
func pingURL(ctx context.Context, u string) error {
	opt, err := redis.ParseURL(u)
	if err != nil {
		return err
	}
	if err := dial(opt.Addr); err != nil {
		return err
	}
	opt.DialTimeout, opt.ReadTimeout, opt.MaxRetries = time.Second, time.Second, -1
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// redisDir is where the private redis-server keeps its pid file and log (no data: it
// persists nothing).
func redisDir(o Options) string { return filepath.Join(o.Dir, "redis") }

// PrivateRedis returns the private redis-server of o.Dir on its port (o.Dir/redis.port),
// starting server on a free loopback port unless ours answers there already. It persists
// nothing. server is looked up in PATH; missing, the error is ErrNoRedis.
func PrivateRedis(ctx context.Context, o Options, server string) (Service, error) {
	unlock, err := lock(ctx, o.Dir, "redis")
	if err != nil {
		return Service{}, err
	}
	defer unlock()
	if port, ok := ourRedis(ctx, o); ok {
		return redisService(o, port, false), nil
	}
	bin, err := exec.LookPath(server)
	if err != nil {
		return Service{}, ErrNoRedis
	}
	dir := redisDir(o)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Service{}, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken before redis binds it
		port, err := freePort()
		if err != nil {
			return Service{}, err
		}
		if lastErr = startRedis(ctx, bin, dir, port); lastErr != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(o.Dir, "redis.port"), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
			return Service{}, err
		}
		if err := markStarted(o.Dir, "redis", o.Run); err != nil {
			return Service{}, err
		}
		return redisService(o, port, true), nil
	}
	return Service{}, lastErr
}

func redisService(o Options, port int, started bool) Service {
	return Service{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), Started: started,
		Describe: fmt.Sprintf("private redis-server on 127.0.0.1:%d (log %s)", port, filepath.Join(redisDir(o), "redis.log"))}
}

// ourRedis returns the port of the private redis-server when it answers there and is ours:
// its working directory is redisDir(o), so a port file that now names another Redis (the
// machine's, another checkout's) is never used or shut down.
func ourRedis(ctx context.Context, o Options) (int, bool) {
	b, err := os.ReadFile(filepath.Join(o.Dir, "redis.port"))
	if err != nil {
		return 0, false
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || port <= 0 {
		return 0, false
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if dial(addr) != nil {
		return 0, false
	}
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	dir, err := c.ConfigGet(ctx, "dir").Result()
	if err != nil {
		return 0, false
	}
	want, _ := filepath.EvalSymlinks(redisDir(o))
	return port, dir["dir"] == want || dir["dir"] == redisDir(o)
}

// startRedis starts bin as a daemon on 127.0.0.1:port with no persistence and waits until it
// answers.
func startRedis(ctx context.Context, bin, dir string, port int) error {
	logFile := filepath.Join(dir, "redis.log")
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--daemonize", "yes", "--pidfile", filepath.Join(dir, "redis.pid"), "--logfile", logFile)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out // a file, not a pipe: the daemon must not hold our output open
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("start %s (log %s): %w", bin, logFile, err)
	}
	u := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := pingURL(ctx, u)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			// Slow rather than dead? Then it must not live on unknown to everyone.
			if b, rerr := os.ReadFile(filepath.Join(dir, "redis.pid")); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
			}
			return fmt.Errorf("%s on port %d does not answer (log %s): %w", bin, port, logFile, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopRedis shuts the private redis-server down when it answers and run is "" or the run
// that started it. It says what it did, or "" when nothing ran.
func stopRedis(ctx context.Context, o Options, run string) (string, error) {
	unlock, err := lock(ctx, o.Dir, "redis")
	if err != nil {
		return "", err
	}
	defer unlock()
	port, ok := ourRedis(ctx, o)
	if !ok {
		return "", nil
	}
	s := redisService(o, port, false)
	if by := startedBy(o.Dir, "redis"); run != "" && by != run {
		return "left running: " + s.Describe + " (not started by this run; go tool task test:stop stops it)", nil
	}
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), MaxRetries: -1})
	defer c.Close()
	_ = c.ShutdownNoSave(ctx).Err() // the connection ends with the server: no reply to read
	deadline := time.Now().Add(10 * time.Second)
	for pingURL(ctx, s.URL) == nil {
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s did not stop within 10s", s.Describe)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = markStarted(o.Dir, "redis", "")
	return "stopped " + s.Describe, nil
}

// dial reports whether addr accepts a connection, quietly: go-redis retries a refused dial
// and logs each one, on every probe of a machine without Redis.
func dial(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	return conn.Close()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
