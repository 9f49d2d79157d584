package app

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

// SigningConfig configures the PAdES seal of signed PDFs (app/signatures).
type SigningConfig struct {
	// KeyFile and CertFile are the PEM files of the seal's private key (RSA or ECDSA, PKCS #1,
	// PKCS #8 or SEC 1, unencrypted) and certificate chain, signing certificate first
	// (SIGNING_KEY_FILE, SIGNING_CERT_FILE). Both or neither: without them every start seals
	// with a new throwaway self-signed certificate.
	KeyFile, CertFile string
	// sealer is read from the files by LoadConfig, so a bad key or certificate stops the
	// server before it opens anything; nil without files.
	sealer *pdfseal.Sealer
}

// devSealName is the common name of the throwaway certificate: what a reader of a PDF sealed
// without configuration sees as the signer.
const devSealName = "BrokerDesk development seal (not trusted)"

// expirySoon is how long before its certificate runs out the server warns at start: the
// seal of a signature request completed after that fails.
const expirySoon = 30 * 24 * time.Hour

func loadSigning(cfg *Config, env func(k, def string) string) error {
	s := &cfg.Signing
	s.KeyFile = env("SIGNING_KEY_FILE", "")
	s.CertFile = env("SIGNING_CERT_FILE", "")
	switch {
	case s.KeyFile == "" && s.CertFile == "":
		return nil
	case s.KeyFile == "":
		return errors.New("SIGNING_KEY_FILE must be set with SIGNING_CERT_FILE (the key of the seal's certificate)")
	case s.CertFile == "":
		return errors.New("SIGNING_CERT_FILE must be set with SIGNING_KEY_FILE (the certificate of the seal's key)")
	}
	key, err := os.ReadFile(s.KeyFile)
	if err != nil {
		return fmt.Errorf("SIGNING_KEY_FILE: %w", err)
	}
	cert, err := os.ReadFile(s.CertFile)
	if err != nil {
		return fmt.Errorf("SIGNING_CERT_FILE: %w", err)
	}
	if s.sealer, err = pdfseal.New(key, cert); err != nil {
		return fmt.Errorf("SIGNING_KEY_FILE, SIGNING_CERT_FILE: %w", err)
	}
	return nil
}

// Sealer is the sealer of the configured key and certificate. Without them it makes a
// throwaway self-signed certificate and logs so once: tests and a first `go tool task run`
// need nothing set, and nobody mistakes such seals for ones a reader trusts.
func (c SigningConfig) Sealer(log zerolog.Logger) (*pdfseal.Sealer, error) {
	if c.sealer != nil {
		cert := c.sealer.Certificate()
		if time.Until(cert.NotAfter) < expirySoon {
			log.Warn().Time("not_after", cert.NotAfter).Str("subject", cert.Subject.String()).
				Msg("the certificate of SIGNING_CERT_FILE expires soon: signed PDFs cannot be sealed after that; renew it")
		}
		return c.sealer, nil
	}
	key, cert, err := pdfseal.DevCertificate(devSealName)
	if err != nil {
		return nil, err
	}
	s, err := pdfseal.New(key, cert)
	if err != nil {
		return nil, err
	}
	log.Warn().Msg("signed PDFs are sealed with a throwaway self-signed certificate: " +
		"set SIGNING_KEY_FILE and SIGNING_CERT_FILE")
	return s, nil
}
