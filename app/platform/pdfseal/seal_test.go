package pdfseal_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

// TestMain points pdfcpu's config directory (its default configuration and certificate store,
// which the signature validation of these tests reads) at a temporary directory, so the
// tests write nothing into the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pdfseal-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// wantLines fails unless every line is in out.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("pdfsig does not say %q:\n%s", l, out)
		}
	}
}

// TestSeal_PdfsigValid: a sealed PDF (of fpdf, of pdfcpu's merge, with ECDSA and RSA keys)
// is, for poppler's pdfsig, one ETSI.CAdES.detached signature that is valid and covers the
// whole document, at the signing time given; pdfcpu's validator reads the file and finds the
// certification with no changes allowed and the CAdES baseline B certificate binding intact.
// It catches a wrong byte range or digest, the legacy SubFilter, a cross-reference section
// that misses an object (pdfsig finds no signature), an update that rewrites the document
// instead of appending to it, a signing time in the wrong zone, and a DocMDP entry missing
// from the catalog.
func TestSeal_PdfsigValid(t *testing.T) {
	rsaSealer := func(t *testing.T) *pdfseal.Sealer {
		k, c := pair(t, rsaKey(t, 2048), nil)
		s, err := pdfseal.New(k, c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name   string
		doc    func(testing.TB) []byte
		sealer func(*testing.T) *pdfseal.Sealer
		cn     string
	}{
		{"fpdf, ECDSA", func(t testing.TB) []byte { return fpdfDoc(t, 3) }, func(t *testing.T) *pdfseal.Sealer { return devSealer(t) }, "BrokerDesk Test"},
		{"pdfcpu merge, ECDSA", mergedDoc, func(t *testing.T) *pdfseal.Sealer { return devSealer(t) }, "BrokerDesk Test"},
		{"fpdf, RSA", func(t testing.TB) []byte { return fpdfDoc(t, 1) }, rsaSealer, "Muster Makler GmbH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.doc(t)
			out, err := tc.sealer(t).Seal(in, info())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out, in) {
				t.Error("the seal changed the document's bytes instead of appending an update")
			}
			got := pdfsig(t, out)
			wantLines(t, got,
				"Signature #1:",
				"- Signer Certificate Common Name: "+tc.cn,
				"- Signing Time: "+sealedAt.UTC().Format("Jan 02 2006 15:04:05"),
				"- Signing Hash Algorithm: SHA-256",
				"- Signature Type: ETSI.CAdES.detached",
				"- Total document signed",
				"- Signature Validation: Signature is Valid.",
			)
			if strings.Contains(got, "Signature #2") {
				t.Errorf("pdfsig finds more than one signature:\n%s", got)
			}
			// the certificate is self-signed: pdfsig cannot trust it, which is not the signature's fault
			if !regexp.MustCompile(`Certificate Validation: Certificate issuer is unknown`).MatchString(got) {
				t.Errorf("pdfsig's certificate line is not the expected untrusted issuer:\n%s", got)
			}

			res, err := api.ValidateSignaturesRaw(bytes.NewReader(out), true, writeConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 {
				t.Fatalf("pdfcpu finds %d signatures", len(res))
			}
			r := res[0]
			if r.Details.SubFilter != "ETSI.CAdES.detached" || !r.Certified() ||
				r.Permissions() != model.CertifiedSigPermNoChangesAllowed || r.DocModified == model.True {
				t.Errorf("pdfcpu: subfilter %s, certified %v, permissions %d, modified %d",
					r.Details.SubFilter, r.Certified(), r.Permissions(), r.DocModified)
			}
			for _, p := range r.Problems {
				// the one problem a self-signed certificate must have
				if !strings.Contains(p, "certificate") || strings.Contains(p, "CAdES") || strings.Contains(p, "digest") {
					t.Errorf("pdfcpu: %s", p)
				}
			}
		})
	}
}

