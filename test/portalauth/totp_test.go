package portalauth

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

var secretRE = regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`)

// TestTOTP_EnableLoginReplayDisable: the security page makes a secret (shown as base32 and as
// an otpauth URI) that a wrong code does not switch on and a right one does; from then on the
// password alone leaves the session pending (no page opens until the code), the code signs in,
// the same code is refused the next time (replay) while the next step's is taken; switching it
// off needs the password. Catches: TOTP not enforced, a pending session that opens pages, a code
// good twice, a secret stored in the clear or not at all, a disable without the password.
func TestTOTP_EnableLoginReplayDisable(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := w.NewBrokerWith(t, "customer_portal", "emails").Co
	cu := newCustomer(t, w, w.Env, co, "tina")
	b := newBrowser(t, w.Base, nil)
	cu.accept(t, b)
	sec := cu.base + "/security"
	if p := b.get(t, sec); p.status != 200 || !strings.Contains(p.body, "Ausgeschaltet") {
		t.Fatalf("security page: %d\n%s", p.status, p.body)
	}
	checkHeaders(t, "security", b.get(t, sec))

	start := b.submit(t, sec, sec+"/totp", url.Values{"step": {"start"}})
	m := secretRE.FindStringSubmatch(start.body)
	if start.status != 200 || m == nil || !strings.Contains(start.body, "otpauth://totp/") {
		t.Fatalf("start: %d\n%s", start.status, start.body)
	}
	secret := m[1]
	acc := cu.access(t)
	if acc.TotpSecret == nil || strings.Contains(string(*acc.TotpSecret), secret) || acc.TotpEnabledAt != nil {
		t.Fatalf("stored secret: enabled %v", acc.TotpEnabledAt)
	}
	now := step()
	bad := b.submit(t, sec, sec+"/totp", url.Values{"step": {"confirm"}, "code": {totpCode(t, secret, now-5)}})
	if bad.status != 422 || !strings.Contains(bad.body, `id="code-error"`) || cu.access(t).TotpEnabledAt != nil {
		t.Fatalf("wrong code at confirm: %d\n%s", bad.status, bad.body)
	}
	ok := b.submit(t, sec, sec+"/totp", url.Values{"step": {"confirm"}, "code": {totpCode(t, secret, now)}})
	if ok.status != 200 || !strings.Contains(ok.body, "Eingeschaltet seit") || cu.access(t).TotpEnabledAt == nil {
		t.Fatalf("confirm: %d\n%s", ok.status, ok.body)
	}

	// The password alone: pending, nothing opens but the code form.
	b2 := newBrowser(t, w.Base, nil)
	a := cu.login(t, b2, cu.email, cu.password)
	if a.status != 303 || a.location != cu.base+"/login/code" {
		t.Fatalf("login with TOTP: %d %q", a.status, a.location)
	}
	if cu.signedIn(t, b2) {
		t.Fatal("a session with its code due opens the security page")
	}
	// The step confirmed at enrolment was used: its code does not sign in.
	if a := b2.submit(t, cu.base+"/login/code", cu.base+"/login/code", url.Values{"code": {totpCode(t, secret, now)}}); a.status != 422 {
		t.Fatalf("code of the step used at enrolment: %d", a.status)
	}
	next := totpCode(t, secret, now+1)
	if a := b2.submit(t, cu.base+"/login/code", cu.base+"/login/code", url.Values{"code": {next}}); a.status != 303 ||
		a.location != cu.base+"/" {
		t.Fatalf("code: %d %q\n%s", a.status, a.location, a.body)
	}
	if !cu.signedIn(t, b2) {
		t.Fatal("not signed in after the code")
	}
	// Replay: the same code at another sign-in is refused.
	b3 := newBrowser(t, w.Base, nil)
	cu.login(t, b3, cu.email, cu.password)
	if a := b3.submit(t, cu.base+"/login/code", cu.base+"/login/code", url.Values{"code": {next}}); a.status != 422 ||
		!strings.Contains(a.body, "Der Code ist falsch") {
		t.Fatalf("replayed code: %d", a.status)
	}
	if cu.signedIn(t, b3) {
		t.Fatal("signed in with a replayed code")
	}

	// Off: the wrong password keeps it on, the right one switches it off.
	if a := b2.submit(t, sec, sec+"/totp/disable", url.Values{"password": {"nicht das Passwort"}}); a.status != 422 ||
		cu.access(t).TotpEnabledAt == nil {
		t.Fatalf("disable with a wrong password: %d", a.status)
	}
	if a := b2.submit(t, sec, sec+"/totp/disable", url.Values{"password": {cu.password}}); a.status != 200 ||
		!strings.Contains(a.body, "ausgeschaltet") || cu.access(t).TotpEnabledAt != nil {
		t.Fatalf("disable: %d\n%s", a.status, a.body)
	}
	if a := cu.login(t, newBrowser(t, w.Base, nil), cu.email, cu.password); a.location != cu.base+"/" {
		t.Errorf("login after disabling: %d %q", a.status, a.location)
	}
}
