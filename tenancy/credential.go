package tenancy

import (
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strings"
)

// Key prefixes: the prefix says the kind and the environment (Stripe's convention).
const (
	PrefixSecretLive      = "sk_live_"
	PrefixSecretTest      = "sk_test_"
	PrefixPublishableLive = "pk_live_"
	PrefixPublishableTest = "pk_test_"
)

const (
	keyAlphabet  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	keyLength    = 43 // base62 characters: 256 bits of randomness
	prefixLength = 8  // characters after the kind prefix kept to identify a key in lists and logs
)

// NewKey returns a fresh key of kind and env, the prefix that identifies it and the hash that
// is stored. The key itself is shown once and never stored.
func NewKey(kind, env string) (key, prefix string, hash []byte) {
	p := keyPrefix(kind, env)
	var b strings.Builder
	b.WriteString(p)
	max := big.NewInt(int64(len(keyAlphabet)))
	for range keyLength {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		b.WriteByte(keyAlphabet[n.Int64()])
	}
	key = b.String()
	return key, key[:len(p)+prefixLength], HashKey(key)
}

func keyPrefix(kind, env string) string {
	switch {
	case kind == KindPublishable && env == EnvTest:
		return PrefixPublishableTest
	case kind == KindPublishable:
		return PrefixPublishableLive
	case env == EnvTest:
		return PrefixSecretTest
	default:
		return PrefixSecretLive
	}
}

// HashKey is the SHA-256 of a key: keys carry 256 random bits, so a fast hash is enough.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// KindOf tells a key's kind from its prefix, or "" for anything that is not one of our keys:
// a wrong prefix, length or alphabet. A malformed key is refused before any database work.
func KindOf(key string) string {
	if len(key) != len(PrefixSecretLive)+keyLength {
		return ""
	}
	for i := len(PrefixSecretLive); i < len(key); i++ {
		c := key[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return ""
		}
	}
	switch {
	case strings.HasPrefix(key, PrefixSecretLive), strings.HasPrefix(key, PrefixSecretTest):
		return KindSecret
	case strings.HasPrefix(key, PrefixPublishableLive), strings.HasPrefix(key, PrefixPublishableTest):
		return KindPublishable
	}
	return ""
}
