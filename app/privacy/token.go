package privacy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/google/uuid"
)

// A download token is the company's id and 32 random bytes, base64url: the public route needs
// the company to pin its transaction (row-level security admits no unpinned read), and the
// random part is the secret. Only its SHA-256 is stored (privacy_requests.download_token_hash),
// so a copy of the database opens no export.
const tokenRandom = 32

// newToken returns a fresh token of company and the hash stored for it.
func newToken(company uuid.UUID) (token, hash string) {
	b := make([]byte, 16+tokenRandom)
	copy(b, company[:])
	_, _ = rand.Read(b[16:]) // crypto/rand never fails on the platforms we run on
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

// hashToken is the stored form of a token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// tokenCompany reads the company of a token; ok is false for anything newToken did not shape.
func tokenCompany(token string) (uuid.UUID, bool) {
	if len(token) != base64.RawURLEncoding.EncodedLen(16+tokenRandom) {
		return uuid.Nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != 16+tokenRandom {
		return uuid.Nil, false
	}
	id, err := uuid.FromBytes(b[:16])
	return id, err == nil && id != uuid.Nil
}
