package emailsend

import (
	"encoding/json"
	"testing"
)

// TestPointsCLI: `brokerdesk points grant` adds to the balance a send then draws on, and
// `points balance` shows it. Catches a command not wired into run, a grant replacing the
// balance instead of adding to it, and a balance that does not see the sends' charges.
func TestPointsCLI(t *testing.T) {
	t.Parallel()
	env, _ := setup(t)
	s := newSender(t, env, nil, 0)
	id := s.co.ID.String()
	balance := func(out string) int64 {
		t.Helper()
		var b struct {
			Balance int64 `json:"balance"`
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatalf("printed %q: %v", out, err)
		}
		return b.Balance
	}
	if b := balance(env.CLI(t, "points", "balance", "--company", id, "--json")); b != 0 {
		t.Errorf("balance before any grant %d", b)
	}
	if b := balance(env.CLI(t, "points", "grant", "--company", id, "--points", "3", "--reason", "Testpaket", "--json")); b != 3 {
		t.Errorf("balance after granting 3: %d", b)
	}
	if b := balance(env.CLI(t, "points", "grant", "--company", id, "--points", "2", "--json")); b != 5 {
		t.Errorf("balance after granting 2 more: %d", b)
	}
	s.send(t, env, s.body("kunde@kunde.test", nil))
	if b := balance(env.CLI(t, "points", "balance", "--company", id, "--json")); b != 4 {
		t.Errorf("balance after one send: %d, want 4", b)
	}
	if out := env.CLI(t, "points", "balance", "--company", id); out != "balance 4\n" {
		t.Errorf("plain output %q", out)
	}
}
