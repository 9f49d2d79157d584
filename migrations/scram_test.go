package migrations

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

// TestScramVerifier checks the verifier against RFC 7677's exchange (user "user", password
// "pencil"): the server signature computed from ServerKey and the client key recovered from the
// client proof and StoredKey must match what the RFC's client and server sent.
func TestScramVerifier(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := scramVerifier("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	head, keys, ok := strings.Cut(v, "$")
	if !ok || head != "SCRAM-SHA-256" {
		t.Fatalf("verifier %q", v)
	}
	params, keys, _ := strings.Cut(keys, "$")
	if params != "4096:W22ZaJ0SNY7soEsUEjb6gQ==" {
		t.Errorf("iterations and salt %q", params)
	}
	storedB64, serverB64, _ := strings.Cut(keys, ":")
	stored, _ := base64.StdEncoding.DecodeString(storedB64)
	serverKey, _ := base64.StdEncoding.DecodeString(serverB64)
	const authMessage = "n=user,r=rOprNGfwEbeRWgbNEkqO," +
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," +
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	mac := func(key []byte) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(authMessage))
		return h.Sum(nil)
	}
	if got := base64.StdEncoding.EncodeToString(mac(serverKey)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Errorf("server signature %s", got)
	}
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	sig := mac(stored)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	if h := sha256.Sum256(clientKey); !hmac.Equal(h[:], stored) {
		t.Error("the RFC's client proof does not match StoredKey")
	}
	if strings.Contains(v, "pencil") {
		t.Error("the verifier contains the password")
	}
}
