package emails

import (
	"slices"
	"strings"
	"testing"
)

// TestSubjectKey: the subject fallback's key. Catches a prefix left in (a German "AW:" reply
// would open a thread of its own), a word that merely starts like a prefix cut ("Rechnung",
// "Rework", "Awards"), and a key that differs by case or spacing.
func TestSubjectKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Kündigung", "kündigung"},
		{"Re: Kündigung", "kündigung"},
		{"AW: WG: Re[2]:  Kündigung  zum 31.12. ", "kündigung zum 31.12."},
		{"RE : Angebot", "angebot"},
		{"Fwd: Fw: aw: re^3: Angebot", "angebot"},
		{"Antw: SV: VS: TR: Angebot", "angebot"},
		{"Re：Angebot", "angebot"},
		{"Rechnung: offen", "rechnung: offen"},
		{"Rework", "rework"},
		{"Awards: 2026", "awards: 2026"},
		{"Re:", ""},
		{"", ""},
		{"Re[x]: Angebot", "re[x]: angebot"},
	} {
		if got := SubjectKey(c.in); got != c.want {
			t.Errorf("SubjectKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestThreadRefsCandidates: In-Reply-To first, then References newest first, each once.
// Catches reading References oldest first (a reply would join the thread of the conversation's
// first message even when a later one split off) and duplicate lookups.
func TestThreadRefsCandidates(t *testing.T) {
	r := threadRefs{InReplyTo: "c@x", References: []string{"a@x", "b@x", "c@x"}}
	if got, want := r.candidates(), []string{"c@x", "b@x", "a@x"}; !slices.Equal(got, want) {
		t.Errorf("candidates = %v, want %v", got, want)
	}
	r = threadRefs{References: []string{"a@x", "b@x"}}
	if got, want := r.candidates(), []string{"b@x", "a@x"}; !slices.Equal(got, want) {
		t.Errorf("candidates = %v, want %v", got, want)
	}
	if got := (threadRefs{Subject: "x"}).candidates(); len(got) != 0 {
		t.Errorf("candidates without headers = %v, want none", got)
	}
}

// TestStoreHelpers: what makes a hostile message storable. Catches a NUL or invalid UTF-8
// reaching a text column (PostgreSQL refuses it: the sync would stop on that message for
// ever), a synthesized Message-ID that is not stable (a re-sync would store the message
// twice), and a cut inside a rune.
func TestStoreHelpers(t *testing.T) {
	if got := clean("a\x00b\xffc"); got != "ab\uFFFDc" {
		t.Errorf("clean = %q", got)
	}
	raw := []byte("Subject: x\r\n\r\nbody")
	if syntheticID(raw) != syntheticID(append([]byte(nil), raw...)) {
		t.Error("syntheticID differs for the same bytes")
	}
	if syntheticID(raw) == syntheticID([]byte("Subject: y\r\n\r\nbody")) {
		t.Error("syntheticID equal for different messages")
	}
	if got := capRunes("äöü", 2); got != "äö" {
		t.Errorf("capRunes = %q", got)
	}
	if got := capRunes(strings.Repeat("a", 10), 20); len(got) != 10 {
		t.Errorf("capRunes cut a short string: %q", got)
	}
}
