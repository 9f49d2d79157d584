package pdfseal_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"io"
	"math/big"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

// sealedAt is the signing time of the tests' seals (within the test certificates' validity),
// in a zone with an offset, so that a seal writing the wrong offset into /M shows in
// pdfsig's (UTC) signing time.
var sealedAt = time.Now().Truncate(time.Minute).In(time.FixedZone("CET", 3600))

// fpdfDoc is a document of n pages as app/platform/pdf writes them: fpdf with an embedded
// TrueType font (Go Regular), fixed dates, German text.
func fpdfDoc(t testing.TB, pages int) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.AddUTF8FontFromBytes("go", "", goregular.TTF)
	f.SetTitle("Maklervertrag", false)
	f.SetCreationDate(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	f.SetModificationDate(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	f.SetFont("go", "", 11)
	for p := 1; p <= pages; p++ {
		f.AddPage()
		for l := 0; l < 40; l++ {
			f.Cell(0, 6, fmt.Sprintf("Seite %d, Zeile %d: Der Makler berät die Kundin Jürgen Müller über Versicherungen.", p, l))
			f.Ln(6)
		}
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeConfig is pdfcpu's default configuration without its config directory.
func writeConfig() *model.Configuration {
	c := model.NewDefaultConfiguration()
	c.Offline = true
	return c
}

// mergedDoc is what pdfcpu's merge makes of two fpdf documents: cross-reference and object
// streams, PDF 1.7, as a signature request's merged PDF.
func mergedDoc(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	err := api.MergeRaw([]io.ReadSeeker{bytes.NewReader(fpdfDoc(t, 2)), bytes.NewReader(fpdfDoc(t, 1))}, &b, false, writeConfig())
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pdfsig runs poppler's pdfsig on content (found or installed by testsvc.Poppler; without it
// the test fails, never skips) in UTC, and returns its output.
func pdfsig(t *testing.T, content []byte) string {
	t.Helper()
	return pdftest.Must(t, "pdfsig", content)
}

// pair is a key and a certificate for it (PEM); edit changes the certificate's template.
func pair(t testing.TB, key crypto.Signer, edit func(*x509.Certificate)) (keyPEM, certPEM []byte) {
	t.Helper()
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(42),
		Subject:      pkix.Name{CommonName: "Muster Makler GmbH", Organization: []string{"Muster Makler GmbH"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
	}
	if edit != nil {
		edit(tpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func rsaKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// devSealer is a Sealer of a fresh DevCertificate.
func devSealer(t testing.TB) *pdfseal.Sealer {
	t.Helper()
	k, c, err := pdfseal.DevCertificate("BrokerDesk Test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pdfseal.New(k, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func info() pdfseal.Info {
	return pdfseal.Info{Name: "Muster Makler GmbH für Jürgen Müller", Reason: "Unterschrieben (alle Parteien)",
		Location: "Berlin", Contact: "info@muster-makler.de", Time: sealedAt}
}
