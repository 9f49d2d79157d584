// Package datakeys encrypts personal data at rest (the sensitive contact groups) with AES-256-GCM
// under keys from configuration: DATA_KEYS="kid1:base64key,kid2:base64key", the first seals,
// every one opens. Each sealed value carries the id of its key, so `brokerdesk keys rotate-data`
// can re-seal value by value under the current key while the old one still opens the rest.
package datakeys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Keyring holds the configured data keys; the first is current.
type Keyring struct {
	ids  []string
	aead map[string]cipher.AEAD
}

// DemoKeys is the DATA_KEYS of `brokerdesk dev` and the tests: a fixed, public key that must
// never protect real data.
const DemoKeys = "demo1:ZGVtby1rZXktMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY="

var kidPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Parse reads DATA_KEYS: comma-separated kid:base64 pairs, each key 32 bytes, ids unique.
func Parse(list string) (*Keyring, error) {
	k := &Keyring{aead: map[string]cipher.AEAD{}}
	for i, part := range strings.Split(list, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || !kidPattern.MatchString(id) {
			return nil, fmt.Errorf("entry %d must be kid:base64key with a kid of 1-32 letters, digits, - or _", i+1)
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("key %s is not the base64 of 32 bytes", id)
		}
		if _, dup := k.aead[id]; dup {
			return nil, fmt.Errorf("key id %s appears twice", id)
		}
		block, _ := aes.NewCipher(key)
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.ids = append(k.ids, id)
		k.aead[id] = aead
	}
	return k, nil
}

// MustParse is Parse for constants (DemoKeys) in tests and dev.
func MustParse(list string) *Keyring {
	k, err := Parse(list)
	if err != nil {
		panic(err)
	}
	return k
}

// Current is the id of the key that seals.
func (k *Keyring) Current() string { return k.ids[0] }

// Seal encrypts plain under the current key. aad binds the value to its place (company,
// contact and group): a value copied into another row or group does not open.
func (k *Keyring) Seal(plain, aad []byte) schematype.Sealed {
	id := k.ids[0]
	a := k.aead[id]
	nonce := make([]byte, a.NonceSize())
	_, _ = rand.Read(nonce)
	return schematype.Sealed{KeyID: id, Data: a.Seal(nonce, nonce, plain, aad)}
}

// ErrUnknownKey is a value sealed under a key DATA_KEYS no longer lists.
var ErrUnknownKey = errors.New("sealed with a key DATA_KEYS does not list")

// ErrTampered is a value that does not open with its key (changed, or moved to another place).
var ErrTampered = errors.New("sealed value does not open")

// Open decrypts s, sealed with aad.
func (k *Keyring) Open(s schematype.Sealed, aad []byte) ([]byte, error) {
	a, ok := k.aead[s.KeyID]
	if !ok {
		return nil, fmt.Errorf("key %q: %w", s.KeyID, ErrUnknownKey)
	}
	n := a.NonceSize()
	if len(s.Data) < n {
		return nil, ErrTampered
	}
	plain, err := a.Open(nil, s.Data[:n], s.Data[n:], aad)
	if err != nil {
		return nil, ErrTampered
	}
	return plain, nil
}

// FromConfig reads DATA_KEYS; when it is empty the one key is derived from the APP_SECRET (id
// "app"), so one secret configures a small deployment.
func FromConfig(list string, appSecret []byte) (*Keyring, error) {
	if strings.TrimSpace(list) != "" {
		return Parse(list)
	}
	return Parse(Derived(appSecret))
}

// Derived is the DATA_KEYS entry ("app:base64key") derived from the APP_SECRET, which is used
// when DATA_KEYS is unset; list it behind a new key to rotate away from it.
func Derived(appSecret []byte) string {
	mac := hmac.New(sha256.New, appSecret)
	mac.Write([]byte("brokerdesk data keys v1"))
	return "app:" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// IDs lists the key ids, current first.
func (k *Keyring) IDs() []string { return append([]string(nil), k.ids...) }
