package signatures

import (
	"testing"

	"github.com/google/uuid"
)

// TestLinkToken: a token opens its own signer only; a changed byte, another secret or a
// truncated token is refused (the bugs: a link forged for another request, a guessable MAC).
func TestLinkToken(t *testing.T) {
	m := New(Deps{Secret: []byte("0123456789abcdef0123456789abcdef")})
	company, signer := uuid.New(), uuid.New()
	tok := m.linkToken(company, signer)
	if c, s, ok := m.parseLinkToken(tok); !ok || c != company || s != signer {
		t.Fatalf("parse own token: %v %v %v", c, s, ok)
	}
	if m.linkToken(company, signer) != tok {
		t.Error("token not deterministic: a reminder would send a second link")
	}
	b := []byte(tok)
	b[10] ^= 1
	if _, _, ok := m.parseLinkToken(string(b)); ok {
		t.Error("tampered token accepted")
	}
	other := New(Deps{Secret: []byte("another secret of thirty-two b..")})
	if _, _, ok := other.parseLinkToken(tok); ok {
		t.Error("token of another secret accepted")
	}
	if _, _, ok := m.parseLinkToken(tok[:40]); ok {
		t.Error("truncated token accepted")
	}
	if !sameToken(tokenHash(tok), tok) || sameToken(tokenHash(tok), m.linkToken(company, uuid.New())) {
		t.Error("sameToken")
	}
}
