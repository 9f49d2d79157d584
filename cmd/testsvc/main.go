// Command testsvc stops the private PostgreSQL and Redis the tests start under .data/test/
// (test/testsvc). `go tool task test` runs `testsvc stop -run ID` when it ends, so a run stops
// what it started and leaves alone what ran before it; `go tool task test:stop` runs
// `testsvc stop -all`, which stops them whoever started them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testsvc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "stop" {
		return fmt.Errorf("usage: testsvc stop -run ID | -all")
	}
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	runID := fs.String("run", "", "stop what the test run ID (BROKERDESK_TEST_RUN) started")
	all := fs.Bool("all", false, "stop the private services whoever started them")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *all == (*runID != "") {
		return fmt.Errorf("usage: testsvc stop -run ID | -all (exactly one)")
	}
	o, err := testsvc.DefaultOptions()
	if err != nil {
		return err
	}
	lines, err := testsvc.Stop(ctx, o, *runID)
	for _, l := range lines {
		fmt.Println("testsvc:", l)
	}
	return err
}
