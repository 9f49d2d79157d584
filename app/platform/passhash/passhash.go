// Package passhash hashes and checks the passwords people sign in with: staff at the OAuth
// authorization server and customers at the portal, one argon2id scheme for both.
package passhash

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters: OWASP's minimum (19 MiB, 2 passes, 1 lane), which keeps a sign-in
// around 30 ms on the 2-core machines this runs on.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

// Hash returns the argon2id PHC string of password.
func Hash(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b.EncodeToString(salt), b.EncodeToString(key))
}

// Check reports whether password matches the PHC string hash. A malformed or empty
// hash never matches.
func Check(hash, password string) bool {
	i := strings.LastIndex(hash, "$")
	if i < 0 {
		return false
	}
	got := Derive(hash[:i], password)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(hash)) == 1
}

// Derive is the argon2id PHC string of password under params, the parameters and salt of
// a stored hash (the stored string up to its last '$': "$argon2id$v=19$m=…,t=…,p=…$<salt>"), or
// "" when params is malformed. It equals the stored string exactly when the password is right,
// so the sign-in lets the database compare (oauth_server_login) and the stored key never leaves
// it.
func Derive(params, password string) string {
	parts := strings.Split(params, "$")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "argon2id" {
		return ""
	}
	var v int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return ""
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return ""
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) == 0 {
		return ""
	}
	key := argon2.IDKey([]byte(password), salt, t, m, p, argonKeyLen)
	return params + "$" + base64.RawStdEncoding.EncodeToString(key)
}
