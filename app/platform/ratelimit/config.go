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

	// Limits of our own, beyond the spec's (docs/decisions/leads-and-intake.md "Limits"):
	// browser intake submissions per (key with allowed domains, sender), 401/403 answers per
	// sender, attachment bytes per company and day.
	IntakeSenderLimit       = 20 // per IntakePeriod per (publishable key, client address or IPv6 /64)
	AuthFailureLimit        = 60 // 401/403 answers per AuthFailurePeriod per client address
	AuthFailurePeriod       = time.Minute
	AttachmentMBPerDay      = 200 // intake attachment megabytes per company per UTC day
	AttachmentPeriod        = 24 * time.Hour
	IntakeSenderPolicy      = "intake-sender"
	AuthFailurePolicy       = "auth-failures"
	IntakeAttachmentsPolicy = "intake-attachments"
	// Failed sign-ins at the OAuth login form (app/oauth), fixed windows: per (account, sender)
	// and per sender (client address or IPv6 /64), never per account alone, so that nobody
	// locks an account's owner out from elsewhere. Only failures count; a refused attempt is
	// not checked at all.
	LoginAccountLimit = 5
	LoginIPLimit      = 20
	LoginPeriod       = 15 * time.Minute
	LoginPolicy       = "login"
	// The OAuth token endpoint (app/oauth): every request per client id, sliding like the API;
	// failed client authentications at the token, revocation and introspection endpoints per
	// client IP, one budget, fixed windows (a refused IP is not checked).
	TokenClientLimit       = 600
	TokenClientPeriod      = time.Minute
	TokenAuthFailureLimit  = 20
	TokenAuthFailurePeriod = 15 * time.Minute
	TokenClientPolicy      = "oauth-token"
	TokenAuthFailurePolicy = "oauth-client-auth-failures"

	DefaultPrefix = "brokerdesk:ratelimit"
)

