package pdfseal

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"slices"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// The CMS (RFC 5652) of the seal is written here with cryptobyte: the signed attributes are
// exactly PAdES baseline's (content-type, message-digest, signing-certificate-v2), which the
// pkcs7 packages at hand do not allow (they add signing-time from the clock).

type algorithm int

const (
	algRSA algorithm = iota + 1
	algECDSA
)

var (
	oidData                 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSignedData           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidContentType          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningCertificateV2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 47}
	oidSHA256               = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidSHA256WithRSA        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidECDSAWithSHA256      = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
)

// essCertIDv2 is the SigningCertificateV2 value (RFC 5035) naming cert by its SHA-256 hash
// (the default algorithm, so not written) and its issuer and serial number.
func essCertIDv2(cert *x509.Certificate) []byte {
	h := sha256.Sum256(cert.Raw)
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SigningCertificateV2
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // certs
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // ESSCertIDv2
				b.AddASN1OctetString(h[:])
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // IssuerSerial
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // GeneralNames
						// directoryName [4]: explicit, Name being a CHOICE
						b.AddASN1(cbasn1.Tag(4).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
							b.AddBytes(cert.RawIssuer)
						})
					})
					b.AddASN1BigInt(cert.SerialNumber)
				})
			})
		})
	})
	return b.BytesOrPanic()
}

// signedAttrs is the DER SET OF the signed attributes for a content digest, sorted as DER
// requires of a SET OF (the signature covers this encoding).
func (s *Sealer) signedAttrs(digest []byte) ([]byte, error) {
	attr := func(oid asn1.ObjectIdentifier, value func(*cryptobyte.Builder)) []byte {
		var b cryptobyte.Builder
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oid)
			b.AddASN1(cbasn1.SET, value)
		})
		return b.BytesOrPanic()
	}
	attrs := [][]byte{
		attr(oidContentType, func(b *cryptobyte.Builder) { b.AddASN1ObjectIdentifier(oidData) }),
		attr(oidMessageDigest, func(b *cryptobyte.Builder) { b.AddASN1OctetString(digest) }),
		attr(oidSigningCertificateV2, func(b *cryptobyte.Builder) { b.AddBytes(s.essCertID) }),
	}
	slices.SortFunc(attrs, bytes.Compare)
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
		for _, a := range attrs {
			b.AddBytes(a)
		}
	})
	return b.Bytes()
}

// sign signs the SHA-256 of the signed attributes with the key: PKCS #1 v1.5 for RSA
// (deterministic), ASN.1 DER for ECDSA.
func (s *Sealer) sign(signedAttrs []byte) ([]byte, error) {
	h := sha256.Sum256(signedAttrs)
	return s.key.Sign(rand.Reader, h[:], crypto.SHA256)
}

// cms is the detached CMS SignedData (ContentInfo) over a content digest; sign signs the DER
// of the signed attributes.
func (s *Sealer) cms(digest []byte, sign func(signedAttrs []byte) ([]byte, error)) ([]byte, error) {
	attrs, err := s.signedAttrs(digest)
	if err != nil {
		return nil, err
	}
	sig, err := sign(attrs)
	if err != nil {
		return nil, err
	}
	cert := s.chain[0]
	sha256AlgID := func(b *cryptobyte.Builder) {
		// RFC 5754: the parameters of SHA-2 identifiers are absent
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1ObjectIdentifier(oidSHA256) })
	}
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // ContentInfo
		b.AddASN1ObjectIdentifier(oidSignedData)
		b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SignedData
				b.AddASN1Int64(1)
				b.AddASN1(cbasn1.SET, sha256AlgID)
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // detached: no eContent
					b.AddASN1ObjectIdentifier(oidData)
				})
				b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
					for _, c := range s.chain {
						b.AddBytes(c.Raw)
					}
				})
				b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SignerInfo
						b.AddASN1Int64(1)
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // IssuerAndSerialNumber
							b.AddBytes(cert.RawIssuer)
							b.AddASN1BigInt(cert.SerialNumber)
						})
						sha256AlgID(b)
						// [0] IMPLICIT: the signed SET OF with its tag replaced
						b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
							var content cryptobyte.String
							in := cryptobyte.String(attrs)
							in.ReadASN1(&content, cbasn1.SET)
							b.AddBytes(content)
						})
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
							if s.sigAlg == algRSA {
								b.AddASN1ObjectIdentifier(oidSHA256WithRSA)
								b.AddASN1NULL()
							} else {
								b.AddASN1ObjectIdentifier(oidECDSAWithSHA256)
							}
						})
						b.AddASN1OctetString(sig)
					})
				})
			})
		})
	})
	return b.Bytes()
}
