package app

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

// signingFiles writes a key and a certificate valid until notAfter into dir.
func signingFiles(t *testing.T, dir string, notAfter time.Time) (keyFile, certFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "Muster Makler GmbH"},
		NotBefore: time.Now().AddDate(-1, 0, 0), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	keyFile, certFile = filepath.Join(dir, "seal.key"), filepath.Join(dir, "seal.crt")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return keyFile, certFile
}

// TestConfig_Signing: SIGNING_KEY_FILE and SIGNING_CERT_FILE load the seal's key and
// certificate; neither makes a throwaway certificate with one warning; one without the
// other, an unreadable file, a key of another certificate and an expired certificate stop
// the configuration with an error naming the variable. It catches a server that starts
// sealing with a broken or missing key (every signed PDF invalid), a silently ignored half
// configuration, and a throwaway seal nobody is told about.
func TestConfig_Signing(t *testing.T) {
	dir := t.TempDir()
	keyFile, certFile := signingFiles(t, dir, time.Now().AddDate(2, 0, 0))
	otherKey, _ := signingFiles(t, t.TempDir(), time.Now().AddDate(2, 0, 0))
	expiredKey, expiredCert := signingFiles(t, t.TempDir(), time.Now().AddDate(0, 0, -1))
	soonKey, soonCert := signingFiles(t, t.TempDir(), time.Now().AddDate(0, 0, 10))
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}

	load := func(env map[string]string) (Config, error) {
		env["DATABASE_URL"] = "postgres://localhost/x"
		return LoadConfig(func(k string) string { return env[k] })
	}
	sealer := func(t *testing.T, cfg Config) (*pdfseal.Sealer, string) {
		t.Helper()
		var logs bytes.Buffer
		s, err := cfg.Signing.Sealer(zerolog.New(&logs))
		if err != nil || s == nil {
			t.Fatalf("Sealer = %v, %v", s, err)
		}
		return s, logs.String()
	}

	t.Run("files", func(t *testing.T) {
		cfg, err := load(map[string]string{"SIGNING_KEY_FILE": keyFile, "SIGNING_CERT_FILE": certFile})
		if err != nil {
			t.Fatal(err)
		}
		s, logs := sealer(t, cfg)
		if cn := s.Certificate().Subject.CommonName; cn != "Muster Makler GmbH" {
			t.Errorf("sealer of %q, not the configured certificate", cn)
		}
		if logs != "" {
			t.Errorf("logs %s", logs)
		}
	})
	t.Run("nothing set", func(t *testing.T) {
		cfg, err := load(map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		s, logs := sealer(t, cfg)
		if s.Certificate().Subject.CommonName != devSealName {
			t.Errorf("sealer of %q", s.Certificate().Subject.CommonName)
		}
		want := "signed PDFs are sealed with a throwaway self-signed certificate: set SIGNING_KEY_FILE and SIGNING_CERT_FILE"
		if strings.Count(logs, want) != 1 || strings.Count(logs, "\n") != 1 || !strings.Contains(logs, `"level":"warn"`) {
			t.Errorf("logs %s, want the warning once", logs)
		}
	})
	t.Run("expires soon", func(t *testing.T) {
		cfg, err := load(map[string]string{"SIGNING_KEY_FILE": soonKey, "SIGNING_CERT_FILE": soonCert})
		if err != nil {
			t.Fatal(err)
		}
		if _, logs := sealer(t, cfg); !strings.Contains(logs, "expires soon") {
			t.Errorf("logs %q, want a warning that the certificate expires soon", logs)
		}
	})

	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"key without certificate", map[string]string{"SIGNING_KEY_FILE": keyFile}, []string{"SIGNING_CERT_FILE must be set"}},
		{"certificate without key", map[string]string{"SIGNING_CERT_FILE": certFile}, []string{"SIGNING_KEY_FILE must be set"}},
		{"missing key file", map[string]string{"SIGNING_KEY_FILE": filepath.Join(dir, "nope"), "SIGNING_CERT_FILE": certFile},
			[]string{"SIGNING_KEY_FILE:", "no such file"}},
		{"missing certificate file", map[string]string{"SIGNING_KEY_FILE": keyFile, "SIGNING_CERT_FILE": filepath.Join(dir, "nope")},
			[]string{"SIGNING_CERT_FILE:", "no such file"}},
		{"not PEM", map[string]string{"SIGNING_KEY_FILE": garbage, "SIGNING_CERT_FILE": certFile},
			[]string{"SIGNING_KEY_FILE", "no PEM private key"}},
		{"key of another certificate", map[string]string{"SIGNING_KEY_FILE": otherKey, "SIGNING_CERT_FILE": certFile},
			[]string{"SIGNING_KEY_FILE, SIGNING_CERT_FILE", "does not belong"}},
		{"expired", map[string]string{"SIGNING_KEY_FILE": expiredKey, "SIGNING_CERT_FILE": expiredCert},
			[]string{"SIGNING_CERT_FILE", "expired on"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(tc.env)
			if err == nil {
				t.Fatal("configuration accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
