package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

// devSealName is the common name of dev's seal certificate: what a PDF reader shows as the
// signer of a PDF signed on a dev server.
const devSealName = "BrokerDesk dev seal (" + demoCompany + ")"

// devSeal returns the key and certificate files the dev server seals signed PDFs with:
// SIGNING_KEY_FILE and SIGNING_CERT_FILE when either is set (LoadConfig judges them), else
// seal.key and seal.crt in dir, made on the first run (and again when they no longer make a
// sealer, as after ten years), so that PDFs sealed by dev keep one signer across restarts.
// The server's own fallback, a certificate per start, would give each run another one.
func devSeal(getenv func(string) string, dir string) (keyFile, certFile string, err error) {
	if getenv("SIGNING_KEY_FILE") != "" || getenv("SIGNING_CERT_FILE") != "" {
		return getenv("SIGNING_KEY_FILE"), getenv("SIGNING_CERT_FILE"), nil
	}
	keyFile, certFile = filepath.Join(dir, "seal.key"), filepath.Join(dir, "seal.crt")
	key, kerr := os.ReadFile(keyFile)
	cert, cerr := os.ReadFile(certFile)
	if kerr == nil && cerr == nil {
		if _, err := pdfseal.New(key, cert); err == nil {
			return keyFile, certFile, nil
		}
	}
	if key, cert, err = pdfseal.DevCertificate(devSealName); err != nil {
		return "", "", fmt.Errorf("seal certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return "", "", fmt.Errorf("seal certificate: %w", err)
	}
	if err := os.WriteFile(certFile, cert, 0o644); err != nil {
		return "", "", fmt.Errorf("seal certificate: %w", err)
	}
	return keyFile, certFile, nil
}