// Config tunes New; the zero value gives the spec's quotas.
type Config struct {
	API     limiter.Rate  // default APILimit per APIPeriod
	Intake  limiter.Rate  // default IntakeLimit per IntakePeriod
	Prefix  string        // Redis key prefix, default DefaultPrefix; ":api" and ":intake" follow it
	Timeout time.Duration // deadline of each Redis call, default DefaultTimeout
	// IntakeSender counts browser intake submissions of keys with allowed domains per (key,
	// sender); default IntakeSenderLimit per IntakePeriod (INTAKE_SENDER_LIMIT).
	IntakeSender limiter.Rate
	// AuthFailures counts 401 and 403 answers per sender; default AuthFailureLimit per
	// AuthFailurePeriod (AUTH_FAILURE_LIMIT).
	AuthFailures limiter.Rate
	// AttachmentBytes bounds intake attachment bytes per company; default AttachmentMBPerDay
	// MiB per AttachmentPeriod (INTAKE_ATTACHMENT_MB_PER_DAY).
	AttachmentBytes limiter.Rate
	// TokenClient counts token requests per OAuth client (default TokenClientLimit per
	// TokenClientPeriod); TokenAuthFailures failed client authentications at the token,
	// revocation and introspection endpoints per client IP (default TokenAuthFailureLimit per TokenAuthFailurePeriod).
	TokenClient       limiter.Rate
	TokenAuthFailures limiter.Rate
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
	// IntakeSender limits browser intake submissions per (key, sender): fixed clock-hour window.
	IntakeSender *Limiter
	// AuthFailures counts 401/403 answers per sender (AuthGuard): fixed clock-minute window.
	AuthFailures *Limiter
	// Attachments counts intake attachment bytes per company: fixed UTC-day window.
	Attachments *Limiter
	// LoginAccount and LoginIP count failed OAuth sign-ins per (e-mail, sender) and per sender.
	LoginAccount *Limiter
	LoginIP      *Limiter
	// TokenClient limits the OAuth token endpoint per client; TokenAuthFailures failed client
	// authentication at the token, revocation and introspection endpoints per client IP.
	TokenClient       *Limiter
	TokenAuthFailures *Limiter

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
	if cfg.IntakeSender == (limiter.Rate{}) {
		cfg.IntakeSender = limiter.Rate{Limit: IntakeSenderLimit, Period: IntakePeriod}
	}
	if cfg.AuthFailures == (limiter.Rate{}) {
		cfg.AuthFailures = limiter.Rate{Limit: AuthFailureLimit, Period: AuthFailurePeriod}
	}
	if cfg.AttachmentBytes == (limiter.Rate{}) {
		cfg.AttachmentBytes = limiter.Rate{Limit: AttachmentMBPerDay << 20, Period: AttachmentPeriod}
	}
	if cfg.TokenClient == (limiter.Rate{}) {
		cfg.TokenClient = limiter.Rate{Limit: TokenClientLimit, Period: TokenClientPeriod}
	}
	if cfg.TokenAuthFailures == (limiter.Rate{}) {
		cfg.TokenAuthFailures = limiter.Rate{Limit: TokenAuthFailureLimit, Period: TokenAuthFailurePeriod}
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
	for name, r := range map[string]limiter.Rate{"intake sender": cfg.IntakeSender, "auth failure": cfg.AuthFailures,
		"attachment": cfg.AttachmentBytes, "token client": cfg.TokenClient, "token auth failure": cfg.TokenAuthFailures} {
		if err := checkRate(r, 0); err != nil {
			return nil, fmt.Errorf("%s rate: %w", name, err)
		}
	}
	if redisURL == "" {
		l := &Limits{
			API:               NewLimiter(NewMemorySlidingStore(), cfg.API, APIPolicy),
			Intake:            NewLimiter(NewMemoryFixedStore(), cfg.Intake, IntakePolicy),
			IntakeSender:      NewLimiter(NewMemoryFixedStore(), cfg.IntakeSender, IntakeSenderPolicy),
			AuthFailures:      NewLimiter(NewMemoryFixedStore(), cfg.AuthFailures, AuthFailurePolicy),
			Attachments:       NewLimiter(NewMemoryFixedStore(), cfg.AttachmentBytes, IntakeAttachmentsPolicy),
			LoginAccount:      NewLimiter(NewMemoryFixedStore(), limiter.Rate{Limit: LoginAccountLimit, Period: LoginPeriod}, LoginPolicy),
			LoginIP:           NewLimiter(NewMemoryFixedStore(), limiter.Rate{Limit: LoginIPLimit, Period: LoginPeriod}, LoginPolicy),
			TokenClient:       NewLimiter(NewMemorySlidingStore(), cfg.TokenClient, TokenClientPolicy),
			TokenAuthFailures: NewLimiter(NewMemoryFixedStore(), cfg.TokenAuthFailures, TokenAuthFailurePolicy),
		}
		for _, lim := range l.all() {
			lim.observe = cfg.Observe
		}
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
	// RESP2 unless the URL asks otherwise: the scripts' replies are the same, and a RESP3 client
	// looks for push notifications around every command (2% of GET /me's CPU in a profile)
	// that nothing here subscribes to.
	if opt.Protocol == 0 {
		opt.Protocol = 2
	}
	client := redis.NewClient(opt)
	timeout := WithTimeout(cfg.Timeout)
	h := newHealth(cfg.Log)
	h.onChange = cfg.OnOutage
	l := &Limits{
		API:    NewLimiter(NewRedisSlidingStore(client, cfg.Prefix+":api", timeout), cfg.API, APIPolicy),
		Intake: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":intake", timeout), cfg.Intake, IntakePolicy),
		IntakeSender: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":intake-sender", timeout),
			cfg.IntakeSender, IntakeSenderPolicy),
		AuthFailures: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":auth-failures", timeout),
			cfg.AuthFailures, AuthFailurePolicy),
		Attachments: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":intake-attachments", timeout),
			cfg.AttachmentBytes, IntakeAttachmentsPolicy),
		LoginAccount: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":login-account", timeout),
			limiter.Rate{Limit: LoginAccountLimit, Period: LoginPeriod}, LoginPolicy),
		LoginIP: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":login-ip", timeout),
			limiter.Rate{Limit: LoginIPLimit, Period: LoginPeriod}, LoginPolicy),
		TokenClient: NewLimiter(NewRedisSlidingStore(client, cfg.Prefix+":oauth-token", timeout), cfg.TokenClient, TokenClientPolicy),
		TokenAuthFailures: NewLimiter(NewRedisFixedStore(client, cfg.Prefix+":oauth-client-auth-failures", timeout),
			cfg.TokenAuthFailures, TokenAuthFailurePolicy),
		client: client,
		health: h,
	}
	replicas := int64(max(cfg.Replicas, 1))
	for _, lim := range l.all() {
		lim.fallback, lim.fallbackRate = NewMemoryFixedStore(), limiter.Rate{Limit: max(lim.rate.Limit/replicas, 1), Period: lim.rate.Period}
		lim.health, lim.observe = h, cfg.Observe
	}
	l.API.fallback = NewMemorySlidingStore()
	l.TokenClient.fallback = NewMemorySlidingStore()
	return l, nil
}

// all are the limiters, for what applies to each.
func (l *Limits) all() []*Limiter {
	return []*Limiter{l.API, l.Intake, l.IntakeSender, l.AuthFailures, l.Attachments, l.LoginAccount, l.LoginIP,
		l.TokenClient, l.TokenAuthFailures}
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
