package portal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Signing in (docs/decisions/portal.md "Sign-in"): the invitation link sets the first
// password, the login form checks e-mail and password (then the TOTP code when the customer
// switched it on), the reset link sets a new password. Every POST checks the CSRF token first;
// every answer is a page of render (its headers) or a 303 of redirect.

// Password rules: long enough to resist guessing at the throttle's pace, short enough that
// argon2id over it stays cheap; any characters (a passphrase with spaces and umlauts is good).
const (
	minPassword = 10
	maxPassword = 200
	maxEmail    = 320
)

// Messages the pages share.
const (
	msgBadLogin  = "E-Mail-Adresse oder Passwort ist falsch."
	msgBadCode   = "Der Code ist falsch oder abgelaufen. Bitte geben Sie den aktuellen Code aus Ihrer Authenticator-App ein."
	msgLinkTitle = "Link nicht mehr gültig"
	msgLinkGone  = "Dieser Link ist nicht mehr gültig. Bitte wenden Sie sich an Ihren Makler oder fordern Sie ein neues Passwort an."
)

// dummyHash is a hash an unknown e-mail's password is checked against, so that an unknown
// e-mail takes as long as a wrong password (no account enumeration by timing). It holds no
// secret; computed once, on the first sign-in.
var dummyHash = sync.OnceValue(func() string { return passhash.Hash("portal dummy password") })

// errLinkGone: the token of a link is unknown, used, expired, of another company, or its access
// is not in the state the link is for.
var errLinkGone = errors.New("portal: link no longer valid")

func normalEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Page data of the forms.
type (
	loginForm struct{ Email string }
	// passwordForm is the invitation's and the reset's form: Action is its own path, Email the
	// account's sign-in name (for password managers).
	passwordForm struct{ Action, Email string }
	securityData struct {
		Enabled   bool
		EnabledAt string
		// Enrolling: a new secret was made and waits for its first code.
		Enrolling   bool
		Secret, URI string
	}
)

// loginNotice is the status line a redirect to the login form asks for by name (a name only,
// so no link can put words on the page).
func loginNotice(name string) string {
	switch name {
	case "logout":
		return "Sie haben sich abgemeldet."
	}
	return ""
}

// loginPage handles GET /portal/{c}/login.
func (m *Module) loginPage(c *fiber.Ctx) error {
	return m.render(c, fiber.StatusOK, "login", PageData{Title: "Anmelden", Notice: loginNotice(c.Query("notice")),
		Data: loginForm{}})
}

// login handles POST /portal/{c}/login: throttled per (e-mail, sender) and per sender; an
// unknown e-mail, a wrong password and an access not active answer alike and take as long.
func (m *Module) login(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	ctx := c.UserContext()
	email, password := normalEmail(c.FormValue("email")), c.FormValue("password")
	d := PageData{Title: "Anmelden", Data: loginForm{Email: email}}
	th := m.throttleOf(c, pc.ID, "login", email)
	if w := th.wait(ctx); w > 0 {
		return m.tooMany(c, "login", w, d)
	}
	var signedIn, pending bool
	err := m.companyTx(ctx, pc.ID, func(ctx context.Context) error {
		acc, err := m.checkPassword(ctx, email, password)
		if err != nil || acc == nil {
			return err
		}
		pending = acc.TotpEnabledAt != nil
		if !pending {
			if err := tenancy.Client(ctx).PortalAccess.UpdateOne(acc).SetLastLoginAt(m.d.Now()).Exec(ctx); err != nil {
				return fmt.Errorf("portal login of %s: %w", acc.ID, err)
			}
		}
		if err := m.EndSession(c, ctx, pc.ID); err != nil { // the browser's previous session, if any
			return err
		}
		signedIn = true
		return m.StartSession(c, ctx, acc, pending)
	})
	if err != nil {
		return err
	}
	if !signedIn {
		th.fail(ctx)
		d.AddError("email", msgBadLogin)
		return m.render(c, fiber.StatusUnauthorized, "login", d)
	}
	if pending {
		return m.redirect(c, "/login/code")
	}
	return m.redirect(c, "/")
}

