package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// SecretPrefix starts every signing secret (Standard Webhooks' whsec_ + base64 of the key).
const SecretPrefix = "whsec_"

// secretBytes is the length of a signing key: 256 bits (Standard Webhooks allows 24-64 bytes).
const secretBytes = 32

// newSecret returns a fresh signing key and its printable form, shown to the caller once.
func newSecret() ([]byte, string) {
	k := make([]byte, secretBytes)
	_, _ = rand.Read(k)
	return k, SecretPrefix + base64.StdEncoding.EncodeToString(k)
}

// Sealer keeps signing secrets encrypted at rest with AES-256-GCM. They cannot be hashed like
// API keys: every delivery needs the key itself to sign. A database dump (or a replica, a
// backup) without the sealing key therefore reveals no secret. The first key seals; every key
// opens, so keys can be rotated (WEBHOOK_SECRET_KEYS="new,old"). A sealed value is
// 0x01 | key id (4 bytes of SHA-256 of the key) | nonce | ciphertext, and its additional data
// is the company and endpoint id, so a value copied into another row does not open.
type Sealer struct {
	keys []sealKey
}

type sealKey struct {
	id   [4]byte
	aead cipher.AEAD
}

const sealVersion = 1

// NewSealer builds a sealer from 32-byte keys; keys[0] seals.
func NewSealer(keys [][]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("no sealing key")
	}
	s := &Sealer{}
	for i, k := range keys {
		if len(k) != 32 {
			return nil, fmt.Errorf("sealing key %d: want 32 bytes, got %d", i+1, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(k)
		s.keys = append(s.keys, sealKey{id: [4]byte(sum[:4]), aead: aead})
	}
	return s, nil
}

// ParseSealingKeys reads WEBHOOK_SECRET_KEYS (comma-separated base64 of 32 bytes each); when it
// is empty the key is derived from the APP_SECRET (so one secret configures a small deployment).
func ParseSealingKeys(list string, appSecret []byte) ([][]byte, error) {
	if strings.TrimSpace(list) == "" {
		mac := hmac.New(sha256.New, appSecret)
		mac.Write([]byte("brokerdesk webhook secrets v1"))
		return [][]byte{mac.Sum(nil)}, nil
	}
	var out [][]byte
	for i, p := range strings.Split(list, ",") {
		k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(p))
		if err != nil || len(k) != 32 {
			return nil, fmt.Errorf("key %d is not the base64 of 32 bytes", i+1)
		}
		out = append(out, k)
	}
	return out, nil
}

func aad(company, endpoint uuid.UUID) []byte {
	return append(company[:len(company):len(company)], endpoint[:]...)
}

// Seal encrypts a signing key of endpoint.
func (s *Sealer) Seal(company, endpoint uuid.UUID, plain []byte) []byte {
	k := s.keys[0]
	out := make([]byte, 0, 5+k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	out = append(out, sealVersion)
	out = append(out, k.id[:]...)
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, plain, aad(company, endpoint))
}

// ErrUnsealable is a secret no configured key opens (WEBHOOK_SECRET_KEYS lost a key).
var ErrUnsealable = errors.New("the endpoint's signing secret cannot be decrypted with the configured WEBHOOK_SECRET_KEYS")

// Open decrypts a sealed signing key of endpoint.
func (s *Sealer) Open(company, endpoint uuid.UUID, sealed []byte) ([]byte, error) {
	if len(sealed) < 5 || sealed[0] != sealVersion {
		return nil, ErrUnsealable
	}
	for _, k := range s.keys {
		if [4]byte(sealed[1:5]) != k.id {
			continue
		}
		n := k.aead.NonceSize()
		if len(sealed) < 5+n {
			return nil, ErrUnsealable
		}
		plain, err := k.aead.Open(nil, sealed[5:5+n], sealed[5+n:], aad(company, endpoint))
		if err != nil {
			return nil, ErrUnsealable
		}
		return plain, nil
	}
	return nil, ErrUnsealable
}

// Overlap is how long a rotated-out secret still signs (spec: Limits).
const Overlap = 24 * time.Hour
