// Package pdfseal seals PDFs with a PAdES signature (github.com/digitorus/pdfsign): the key and
// certificate come from configuration; DevCertificate makes a self-signed pair for development
// and tests. A sealed PDF verifies with poppler's pdfsig; a changed byte breaks it.
//
// STUB: the signatures of this file are the contract; the owner fills in the bodies.
package pdfseal

import (
	"errors"
	"time"
)

// Sealer seals PDFs with one key and certificate chain.
type Sealer struct{}

// Info is what the signature dictionary says.
type Info struct {
	Name, Reason, Location, Contact string
	Time                            time.Time
}

// New reads a PEM private key (RSA or ECDSA, PKCS#1, PKCS#8 or SEC 1) and a PEM certificate
// chain (the signing certificate first).
func New(keyPEM, certPEM []byte) (*Sealer, error) {
	return nil, errors.New("pdfseal: not implemented yet")
}

// Seal returns content with a PAdES (ETSI.CAdES.detached) signature appended.
func (s *Sealer) Seal(content []byte, info Info) ([]byte, error) {
	return nil, errors.New("pdfseal: not implemented yet")
}

// DevCertificate makes a self-signed key and certificate (PEM) for commonName.
func DevCertificate(commonName string) (keyPEM, certPEM []byte, err error) {
	return nil, nil, errors.New("pdfseal: not implemented yet")
}
