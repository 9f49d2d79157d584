package portalauth

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/portaltest"
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
	b := portaltest.NewBrowser(t, w.Base, nil)
	cu.accept(t, b)
	sec := cu.base + "/security"
	if p := b.Get(t, sec); p.Status != 200 || !strings.Contains(p.Body, "Ausgeschaltet") {
		t.Fatalf("security page: %d\n%s", p.Status, p.Body)
	}
	checkHeaders(t, "security", b.Get(t, sec))

	start := b.Submit(t, sec, sec+"/totp", url.Values{"step": {"start"}})
	m := secretRE.FindStringSubmatch(start.Body)
	if start.Status != 200 || m == nil || !strings.Contains(start.Body, "otpauth://totp/") {
		t.Fatalf("start: %d\n%s", start.Status, start.Body)
	}
	secret := m[1]
	acc := cu.access(t)
	if acc.TotpSecret == nil || strings.Contains(string(*acc.TotpSecret), secret) || acc.TotpEnabledAt != nil {
		t.Fatalf("stored secret: enabled %v", acc.TotpEnabledAt)
	}
	now := step()
	bad := b.Submit(t, sec, sec+"/totp", url.Values{"step": {"confirm"}, "code": {totpCode(t, secret, now-5)}})
	if bad.Status != 422 || !strings.Contains(bad.Body, `id="code-error"`) || cu.access(t).TotpEnabledAt != nil {
		t.Fatalf("wrong code at confirm: %d\n%s", bad.Status, bad.Body)
	}
	ok := b.Submit(t, sec, sec+"/totp", url.Values{"step": {"confirm"}, "code": {totpCode(t, secret, now)}})
	if ok.Status != 200 || !strings.Contains(ok.Body, "Eingeschaltet seit") || cu.access(t).TotpEnabledAt == nil {
		t.Fatalf("confirm: %d\n%s", ok.Status, ok.Body)
	}

	// The password alone: pending, nothing opens but the code form.
	b2 := portaltest.NewBrowser(t, w.Base, nil)
	a := cu.login(t, b2, cu.email, cu.password)
	if a.Status != 303 || a.Location != cu.base+"/login/code" {
		t.Fatalf("login with TOTP: %d %q", a.Status, a.Location)
	}
	if cu.signedIn(t, b2) {
		t.Fatal("a session with its code due opens the security page")
	}
	// The step confirmed at enrolment was used: its code does not sign in.
	if a := b2.Submit(t, cu.base+"/login/code", cu.base+"/login/code", url.Values{"code": {totpCode(t, secret, now)}}); a.Status != 422 {
		t.Fatalf("code of the step used at enrolment: %d", a.Status)
	}
	next := totpCode(t, secret, now+1)
	if a := b2.Submit(t, cu.base+"/login/code", cu.base+"/login/code", url.Values{"code": {next}}); a.Status != 303 ||
		a.Location != cu.base+"/" {
		t.Fatalf("code: %d %q\n%s", a.Status, a.Location, a.Body)
	}
	if !cu.signedIn(t, b2) {
		t.Fatal("not signed in after the code")
	}
	// Replay: the same code at another sign-in is refused.
	b3 := portaltest.NewBrowser(t, w.Base, nil)
	cu.login(t, b3, cu.email, cu.password)
	if a := b3.Submit(t, cu.base+"/login/code", cu.base+"/login/code", url.Values{"code": {next}}); a.Status != 422 ||
		!strings.Contains(a.Body, "Der Code ist falsch") {
		t.Fatalf("replayed code: %d", a.Status)
	}
	if cu.signedIn(t, b3) {
		t.Fatal("signed in with a replayed code")
	}

	// Off: the wrong password keeps it on, the right one switches it off.
	if a := b2.Submit(t, sec, sec+"/totp/disable", url.Values{"password": {"nicht das Passwort"}}); a.Status != 422 ||
		cu.access(t).TotpEnabledAt == nil {
		t.Fatalf("disable with a wrong password: %d", a.Status)
	}
	if a := b2.Submit(t, sec, sec+"/totp/disable", url.Values{"password": {cu.password}}); a.Status != 200 ||
		!strings.Contains(a.Body, "ausgeschaltet") || cu.access(t).TotpEnabledAt != nil {
		t.Fatalf("disable: %d\n%s", a.Status, a.Body)
	}
	if a := cu.login(t, portaltest.NewBrowser(t, w.Base, nil), cu.email, cu.password); a.Location != cu.base+"/" {
		t.Errorf("login after disabling: %d %q", a.Status, a.Location)
	}
}