// checkPassword returns the active access of email when password is its password, else nil.
// Whatever the outcome, exactly one argon2id derivation runs.
func (m *Module) checkPassword(ctx context.Context, email, password string) (*ent.PortalAccess, error) {
	if email == "" || len(email) > maxEmail || utf8.RuneCountInString(password) > maxPassword {
		passhash.Check(dummyHash(), password[:min(len(password), 4*maxPassword)])
		return nil, nil
	}
	acc, err := tenancy.Client(ctx).PortalAccess.Query().
		Where(portalaccess.Email(email), portalaccess.StatusEQ(portalaccess.StatusActive)).Only(ctx)
	if ent.IsNotFound(err) || (err == nil && acc.PasswordHash == nil) {
		passhash.Check(dummyHash(), password)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("portal login: read access: %w", err)
	}
	if !passhash.Check(*acc.PasswordHash, password) {
		return nil, nil
	}
	return acc, nil
}

// codePage handles GET /portal/{c}/login/code: the TOTP form of a session whose code is due.
func (m *Module) codePage(c *fiber.Ctx) error {
	pc := companyOf(c)
	var done bool
	err := m.inSession(c, pc.ID, true, func(_ context.Context, s *Session) error {
		done = !s.SecondFactorPending
		return nil
	})
	if errors.Is(err, errNoSession) {
		return m.redirect(c, "/login")
	}
	if err != nil {
		return err
	}
	if done {
		return m.redirect(c, "/")
	}
	return m.render(c, fiber.StatusOK, "code", PageData{Title: "Bestätigungscode"})
}

// code handles POST /portal/{c}/login/code: an RFC 6238 code of the access's secret, each step
// once; failures throttled per (access, sender) and per sender.
func (m *Module) code(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	ctx := c.UserContext()
	code := strings.TrimSpace(strings.ReplaceAll(c.FormValue("code"), " ", ""))
	d := PageData{Title: "Bestätigungscode"}
	var th throttle
	var refused, done bool
	var wait time.Duration
	err := m.inSession(c, pc.ID, true, func(ctx context.Context, s *Session) error {
		if !s.SecondFactorPending {
			done = true
			return nil
		}
		th = m.throttleOf(c, pc.ID, "code", s.Access.ID.String())
		if wait = th.wait(ctx); wait > 0 {
			return nil
		}
		ok, err := m.acceptCode(ctx, s, code)
		if err != nil || !ok {
			refused = true
			return err
		}
		db := tenancy.Client(ctx)
		if err := db.PortalSession.UpdateOneID(s.ID).SetSecondFactorPending(false).Exec(ctx); err != nil {
			return fmt.Errorf("portal session %s: second factor: %w", s.ID, err)
		}
		if err := db.PortalAccess.UpdateOneID(s.Access.ID).SetLastLoginAt(m.d.Now()).Exec(ctx); err != nil {
			return fmt.Errorf("portal login of %s: %w", s.Access.ID, err)
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoSession):
		return m.redirect(c, "/login")
	case err != nil:
		return err
	case done:
		return m.redirect(c, "/")
	case wait > 0:
		return m.tooMany(c, "code", wait, d)
	case refused:
		th.fail(ctx)
		d.AddError("code", msgBadCode)
		return m.render(c, fiber.StatusUnprocessableEntity, "code", d)
	}
	return m.redirect(c, "/")
}

// acceptCode checks code against the TOTP secret of s's access and, when it is good, records
// its step as used, in one conditional update: of two requests with the same code one wins.
func (m *Module) acceptCode(ctx context.Context, s *Session, code string) (bool, error) {
	acc := s.Access
	if storedTOTP(acc) == nil {
		return false, nil
	}
	key, err := openTOTP(m.d.Keys, acc.CompanyID, acc.ID, storedTOTP(acc))
	if err != nil {
		return false, err
	}
	step, ok := totpCheck(key, code, m.d.Now(), acc.TotpLastStep)
	if !ok {
		return false, nil
	}
	n, err := tenancy.Client(ctx).PortalAccess.Update().
		Where(portalaccess.ID(acc.ID), portalaccess.TotpLastStepLT(step)).SetTotpLastStep(step).Save(ctx)
	if err != nil {
		return false, fmt.Errorf("portal access %s: totp step: %w", acc.ID, err)
	}
	return n == 1, nil
}

// logout handles POST /portal/{c}/logout: ends the session of the cookie (whatever state it
// is in) and shows the login form with a notice.
func (m *Module) logout(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	if err := m.companyTx(c.UserContext(), pc.ID, func(ctx context.Context) error {
		return m.EndSession(c, ctx, pc.ID)
	}); err != nil {
		return err
	}
	return m.redirect(c, "/login?notice=logout")
}
