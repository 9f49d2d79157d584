// Package pdfseal seals PDFs with a PAdES signature: the key and certificate come from
// configuration; DevCertificate makes a self-signed pair for development and tests. A sealed
// PDF verifies with poppler's pdfsig; a changed byte breaks it.
//
// The seal is PAdES baseline B-B (ETSI EN 319 142-1): SubFilter ETSI.CAdES.detached, a CMS
// with content-type, message-digest and signing-certificate-v2 as its only signed attributes,
// the signing time in the signature dictionary's /M. It is written here, on pdfcpu's reader,
// rather than by github.com/digitorus/pdfsign's sign package, which writes the legacy
// adbe.pkcs7.detached SubFilter, puts the clock's time into a CMS signing-time attribute
// (which PAdES baseline forbids, and which made the same input seal differently) and writes a
// DocMDP reference without the catalog's /Perms entry, so no reader treats it as the
// certification it claims to be.
package pdfseal

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sealer seals PDFs with one key and certificate chain. It is safe for concurrent use.
type Sealer struct {
	key   crypto.Signer
	chain []*x509.Certificate // the signing certificate first
	// sigAlg is the CMS signature algorithm of the key; maxSig the longest signature it makes.
	sigAlg algorithm
	maxSig int
	// essCertID is the signed signing-certificate-v2 attribute's value: it binds the signature
	// to this certificate (PAdES requires it), and depends on nothing but the certificate.
	essCertID []byte
	// contentsLen is the size of the /Contents placeholder in bytes: the CMS with the longest
	// signature the key can make, so every seal of one Sealer has the same layout.
	contentsLen int
}

// Info is what the signature dictionary says.
type Info struct {
	Name, Reason, Location, Contact string
	Time                            time.Time
}

// New reads a PEM private key (RSA or ECDSA, PKCS#1, PKCS#8 or SEC 1) and a PEM certificate
// chain (the signing certificate first). It refuses a key that is not the certificate's, a
// certificate outside its validity period, one whose key usage forbids signing, and an RSA
// key under 2048 bits: the server refuses to start with them rather than seal PDFs that no
// reader accepts.
func New(keyPEM, certPEM []byte) (*Sealer, error) {
	return newAt(keyPEM, certPEM, time.Now())
}

func newAt(keyPEM, certPEM []byte, now time.Time) (*Sealer, error) {
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	chain, err := parseChain(certPEM)
	if err != nil {
		return nil, err
	}
	cert := chain[0]
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("pdfseal: the private key does not belong to the certificate %q "+
			"(the signing certificate must come first in the chain)", cert.Subject.String())
	}
	if now.Before(cert.NotBefore) {
		return nil, fmt.Errorf("pdfseal: the certificate %q is not valid before %s",
			cert.Subject.String(), cert.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(cert.NotAfter) {
		return nil, fmt.Errorf("pdfseal: the certificate %q expired on %s",
			cert.Subject.String(), cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if ku := cert.KeyUsage; ku != 0 && ku&(x509.KeyUsageDigitalSignature|x509.KeyUsageContentCommitment) == 0 {
		return nil, fmt.Errorf("pdfseal: the certificate %q may not sign documents: its key usage has "+
			"neither digitalSignature nor nonRepudiation", cert.Subject.String())
	}
	s := &Sealer{key: key, chain: chain}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("pdfseal: the RSA key has %d bits, at least 2048 are needed", k.N.BitLen())
		}
		s.sigAlg, s.maxSig = algRSA, (k.N.BitLen()+7)/8
	case *ecdsa.PrivateKey:
		// DER SEQUENCE of two INTEGERs, each at most one byte longer than the order
		n := (k.Curve.Params().BitSize + 7) / 8
		s.sigAlg, s.maxSig = algECDSA, 2*(n+1+2)+3
	}
	s.essCertID = essCertIDv2(cert)
	longest, err := s.cms(make([]byte, sha256.Size), func([]byte) ([]byte, error) {
		return make([]byte, s.maxSig), nil
	})
	if err != nil {
		return nil, err
	}
	s.contentsLen = len(longest)
	return s, nil
}

// Certificate is the signing certificate.
func (s *Sealer) Certificate() *x509.Certificate { return s.chain[0] }

// parseKey reads the first private key of keyPEM.
func parseKey(keyPEM []byte) (crypto.Signer, error) {
	rest := keyPEM
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil, errors.New("pdfseal: no PEM private key (RSA PRIVATE KEY, EC PRIVATE KEY or PRIVATE KEY)")
		}
		if b.Headers["Proc-Type"] != "" || b.Type == "ENCRYPTED PRIVATE KEY" {
			return nil, errors.New("pdfseal: the private key is encrypted: give it unencrypted " +
				"(e.g. openssl pkey -in key.pem -out plain.pem), readable by the server only")
		}
		var (
			key any
			err error
		)
		switch b.Type {
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(b.Bytes)
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		default:
			continue // "EC PARAMETERS", which openssl ecparam writes before the key, and others
		}
		if err != nil {
			return nil, fmt.Errorf("pdfseal: read the %s: %w", strings.ToLower(b.Type), err)
		}
		switch k := key.(type) {
		case *rsa.PrivateKey:
			return k, nil
		case *ecdsa.PrivateKey:
			return k, nil
		default:
			return nil, fmt.Errorf("pdfseal: a %T private key cannot seal PDFs: use RSA or ECDSA", key)
		}
	}
}

// parseChain reads the certificates of certPEM in order.
func parseChain(certPEM []byte) ([]*x509.Certificate, error) {
	var chain []*x509.Certificate
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("pdfseal: read certificate %d of the chain: %w", len(chain)+1, err)
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, errors.New("pdfseal: no PEM CERTIFICATE")
	}
	return chain, nil
}