// TestSeal_PdfcpuValidate: pdfcpu's validator accepts the sealed file in the strictest mode
// the document itself passes: strict for pdfcpu's own output, relaxed for fpdf's PDF 1.3,
// where the catalog's /Version 1.7 the seal adds (PAdES is a PDF 1.7 extension, /Perms 1.5)
// is a key strict mode refuses in a 1.3 file, although that key is how an incremental update
// raises the version. It catches a malformed signature dictionary, field, catalog or
// cross-reference section.
func TestSeal_PdfcpuValidate(t *testing.T) {
	s := devSealer(t)
	for _, tc := range []struct {
		name string
		in   []byte
		mode int
	}{
		{"pdfcpu merge, strict", mergedDoc(t), model.ValidationStrict},
		{"fpdf 1.3, relaxed", fpdfDoc(t, 2), model.ValidationRelaxed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := writeConfig()
			conf.ValidationMode = tc.mode
			if err := api.Validate(bytes.NewReader(tc.in), conf); err != nil {
				t.Fatalf("the input itself: %v", err)
			}
			out, err := s.Seal(tc.in, info())
			if err != nil {
				t.Fatal(err)
			}
			if err := api.Validate(bytes.NewReader(out), conf); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSeal_ChangedByteBreaksIt: one byte changed in the sealed file, in the document before
// the signature (its title) or in the update after it (the seal's location), and pdfsig
// reports the digest mismatch, pdfcpu the modification. It catches a byte range that leaves
// part of the file unsigned.
func TestSeal_ChangedByteBreaksIt(t *testing.T) {
	out, err := devSealer(t).Seal(fpdfDoc(t, 1), info())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, find, replace string }{
		{"in the document", "Maklervertrag", "maklervertrag"},
		{"in the update after the signature", "/Location(Berlin)", "/Location(berlin)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Count(out, []byte(tc.find)) != 1 {
				t.Fatalf("%q is not in the sealed PDF once", tc.find)
			}
			changed := bytes.Replace(out, []byte(tc.find), []byte(tc.replace), 1)
			wantLines(t, pdfsig(t, changed), "- Signature Validation: Digest Mismatch.")
			res, err := api.ValidateSignaturesRaw(bytes.NewReader(changed), true, writeConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].DocModified != model.True || res[0].Status != model.SignatureStatusInvalid {
				t.Errorf("pdfcpu does not find the change: %v", res)
			}
		})
	}
}

// TestSeal_SealedTwice: sealing a sealed PDF appends a second (approval) signature; both
// stay valid for pdfsig, the first covering the document as it was. It catches an update
// whose /Prev loses the earlier sections and an AcroForm that drops the earlier field.
func TestSeal_SealedTwice(t *testing.T) {
	s := devSealer(t)
	for name, in := range map[string][]byte{"xref table": fpdfDoc(t, 1), "xref stream": mergedDoc(t)} {
		t.Run(name, func(t *testing.T) {
			once, err := s.Seal(in, info())
			if err != nil {
				t.Fatal(err)
			}
			twice, err := s.Seal(once, info())
			if err != nil {
				t.Fatal(err)
			}
			got := pdfsig(t, twice)
			first, second, ok := strings.Cut(got, "Signature #2:")
			if !ok {
				t.Fatalf("pdfsig finds one signature:\n%s", got)
			}
			wantLines(t, first, "- Signature Field Name: Seal1", "- Signature Validation: Signature is Valid.")
			wantLines(t, second, "- Signature Field Name: Seal2", "- Total document signed",
				"- Signature Validation: Signature is Valid.")
		})
	}
}

// TestSeal_Deterministic: the same document, information and RSA key seal to the same bytes;
// with ECDSA only the signature value differs. It catches a seal that reads the clock or
// iterates a map into the file.
func TestSeal_Deterministic(t *testing.T) {
	in := fpdfDoc(t, 1)
	k, c := pair(t, rsaKey(t, 2048), nil)
	rs, err := pdfseal.New(k, c)
	if err != nil {
		t.Fatal(err)
	}
	a, err := rs.Seal(in, info())
	if err != nil {
		t.Fatal(err)
	}
	b, err := rs.Seal(in, info())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("RSA: two seals of the same input differ")
	}

	es := devSealer(t)
	a, _ = es.Seal(in, info())
	b, _ = es.Seal(in, info())
	contents := regexp.MustCompile(`/Contents<[0-9a-f]+>`)
	if len(a) != len(b) || !bytes.Equal(contents.ReplaceAll(a, nil), contents.ReplaceAll(b, nil)) {
		t.Error("ECDSA: two seals of the same input differ outside the signature value")
	}
}

