// Package app is the composition root: configuration, the Fiber server and the route map.
package app

import (
	"crypto/rand"
	"fmt"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"net/url"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	"github.com/ulule/limiter/v3"

	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/app/webhooks"
	"github.com/brokerdesk/brokerdesk/migrations"
)

// Config is the server's configuration, read from the environment once by LoadConfig.
type Config struct {
	// DatabaseURL is the owner (or superuser) URL: migrations and operator commands use it.
	DatabaseURL string
	// AppDatabaseURL is the URL the server's request work uses, as the app role.
	AppDatabaseURL string
	// JobsDatabaseURL is the URL of the job queue's pool, as the jobs role (migrations.RoleJobs):
	// the app role's rights plus river's tables, which request work must not reach.
	JobsDatabaseURL string
	// AppDBPassword is given to the app role by `migrate` when set.
	AppDBPassword string
	RedisURL      string
	ListenAddr    string
	LogLevel      zerolog.Level
	LogFormat     string // json or console
	// Secret seals pagination cursors; replicas must share it. Unset: random per process.
	Secret          []byte
	SecretGenerated bool
	DBMaxConns      int
	ShutdownTimeout time.Duration

	// Webhooks and the job queue (app/webhooks, app/platform/jobs).
	// WebhookAllowInsecure admits http:// endpoints and deliveries to loopback (dev, tests).
	WebhookAllowInsecure bool
	// WebhookSecretKeys seal the endpoints' signing secrets at rest; the first seals.
	WebhookSecretKeys [][]byte
	// WebhookSecretKeysDerived: WEBHOOK_SECRET_KEYS was unset, the key comes from APP_SECRET.
	WebhookSecretKeysDerived bool
	// DataKeysDerived: DATA_KEYS was unset, the key comes from APP_SECRET.
	DataKeysDerived bool
	Jobs            jobs.Config

	// Limits beyond the spec's quotas (INTAKE_SENDER_LIMIT, AUTH_FAILURE_LIMIT,
	// INTAKE_ATTACHMENT_MB_PER_DAY); zero fields take ratelimit's defaults.
	Limits ratelimit.Config
	// Clients tells a request's sender; X-Forwarded-For only from TRUSTED_PROXIES.
	Clients ratelimit.Clients
	// Ops: outages, metrics, traces (config_ops.go).
	Ops OpsConfig
	// BlobURL is the blob storage of file contents (BLOB_URL): file:///dir or s3://bucket?….
	// Unset: .data/blobs below the working directory.
	BlobURL string
	// PortfolioBatchSize is how many contracts one commit transaction of a portfolio transfer
	// writes (PORTFOLIO_BATCH_SIZE, default 500).
	PortfolioBatchSize int
	// PortfolioMaxUpload is the largest request of POST /portfolio-transfers in bytes
	// (PORTFOLIO_MAX_UPLOAD_MB, default 512): streamed to blob storage, never held in memory.
	PortfolioMaxUpload int64
	// PortfolioMaxUnzipped bounds what the GDV entries of a BiPRO shipment's ZIP documents
	// expand to, in all (PORTFOLIO_MAX_UNZIPPED_MB, default 2048); PortfolioMaxZipRatio how many
	// times its compressed size one entry may expand to (PORTFOLIO_MAX_ZIP_RATIO, default 100).
	PortfolioMaxUnzipped int64
	PortfolioMaxZipRatio int64
	// PortfolioValidateTimeout bounds a transfer's validation run (PORTFOLIO_VALIDATE_TIMEOUT,
	// default 10m); a run that times out fails the transfer and is not retried.
	PortfolioValidateTimeout time.Duration
	// DataKeys seal the sensitive contact groups at rest (DATA_KEYS "kid:base64key,...", the
	// first seals). Unset: one key derived from APP_SECRET with the id "app".
	DataKeys *datakeys.Keyring
	// Mail configures the e-mail area (config_mail.go).
	Mail MailConfig
	// Signing configures the seal of signed PDFs (config_signing.go).
	Signing SigningConfig
}

