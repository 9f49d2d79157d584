package app

import (
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

// SigningConfig configures the PAdES seal of signed PDFs (app/signatures).
//
// STUB: the owner of app/platform/pdfseal fills in loading (SIGNING_KEY_FILE,
// SIGNING_CERT_FILE) and Sealer.
type SigningConfig struct {
	KeyFile, CertFile string
}

func loadSigning(cfg *Config, env func(k, def string) string) error {
	cfg.Signing.KeyFile = env("SIGNING_KEY_FILE", "")
	cfg.Signing.CertFile = env("SIGNING_CERT_FILE", "")
	return nil
}

// Sealer is the sealer of the configured key and certificate.
func (c SigningConfig) Sealer(log zerolog.Logger) (*pdfseal.Sealer, error) { return nil, nil }
