package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
)

// childCommand is the hidden first argument that makes this binary the benchmark's server.
const childCommand = "__serve"

// serveChild is the server subprocess: the configuration from the environment (LoadConfig), the
// logger `brokerdesk serve` builds, app.NewServer and ServeListener on 127.0.0.1:0. It prints the
// address on stdout and serves until SIGTERM/SIGINT or until its stdin closes (the parent died).
func serveChild(args []string) int {
	fs := flag.NewFlagSet(childCommand, flag.ContinueOnError)
	cpuprofile := fs.String("cpuprofile", "", "CPU profile of this process")
	memprofile := fs.String("memprofile", "", "allocation profile of this process, written when it stops")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 1
	}
	cfg, err := app.LoadConfig(os.Getenv)
	if err != nil {
		return fail(err)
	}
	log := zerolog.New(os.Stderr).Level(cfg.LogLevel).With().Timestamp().Logger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	go func() { <-sigs; cancel() }()

	s, err := app.NewServer(context.Background(), cfg, log)
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fail(err)
	}
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return fail(err)
		}
		defer stop()
	}
	if *memprofile != "" {
		defer writeAllocProfile(*memprofile)
	}
	fmt.Println(ln.Addr().String())
	if err := s.ServeListener(ctx, ln, cfg.ShutdownTimeout); err != nil {
		return fail(err)
	}
	return 0
}

// writeAllocProfile writes the allocations since the start (go tool pprof -sample_index
// alloc_space or alloc_objects).
func writeAllocProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
	}
}

func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// server is the running server under test.
type server struct {
	addr string
	pid  int // the subprocess, or 0 in process
	stop func() error
}

func startServer(ctx context.Context, o options, fx fixture) (*server, error) {
	if o.inproc {
		return startInProcess(fx, o.cpuprofile)
	}
	args := []string{childCommand}
	if o.cpuprofile != "" {
		args = append(args, "-cpuprofile", o.cpuprofile)
	}
	if o.memprofile != "" {
		args = append(args, "-memprofile", o.memprofile)
	}
	return startChild(ctx, fx, args)
}

// startChild re-executes this binary with args (the child command first) and the server's
// environment, and waits for the address it prints on stdout.
func startChild(ctx context.Context, fx fixture, args []string) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	for k, v := range serverEnv(fx) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	addrc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		addrc <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	stopped := false
	var stopErr error
	stop := func() error {
		if stopped {
			return stopErr
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case stopErr = <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			stopErr = errors.New("server did not stop within 30s; killed")
		}
		_ = stdin.Close()
		return stopErr
	}
	select {
	case addr := <-addrc:
		if addr == "" {
			_ = stop()
			return nil, fmt.Errorf("server subprocess exited before listening: %v", <-exited)
		}
		return &server{addr: addr, pid: cmd.Process.Pid, stop: stop}, nil
	case <-time.After(30 * time.Second):
		_ = stop()
		return nil, errors.New("server subprocess did not start within 30s")
	case <-ctx.Done():
		_ = stop()
		return nil, ctx.Err()
	}
}

func startInProcess(fx fixture, cpuprofile string) (*server, error) {
	log := zerolog.New(os.Stderr).Level(fx.cfg.LogLevel).With().Timestamp().Logger()
	s, err := app.NewServer(context.Background(), fx.cfg, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, err
	}
	stopProfile := func() {}
	if cpuprofile != "" {
		if stopProfile, err = startCPUProfile(cpuprofile); err != nil {
			s.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListener(ctx, ln, fx.cfg.ShutdownTimeout) }()
	stopped := false
	var stopErr error
	return &server{addr: ln.Addr().String(), stop: func() error {
		if !stopped {
			stopped = true
			cancel()
			stopErr = <-done
			s.Close()
			stopProfile()
		}
		return stopErr
	}}, nil
}
