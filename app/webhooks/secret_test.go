package webhooks

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestSign_StandardWebhooks: our signature verifies with the Standard Webhooks library, with
// each of two keys, and not for another body, id or timestamp.
func TestSign_StandardWebhooks(t *testing.T) {
	k1, s1 := newSecret()
	k2, s2 := newSecret()
	ts := time.Now()
	body := []byte(`{"id":"e1","type":"lead.created"}`)
	h := http.Header{}
	h.Set(HeaderID, "e1")
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, Sign([][]byte{k1, k2}, "e1", ts, body))
	for _, s := range []string{s1, s2} {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("verify with %s: %v", s[:10], err)
		}
		if err := wh.Verify([]byte(`{"id":"e1","type":"lead.deleted"}`), h); err == nil {
			t.Error("a changed body verifies")
		}
		h2 := h.Clone()
		h2.Set(HeaderID, "e2")
		if err := wh.Verify(body, h2); err == nil {
			t.Error("another id verifies")
		}
	}
}

func TestSealer(t *testing.T) {
	old := bytes.Repeat([]byte{1}, 32)
	cur := bytes.Repeat([]byte{2}, 32)
	co, ep := uuid.New(), uuid.New()
	sOld, _ := NewSealer([][]byte{old})
	sealed := sOld.Seal(co, ep, []byte("secret"))
	if bytes.Contains(sealed, []byte("secret")) {
		t.Fatal("sealed value holds the secret in clear")
	}
	rotated, _ := NewSealer([][]byte{cur, old})
	if got, err := rotated.Open(co, ep, sealed); err != nil || string(got) != "secret" {
		t.Errorf("old value with rotated keys: %q %v", got, err)
	}
	if _, err := rotated.Open(co, uuid.New(), sealed); err == nil {
		t.Error("a value copied to another endpoint opens")
	}
	onlyNew, _ := NewSealer([][]byte{cur})
	if _, err := onlyNew.Open(co, ep, sealed); err != ErrUnsealable {
		t.Errorf("without the old key: %v", err)
	}
	if _, err := ParseSealingKeys("bm90IDMyIGJ5dGVz", nil); err == nil {
		t.Error("a short key is accepted")
	}
}
