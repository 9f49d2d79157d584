package migrations

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// scramIterations is PostgreSQL's default (scram_iterations).
const scramIterations = 4096

// scramVerifier is the SCRAM-SHA-256 verifier PostgreSQL stores for password (RFC 5802, RFC
// 7677; PostgreSQL's format SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>).
// ALTER ROLE ... PASSWORD takes such a verifier as is, so the password itself never travels in
// SQL text (where statement logs and pg_stat_statements would keep it). The verifier is not the
// secret: it proves a client's knowledge of the password but cannot be replayed as it. The
// password's bytes are used as given (PostgreSQL would SASLprep a non-ASCII one).
func scramVerifier(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key"))), nil
}

// newScramVerifier is scramVerifier with a fresh random 16-byte salt.
func newScramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return scramVerifier(password, salt, scramIterations)
}
