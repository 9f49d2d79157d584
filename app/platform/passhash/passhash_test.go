package passhash

import "testing"

func TestPassword(t *testing.T) {
	h := Hash("correct horse battery")
	if !Check(h, "correct horse battery") {
		t.Errorf("the right password does not match %s", h)
	}
	for _, bad := range []string{"correct horse batter", "", "Correct horse battery"} {
		if Check(h, bad) {
			t.Errorf("%q matches", bad)
		}
	}
	for _, broken := range []string{"", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", "plain", "$argon2id$v=19$m=0,t=2,p=1$c2FsdA$aGFzaA"} {
		if Check(broken, "x") {
			t.Errorf("malformed hash %q matches", broken)
		}
	}
	if Hash("x") == Hash("x") {
		t.Errorf("two hashes of one password are equal: no salt")
	}
}
