package oauth

import "testing"

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