// TestSeal_RefusesInput: no signing time, a signing time after the certificate expired, or
// bytes that are no PDF, are errors, never a sealed file. It catches a seal that falls back
// to the clock, seals with a certificate that ran out while the server ran, or signs garbage.
func TestSeal_RefusesInput(t *testing.T) {
	s := devSealer(t)
	noTime := info()
	noTime.Time = time.Time{}
	if _, err := s.Seal(fpdfDoc(t, 1), noTime); err == nil || !strings.Contains(err.Error(), "Time") {
		t.Errorf("no time: %v", err)
	}
	outside := info()
	outside.Time = s.Certificate().NotAfter.Add(time.Second)
	if _, err := s.Seal(fpdfDoc(t, 1), outside); err == nil || !strings.Contains(err.Error(), "outside the certificate's validity") {
		t.Errorf("signing time after the certificate expired: %v", err)
	}
	for _, in := range [][]byte{nil, []byte("%PDF-1.7\nnot really\n%%EOF\n"), []byte("<html></html>")} {
		if out, err := s.Seal(in, info()); err == nil {
			t.Errorf("%q sealed into %d bytes", in, len(out))
		}
	}
}

// TestNew_KeyFormats: RSA and ECDSA keys in PKCS #1, SEC 1 (with the EC PARAMETERS block
// openssl ecparam writes first) and PKCS #8, and a chain with its CA after the signing
// certificate, make Sealers whose seals pdfsig accepts. It catches a key format the
// configuration refuses although the brief promises it, and a chain whose CA is taken as the
// signer.
func TestNew_KeyFormats(t *testing.T) {
	ec, rk := ecKey(t), rsaKey(t, 2048)
	_, ecCert := pair(t, ec, nil)
	_, rsaCert := pair(t, rk, nil)
	sec1, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey) // any bytes: the block is skipped
	ecParams := pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: params[:10]})
	pkcs8EC, _ := x509.MarshalPKCS8PrivateKey(ec)
	pkcs8RSA, _ := x509.MarshalPKCS8PrivateKey(rk)

	// a CA and a signing certificate it issued
	ca := ecKey(t)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Muster CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(5, 0, 0), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &ca.PublicKey, ca)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := ecKey(t)
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject: pkix.Name{CommonName: "Muster Makler Siegel"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().AddDate(1, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature}, caCert, &leaf.PublicKey, ca)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, _ := x509.MarshalPKCS8PrivateKey(leaf)
	block := func(typ string, b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}) }

	in := fpdfDoc(t, 1)
	for _, tc := range []struct {
		name       string
		key, chain []byte
		cn         string
	}{
		{"RSA PKCS #1", block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)), rsaCert, "Muster Makler GmbH"},
		{"RSA PKCS #8", block("PRIVATE KEY", pkcs8RSA), rsaCert, "Muster Makler GmbH"},
		{"EC SEC 1 after EC PARAMETERS", append(ecParams, block("EC PRIVATE KEY", sec1)...), ecCert, "Muster Makler GmbH"},
		{"EC PKCS #8", block("PRIVATE KEY", pkcs8EC), ecCert, "Muster Makler GmbH"},
		{"chain with CA", block("PRIVATE KEY", leafKey), append(block("CERTIFICATE", leafDER), block("CERTIFICATE", caDER)...), "Muster Makler Siegel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := pdfseal.New(tc.key, tc.chain)
			if err != nil {
				t.Fatal(err)
			}
			if s.Certificate().Subject.CommonName != tc.cn {
				t.Errorf("signing certificate %q", s.Certificate().Subject.CommonName)
			}
			out, err := s.Seal(in, info())
			if err != nil {
				t.Fatal(err)
			}
			wantLines(t, pdfsig(t, out), "- Signer Certificate Common Name: "+tc.cn, "- Signature Validation: Signature is Valid.")
		})
	}
}

