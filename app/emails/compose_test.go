package emails

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func testModule() *Module {
	return New(Deps{Secret: []byte("compose-test-secret"), PublicURL: "https://bd.example"})
}

// TestToken: a token verifies only unchanged and only for its purpose. Catches a forged or
// edited click token redirecting elsewhere (open redirect) and a pixel token unsubscribing.
func TestToken(t *testing.T) {
	m := testModule()
	tok := token{purpose: purposeClick, company: uuid.New(), email: uuid.New(), value: "https://example.com/a?b=c"}
	s := m.sign(tok)
	got, ok := m.verify(s, purposeClick)
	if !ok || got != tok {
		t.Fatalf("verify(sign(t)) = %+v, %v", got, ok)
	}
	if _, ok := m.verify(s, purposeUnsubscribe); ok {
		t.Error("a click token verified as an unsubscribe token")
	}
	for i := range len(s) {
		b := []byte(s)
		b[i] = 'A' + (b[i]-'A'+1)%26
		if b[i] == s[i] {
			continue
		}
		if _, ok := m.verify(string(b), purposeClick); ok && string(b) != s {
			t.Errorf("token changed at %d still verifies", i)
		}
	}
	other := New(Deps{Secret: []byte("another-secret"), PublicURL: "https://bd.example"})
	if _, ok := other.verify(s, purposeClick); ok {
		t.Error("a token of another secret verified")
	}
	for _, bad := range []string{"", "x", "!!!", strings.Repeat("A", 200)} {
		if _, ok := m.verify(bad, purposeClick); ok {
			t.Errorf("%q verified", bad)
		}
	}
}

// TestTrack: http(s) links go through the redirect, other links (mailto, relative, anchors)
// and the unsubscribe link stay, the rest of the HTML is unchanged, and the pixel sits before
// </body>. Catches a rewrite that breaks the HTML or tracks the unsubscribe link.
func TestTrack(t *testing.T) {
	m := testModule()
	in := `<html><body><p class="x">Hallo &amp; willkommen <a href="https://a.example/x?y=1&amp;z=2">A</a>
<a href="mailto:info@broker.test">M</a> <a href="#top">T</a> <a href="/rel">R</a>
<a HREF=" HTTP://b.example ">B</a> <a href="https://bd.example/u/abc">U</a></p></body></html>`
	out := m.track(in, uuid.New(), uuid.New())
	for _, keep := range []string{`<p class="x">Hallo &amp; willkommen `, `href="mailto:info@broker.test"`, `href="#top"`,
		`href="/rel"`, `href="https://bd.example/u/abc"`} {
		if !strings.Contains(out, keep) {
			t.Errorf("lost %s:\n%s", keep, out)
		}
	}
	if strings.Contains(out, "a.example") || strings.Contains(out, "b.example") {
		t.Errorf("an http(s) link was not rewritten:\n%s", out)
	}
	if n := strings.Count(out, `https://bd.example/t/c/`); n != 2 {
		t.Errorf("%d redirects, want 2:\n%s", n, out)
	}
	if i := strings.Index(out, `.gif" width="1" height="1"`); i < 0 || i > strings.Index(out, "</body>") {
		t.Errorf("pixel not before </body>:\n%s", out)
	}
}

// TestRecipients: the envelope and the price: distinct addresses, compared without case.
func TestRecipients(t *testing.T) {
	o := Outgoing{To: addressesOf([]AddressInput{{Email: strp("A@x.de")}, {Email: strp("b@x.de")}}),
		Cc: addressesOf([]AddressInput{{Email: strp("a@X.de")}}), Bcc: addressesOf([]AddressInput{{Email: strp("c@x.de")}})}
	if got := recipients(o); strings.Join(got, ",") != "A@x.de,b@x.de,c@x.de" {
		t.Errorf("recipients %v", got)
	}
}

func strp(s string) *string { return &s }

// TestRedact: a secret disappears from the stored copy in plain and HTML-escaped form (the bug:
// a signing link with & in its query left readable in the HTML body the API serves).
func TestRedact(t *testing.T) {
	got := redact(`Link: https://x.test/sign/a&b <a href="https://x.test/sign/a&amp;b">hier</a> Code 123456`,
		[]string{"https://x.test/sign/a&b", "123456", ""})
	want := `Link: [entfernt] <a href="[entfernt]">hier</a> Code [entfernt]`
	if got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}