// LoadConfig reads every variable once, with its default. README.md lists them.
func LoadConfig(getenv func(string) string) (Config, error) {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	cfg := Config{
		DatabaseURL:   getenv("DATABASE_URL"),
		AppDBPassword: getenv("APP_DB_PASSWORD"),
		RedisURL:      getenv("REDIS_URL"),
		ListenAddr:    env("LISTEN_ADDR", ":8080"),
		LogFormat:     env("LOG_FORMAT", "json"),
	}
	var err error
	if cfg.LogLevel, err = zerolog.ParseLevel(env("LOG_LEVEL", "info")); err != nil {
		return cfg, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	if cfg.LogFormat != "json" && cfg.LogFormat != "console" {
		return cfg, fmt.Errorf("LOG_FORMAT must be json or console")
	}
	if cfg.DBMaxConns, err = strconv.Atoi(env("DB_MAX_CONNS", "20")); err != nil || cfg.DBMaxConns < 1 {
		return cfg, fmt.Errorf("DB_MAX_CONNS must be a positive integer")
	}
	if cfg.ShutdownTimeout, err = time.ParseDuration(env("SHUTDOWN_TIMEOUT", "20s")); err != nil {
		return cfg, fmt.Errorf("SHUTDOWN_TIMEOUT: %w", err)
	}
	if s := getenv("APP_SECRET"); s != "" {
		if len(s) < 32 {
			return cfg, fmt.Errorf("APP_SECRET must be at least 32 characters")
		}
		cfg.Secret = []byte(s)
	} else {
		cfg.Secret = make([]byte, 32)
		_, _ = rand.Read(cfg.Secret)
		cfg.SecretGenerated = true
	}
	if err := loadJobs(&cfg, env); err != nil {
		return cfg, err
	}
	if err := loadLimits(&cfg, env); err != nil {
		return cfg, err
	}
	if err := loadOps(&cfg.Ops, env); err != nil {
		return cfg, err
	}
	if cfg.BlobURL = getenv("BLOB_URL"); cfg.BlobURL == "" {
		if cfg.BlobURL, err = blobstore.DefaultURL(); err != nil {
			return cfg, fmt.Errorf("BLOB_URL: %w", err)
		}
	}
	if err := loadPortfolio(&cfg, env); err != nil {
		return cfg, err
	}
	if err := loadMail(&cfg, env); err != nil {
		return cfg, err
	}
	if err := loadSigning(&cfg, env); err != nil {
		return cfg, err
	}
	if cfg.DataKeys, err = datakeys.FromConfig(getenv("DATA_KEYS"), cfg.Secret); err != nil {
		return cfg, fmt.Errorf("DATA_KEYS: %w", err)
	}
	cfg.DataKeysDerived = getenv("DATA_KEYS") == ""
	cfg.AppDatabaseURL = getenv("APP_DATABASE_URL")
	if cfg.AppDatabaseURL == "" && cfg.DatabaseURL != "" {
		cfg.AppDatabaseURL, err = appURL(cfg.DatabaseURL, migrations.RoleApp, cfg.AppDBPassword)
		if err != nil {
			return cfg, fmt.Errorf("DATABASE_URL: %w", err)
		}
	}
	cfg.JobsDatabaseURL = getenv("JOBS_DATABASE_URL")
	if cfg.JobsDatabaseURL == "" && cfg.AppDatabaseURL != "" {
		// the app role's URL and password (migrate gives both roles APP_DB_PASSWORD) as the
		// jobs role
		u, err := url.Parse(cfg.AppDatabaseURL)
		if err != nil {
			return cfg, fmt.Errorf("APP_DATABASE_URL: %w", err)
		}
		password, _ := u.User.Password()
		if cfg.JobsDatabaseURL, err = appURL(cfg.AppDatabaseURL, migrations.RoleJobs, password); err != nil {
			return cfg, fmt.Errorf("APP_DATABASE_URL: %w", err)
		}
	}
	return cfg, nil
}

// loadJobs reads the webhook and job queue variables.
func loadJobs(cfg *Config, env func(k, def string) string) error {
	var err error
	if cfg.WebhookAllowInsecure, err = strconv.ParseBool(env("WEBHOOK_ALLOW_INSECURE", "false")); err != nil {
		return fmt.Errorf("WEBHOOK_ALLOW_INSECURE must be true or false")
	}
	keys := env("WEBHOOK_SECRET_KEYS", "")
	cfg.WebhookSecretKeysDerived = keys == ""
	if cfg.WebhookSecretKeys, err = webhooks.ParseSealingKeys(keys, cfg.Secret); err != nil {
		return fmt.Errorf("WEBHOOK_SECRET_KEYS: %w", err)
	}
	if cfg.Jobs.Workers, err = strconv.Atoi(env("WEBHOOK_WORKERS", "20")); err != nil || cfg.Jobs.Workers < 0 {
		return fmt.Errorf("WEBHOOK_WORKERS must be a number of at least 0")
	}
	if cfg.Jobs.RescueAfter, err = time.ParseDuration(env("JOBS_RESCUE_AFTER", "2m")); err != nil || cfg.Jobs.RescueAfter <= jobs.JobTimeout {
		return fmt.Errorf("JOBS_RESCUE_AFTER must be a duration above %s", jobs.JobTimeout)
	}
	return nil
}

// loadPortfolio reads the limits of portfolio transfers.
func loadPortfolio(cfg *Config, env func(k, def string) string) error {
	var err error
	if cfg.PortfolioBatchSize, err = strconv.Atoi(env("PORTFOLIO_BATCH_SIZE", "500")); err != nil || cfg.PortfolioBatchSize < 1 {
		return fmt.Errorf("PORTFOLIO_BATCH_SIZE must be a positive integer")
	}
	for _, v := range []struct {
		name, def string
		dst       *int64
		shift     uint
	}{
		{"PORTFOLIO_MAX_UPLOAD_MB", "512", &cfg.PortfolioMaxUpload, 20},
		{"PORTFOLIO_MAX_UNZIPPED_MB", "2048", &cfg.PortfolioMaxUnzipped, 20},
		{"PORTFOLIO_MAX_ZIP_RATIO", "100", &cfg.PortfolioMaxZipRatio, 0},
	} {
		n, err := strconv.ParseInt(env(v.name, v.def), 10, 64)
		if err != nil || n < 1 || n > 1<<30 {
			return fmt.Errorf("%s must be a positive integer", v.name)
		}
		*v.dst = n << v.shift
	}
	if cfg.PortfolioValidateTimeout, err = time.ParseDuration(env("PORTFOLIO_VALIDATE_TIMEOUT", "10m")); err != nil ||
		cfg.PortfolioValidateTimeout <= 0 {
		return fmt.Errorf("PORTFOLIO_VALIDATE_TIMEOUT must be a positive duration")
	}
	return nil
}

// loadLimits reads the sender and failure limits and the trusted proxies.
func loadLimits(cfg *Config, env func(k, def string) string) error {
	var err error
	if cfg.Clients, err = ratelimit.ParseTrustedProxies(env("TRUSTED_PROXIES", "")); err != nil {
		return fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	for _, v := range []struct {
		name string
		def  int64
		rate *limiter.Rate
		per  time.Duration
		unit int64
	}{
		{"INTAKE_SENDER_LIMIT", ratelimit.IntakeSenderLimit, &cfg.Limits.IntakeSender, ratelimit.IntakePeriod, 1},
		{"AUTH_FAILURE_LIMIT", ratelimit.AuthFailureLimit, &cfg.Limits.AuthFailures, ratelimit.AuthFailurePeriod, 1},
		{"INTAKE_ATTACHMENT_MB_PER_DAY", ratelimit.AttachmentMBPerDay, &cfg.Limits.AttachmentBytes, ratelimit.AttachmentPeriod, 1 << 20},
	} {
		n, err := strconv.ParseInt(env(v.name, strconv.FormatInt(v.def, 10)), 10, 64)
		if err != nil || n < 1 || n > 1<<40/v.unit {
			return fmt.Errorf("%s must be a positive integer", v.name)
		}
		*v.rate = limiter.Rate{Limit: n * v.unit, Period: v.per}
	}
	return nil
}

// appURL is the database URL base logging in as role (the app or the jobs role) with
// password, if any, instead of base's user.
func appURL(base, role, password string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if password != "" {
		u.User = url.UserPassword(role, password)
	} else {
		u.User = url.User(role)
	}
	return u.String(), nil
}

// Warnings are what serve logs at start about a configuration that runs but loses something
// at a restart or across replicas: each key derived from a random APP_SECRET.
func (c Config) Warnings() []string {
	if !c.SecretGenerated {
		return nil
	}
	w := []string{"APP_SECRET is not set: cursors are sealed with a random secret and do not survive a restart or cross replicas"}
	if c.WebhookSecretKeysDerived {
		w = append(w, "neither WEBHOOK_SECRET_KEYS nor APP_SECRET is set: webhook signing secrets stored now cannot be read after a restart")
	}
	if c.DataKeysDerived {
		w = append(w, "neither DATA_KEYS nor APP_SECRET is set: sensitive contact data stored now cannot be read after a restart")
	}
	return w
}
