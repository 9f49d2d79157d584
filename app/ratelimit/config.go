package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"github.com/ulule/limiter/v3"
)

// The spec's quotas ("Limits").
const (
	APILimit     = 600 // per APIPeriod per credential, sliding
	APIPeriod    = time.Minute
	IntakeLimit  = 100 // per IntakePeriod per publishable key, fixed clock window
	IntakePeriod = time.Hour

	APIPolicy    = "default"
	IntakePolicy = "intake"

	DefaultPrefix = "brokerdesk:ratelimit"
)

// Config tunes New; the zero value gives the spec's quotas.
type Config struct {
	API     limiter.Rate  // default APILimit per APIPeriod
	Intake  limiter.Rate  // default IntakeLimit per IntakePeriod
	Prefix  string        // Redis key prefix, default DefaultPrefix; ":api" and ":intake" follow it
	Timeout time.Duration // deadline of each Redis call, default DefaultTimeout
	// Replicas is the number of server processes sharing the quotas (REPLICAS, default 1):
	// while Redis is unreachable each enforces Limit/Replicas (at least 1) in memory.
	Replicas int
	// Log receives the outage lines (start, every LogEvery, end).
	Log zerolog.Logger
	// Observe, when set, sees each decision: policy and outcome (allowed, limited, unlimited;
	// suffixed _memory while counted in memory). Metrics use it.
	Observe func(policy, outcome string)
	// OnOutage, when set, is called when a Redis outage starts (true) and ends (false).
	OnOutage func(down bool)
}

// Limits are the server's two limiters and what they share.
type Limits struct {
	// API limits /api/public/v1 per credential (CredentialKey): sliding window.
	API *Limiter
	// Intake limits the lead intake per publishable key: fixed clock-hour window.
	Intake *Limiter

	client redis.UniversalClient // nil: memory stores
	health *health               // nil: memory stores
}

// New builds the limiters: in Redis when redisURL is set (REDIS_URL; redis:// or rediss://), in
// memory otherwise (per process; see the package comment). It does not contact Redis, which may
// come up later: the limiters fail open meanwhile, and Ping tells whether it is reachable.
func New(redisURL string, cfg Config) (*Limits, error) {
	if cfg.API == (limiter.Rate{}) {
		cfg.API = limiter.Rate{Limit: APILimit, Period: APIPeriod}
	}
	if cfg.Intake == (limiter.Rate{}) {
		cfg.Intake = limiter.Rate{Limit: IntakeLimit, Period: IntakePeriod}
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if err := checkRate(cfg.API, 0); err != nil {
		return nil, fmt.Errorf("api rate: %w", err)
	}
	if err := checkRate(cfg.Intake, 0); err != nil {
		return nil, fmt.Errorf("intake rate: %w", err)
	}
	if redisURL == "" {
		l := &Limits{
			API:    NewLimiter(NewMemorySlidingStore(), cfg.API, APIPolicy),
			Intake: NewLimiter(NewMemoryFixedStore(), cfg.Intake, IntakePolicy),
		}
		l.API.observe, l.Intake.observe = cfg.Observe, cfg.Observe
		return l, nil
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// The deadline comes from the context (WithTimeout); the scripts are not idempotent, so a
	// retry after a lost reply could count a request twice: no retries, fail open instead.
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1
	opt.DialTimeout = time.Second
	opt.DialerRetries = 1
	client := redis.NewClient(opt)
	timeout := WithTimeout(cfg.Timeout)
	h := newHealth(cfg.Log)
	h.onChange = cfg.OnOutage
	l := &Limits{
		API:    NewLimiter(NewRedisSlidingStore(client, cfg.Prefix+":api", timeout), cfg.API, APIPolicy),
		Intake: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":intake", timeout), cfg.Intake, IntakePolicy),
		client: client,
		health: h,
	}
	replicas := int64(max(cfg.Replicas, 1))
	l.API.fallback, l.API.fallbackRate = NewMemorySlidingStore(), limiter.Rate{Limit: max(cfg.API.Limit/replicas, 1), Period: cfg.API.Period}
	l.Intake.fallback, l.Intake.fallbackRate = NewMemoryFixedStore(), limiter.Rate{Limit: max(cfg.Intake.Limit/replicas, 1), Period: cfg.Intake.Period}
	for _, lim := range []*Limiter{l.API, l.Intake} {
		lim.health, lim.observe = h, cfg.Observe
	}
	return l, nil
}

// Degraded reports whether Redis is unreachable and the limits are counted in memory.
func (l *Limits) Degraded() bool { return l.health != nil && l.health.down.Load() }

// Backend is "redis" or "memory", for the startup log line.
func (l *Limits) Backend() string {
	if l.client == nil {
		return "memory"
	}
	return "redis"
}

// Ping checks that Redis answers; memory limits always do. For readiness checks.
func (l *Limits) Ping(ctx context.Context) error {
	if l.client == nil {
		return nil
	}
	if err := l.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// Close releases the Redis connections.
func (l *Limits) Close() error {
	if l.client == nil {
		return nil
	}
	return l.client.Close()
}
