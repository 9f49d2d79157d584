package app

import (
	"fmt"
	"strconv"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/tracing"
)

// OpsConfig is how the server behaves when PostgreSQL or Redis go away, and what it exposes to
// operators (docs/operations.md).
type OpsConfig struct {
	// DBRetryBudget bounds how long a request is tried again after a passing database failure
	// (DB_RETRY_BUDGET, default 2s; 0 turns retries off).
	DBRetryBudget time.Duration
	// Replicas is how many server processes share the quotas (REPLICAS, default 1): while Redis
	// is unreachable each process enforces 1/Replicas of every quota in memory.
	Replicas int
	// MetricsAddr is the Prometheus listener (METRICS_ADDR, e.g. 127.0.0.1:9090; empty: off).
	// It is never the public port.
	MetricsAddr string
	// Tracing: the OTEL_* variables ask for traces (app/platform/tracing.Enabled); off by default.
	Tracing bool
}

func loadOps(o *OpsConfig, env func(k, def string) string) error {
	var err error
	if o.DBRetryBudget, err = time.ParseDuration(env("DB_RETRY_BUDGET", "2s")); err != nil || o.DBRetryBudget < 0 {
		return fmt.Errorf("DB_RETRY_BUDGET must be a duration of at least 0")
	}
	if o.Replicas, err = strconv.Atoi(env("REPLICAS", "1")); err != nil || o.Replicas < 1 {
		return fmt.Errorf("REPLICAS must be a positive integer")
	}
	o.Tracing = tracing.Enabled(func(k string) string { return env(k, "") })
	o.MetricsAddr = env("METRICS_ADDR", "")
	if o.MetricsAddr != "" && o.MetricsAddr == env("LISTEN_ADDR", ":8080") {
		return fmt.Errorf("METRICS_ADDR must not be the public LISTEN_ADDR")
	}
	return nil
}
