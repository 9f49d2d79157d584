package signatures

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/tenancy"
)

// A signer's link is {PublicURL}/sign/{token}. The token is the company id, the signer id and
// an HMAC-SHA256 of both under a key derived from the app secret, base64url without padding
// (64 bytes → 86 characters). It is deterministic, so a reminder re-sends the link the signer
// already has; it opens only its own signer (so it cannot be used for another request); the
// request's status (cancelled, expired, completed) ends it. The signer row keeps the SHA-256
// of the token (token_hash), compared in constant time when the link is used: a token for a
// signer id that exists in no row is refused as well as a forged one.

const tokenLen = 16 + 16 + sha256.Size

// linkKey is the HMAC key of the links, derived from the app secret for this one purpose.
func (m *Module) linkKey() []byte {
	mac := hmac.New(sha256.New, m.d.Secret)
	mac.Write([]byte("brokerdesk signature link v1"))
	return mac.Sum(nil)
}

// linkToken is the token of signer's link.
func (m *Module) linkToken(company, signer uuid.UUID) string {
	b := make([]byte, 0, tokenLen)
	b = append(b, company[:]...)
	b = append(b, signer[:]...)
	mac := hmac.New(sha256.New, m.linkKey())
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(b))
}

// parseLinkToken reads a token; ok is false for anything this server did not make.
func (m *Module) parseLinkToken(tok string) (company, signer uuid.UUID, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) != tokenLen {
		return uuid.Nil, uuid.Nil, false
	}
	mac := hmac.New(sha256.New, m.linkKey())
	mac.Write(b[:32])
	if !hmac.Equal(mac.Sum(nil), b[32:]) {
		return uuid.Nil, uuid.Nil, false
	}
	copy(company[:], b[:16])
	copy(signer[:], b[16:32])
	return company, signer, true
}

// tokenHash is what a signer row keeps of its link's token.
func tokenHash(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

// sameToken compares a row's token_hash with a presented token in constant time.
func sameToken(stored []byte, tok string) bool {
	return subtle.ConstantTimeCompare(stored, tokenHash(tok)) == 1
}

// linkURL is the signing page of a signer.
func (m *Module) linkURL(company, signer uuid.UUID) string {
	return m.d.PublicURL + "/sign/" + m.linkToken(company, signer)
}

// companyTx runs fn in a company-level transaction of company on the job pool and commits when
// fn returns nil: the one way the signing page (no credential) and the area's jobs reach the
// database. Row-level security and the ent rules apply as for a company-level key.
func (m *Module) companyTx(ctx context.Context, company uuid.UUID, fn func(ctx context.Context) error) error {
	return tenancy.CompanyTx(ctx, m.d.DB, company, fn)
}

// SignerURL is the signing page of signer of company: the customer portal sends a signed-in
// customer there to sign (the page's own one-time code still applies).
func (m *Module) SignerURL(company, signer uuid.UUID) string { return m.linkURL(company, signer) }