// TestNew_Refuses: a key of another certificate, an expired or not yet valid certificate,
// one that may not sign, a short RSA key, an encrypted or unsupported key, a chain with the
// CA first, and PEM without a key or a certificate are refused with an error that says
// which, so the server does not start with them. It catches a server that seals with a
// certificate every reader rejects.
func TestNew_Refuses(t *testing.T) {
	k := ecKey(t)
	keyPEM, certPEM := pair(t, k, nil)
	_, otherCert := pair(t, ecKey(t), nil)
	_, expired := pair(t, k, func(c *x509.Certificate) {
		c.NotBefore, c.NotAfter = time.Now().AddDate(-2, 0, 0), time.Now().AddDate(0, 0, -1)
	})
	_, future := pair(t, k, func(c *x509.Certificate) { c.NotBefore = time.Now().AddDate(0, 1, 0) })
	_, certSignOnly := pair(t, k, func(c *x509.Certificate) { c.KeyUsage = x509.KeyUsageCertSign })
	short := rsaKey(t, 1024)
	shortKey, shortCert := pair(t, short, nil)
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY",
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-256-CBC,00"}, Bytes: []byte{1}})
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	edKey, edCert := pair(t, edPriv, nil)
	caFirst := append(append([]byte{}, otherCert...), certPEM...)

	for _, tc := range []struct {
		name       string
		key, chain []byte
		want       string
	}{
		{"key of another certificate", keyPEM, otherCert, "does not belong to the certificate"},
		{"CA before the signing certificate", keyPEM, caFirst, "does not belong to the certificate"},
		{"expired", keyPEM, expired, "expired on"},
		{"not yet valid", keyPEM, future, "not valid before"},
		{"key usage without signing", keyPEM, certSignOnly, "neither digitalSignature nor nonRepudiation"},
		{"RSA 1024", shortKey, shortCert, "at least 2048"},
		{"encrypted key", encrypted, certPEM, "encrypted"},
		{"Ed25519", edKey, edCert, "use RSA or ECDSA"},
		{"no key", certPEM, certPEM, "no PEM private key"},
		{"no certificate", keyPEM, keyPEM, "no PEM CERTIFICATE"},
		{"not PEM", []byte("secret"), []byte("cert"), "no PEM private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := pdfseal.New(tc.key, tc.chain)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error saying %q", s, err, tc.want)
			}
		})
	}
}

// TestDevCertificate: the development certificate is a self-signed ECDSA P-256 certificate
// for the common name, valid now and for ten years, allowed to sign documents, whose key New
// accepts; two calls make two keys. It catches a dev certificate readers refuse for its key
// usage, one that expires within a developer's lifetime of a data directory, and a fixed key.
func TestDevCertificate(t *testing.T) {
	keyPEM, certPEM, err := pdfseal.DevCertificate("BrokerDesk Dev (Muster Makler)")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pdfseal.New(keyPEM, certPEM)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Certificate()
	if c.Subject.CommonName != "BrokerDesk Dev (Muster Makler)" {
		t.Errorf("common name %q", c.Subject.CommonName)
	}
	if err := c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature); err != nil ||
		!bytes.Equal(c.RawIssuer, c.RawSubject) {
		t.Errorf("not self-signed: %v", err)
	}
	if c.KeyUsage&x509.KeyUsageDigitalSignature == 0 || c.KeyUsage&x509.KeyUsageContentCommitment == 0 {
		t.Errorf("key usage %b lacks digitalSignature or nonRepudiation", c.KeyUsage)
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("key %T, want ECDSA P-256", c.PublicKey)
	}
	now := time.Now()
	if c.NotBefore.After(now) || c.NotAfter.Before(now.AddDate(10, 0, -1)) || c.NotAfter.After(now.AddDate(10, 0, 1)) {
		t.Errorf("valid %s to %s, want now to ten years from now", c.NotBefore, c.NotAfter)
	}
	k2, _, err := pdfseal.DevCertificate("BrokerDesk Dev (Muster Makler)")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(keyPEM, k2) {
		t.Error("two dev certificates share a key")
	}
}
