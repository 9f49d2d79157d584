package oauth

import "testing"

func TestPassword(t *testing.T) {
	h := HashPassword("correct horse battery")
	if !CheckPassword(h, "correct horse battery") {
		t.Errorf("the right password does not match %s", h)
	}
	for _, bad := range []string{"correct horse batter", "", "Correct horse battery"} {
		if CheckPassword(h, bad) {
			t.Errorf("%q matches", bad)
		}
	}
	for _, broken := range []string{"", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", "plain", "$argon2id$v=19$m=0,t=2,p=1$c2FsdA$aGFzaA"} {
		if CheckPassword(broken, "x") {
			t.Errorf("malformed hash %q matches", broken)
		}
	}
	if HashPassword("x") == HashPassword("x") {
		t.Errorf("two hashes of one password are equal: no salt")
	}
}

func TestLanguageAndLabels(t *testing.T) {
	for accept, want := range map[string]string{"": "de", "en-US,en;q=0.9": "en", "de-DE": "de", "fr": "de", "fr, en;q=0.5": "en"} {
		if got := pickLanguage(accept); got != want {
			t.Errorf("pickLanguage(%q) = %s, want %s", accept, got, want)
		}
	}
	for _, c := range []struct{ scope, lang, want string }{
		{"contacts:read", "de", "Kontakte lesen"}, {"contacts:write", "en", "read and change contacts"},
		{"unknown:read", "en", "unknown:read"},
	} {
		if got := ScopeLabel(c.scope, c.lang); got != c.want {
			t.Errorf("ScopeLabel(%s, %s) = %q, want %q", c.scope, c.lang, got, c.want)
		}
	}
}
