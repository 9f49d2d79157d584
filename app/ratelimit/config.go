package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
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

	// Failed sign-ins at the OAuth login form (app/oauth), fixed windows: per account and per
	// client IP. Only failures count; a refused attempt is not checked at all.
	LoginAccountLimit = 5
	LoginIPLimit      = 20
	LoginPeriod       = 15 * time.Minute
	LoginPolicy       = "login"

	DefaultPrefix = "brokerdesk:ratelimit"
)

// Config tunes New; the zero value gives the spec's quotas.
type Config struct {
	API     limiter.Rate  // default APILimit per APIPeriod
	Intake  limiter.Rate  // default IntakeLimit per IntakePeriod
	Prefix  string        // Redis key prefix, default DefaultPrefix; ":api" and ":intake" follow it
	Timeout time.Duration // deadline of each Redis call, default DefaultTimeout
}

// Limits are the server's two limiters and what they share.
type Limits struct {
	// API limits /api/public/v1 per credential (CredentialKey): sliding window.
	API *Limiter
	// Intake limits the lead intake per publishable key: fixed clock-hour window.
	Intake *Limiter
	// LoginAccount and LoginIP count failed OAuth sign-ins per e-mail and per client IP.
	LoginAccount *Limiter
	LoginIP      *Limiter

	client redis.UniversalClient // nil: memory stores
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
		return &Limits{
			API:          NewLimiter(NewMemorySlidingStore(), cfg.API, APIPolicy),
			Intake:       NewLimiter(NewMemoryFixedStore(), cfg.Intake, IntakePolicy),
			LoginAccount: NewLimiter(NewMemoryFixedStore(), limiter.Rate{Limit: LoginAccountLimit, Period: LoginPeriod}, LoginPolicy),
			LoginIP:      NewLimiter(NewMemoryFixedStore(), limiter.Rate{Limit: LoginIPLimit, Period: LoginPeriod}, LoginPolicy),
		}, nil
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
	return &Limits{
		API:    NewLimiter(NewRedisSlidingStore(client, cfg.Prefix+":api", timeout), cfg.API, APIPolicy),
		Intake: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":intake", timeout), cfg.Intake, IntakePolicy),
		LoginAccount: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":login-account", timeout),
			limiter.Rate{Limit: LoginAccountLimit, Period: LoginPeriod}, LoginPolicy),
		LoginIP: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":login-ip", timeout),
			limiter.Rate{Limit: LoginIPLimit, Period: LoginPeriod}, LoginPolicy),
		client: client,
	}, nil
}

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
