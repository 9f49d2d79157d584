package app

import (
	"fmt"
	"strings"
	"time"
)

// MailConfig configures the e-mail area (app/emails).
type MailConfig struct {
	// PublicURL is the service's external base URL (PUBLIC_URL, no trailing slash): the tracking
	// pixel, the click redirect and the unsubscribe link point at it. Default
	// http://localhost:<port of LISTEN_ADDR>.
	PublicURL string
	// SyncEvery is how often every active mailbox is synced over IMAP (MAIL_SYNC_EVERY, default 1m).
	SyncEvery time.Duration
}

func loadMail(cfg *Config, env func(k, def string) string) error {
	port := cfg.ListenAddr
	if i := strings.LastIndex(port, ":"); i >= 0 {
		port = port[i+1:]
	}
	cfg.Mail.PublicURL = strings.TrimSuffix(env("PUBLIC_URL", "http://localhost:"+port), "/")
	if !strings.HasPrefix(cfg.Mail.PublicURL, "http://") && !strings.HasPrefix(cfg.Mail.PublicURL, "https://") {
		return fmt.Errorf("PUBLIC_URL must start with http:// or https://")
	}
	var err error
	if cfg.Mail.SyncEvery, err = time.ParseDuration(env("MAIL_SYNC_EVERY", "1m")); err != nil || cfg.Mail.SyncEvery <= 0 {
		return fmt.Errorf("MAIL_SYNC_EVERY must be a positive duration")
	}
	return nil
}
