package portal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/oauth"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portaltoken"
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
var dummyHash = sync.OnceValue(func() string { return oauth.HashPassword("portal dummy password") })

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
		oauth.CheckPassword(dummyHash(), password[:min(len(password), 4*maxPassword)])
		return nil, nil
	}
	acc, err := tenancy.Client(ctx).PortalAccess.Query().
		Where(portalaccess.Email(email), portalaccess.StatusEQ(portalaccess.StatusActive)).Only(ctx)
	if ent.IsNotFound(err) || (err == nil && acc.PasswordHash == nil) {
		oauth.CheckPassword(dummyHash(), password)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("portal login: read access: %w", err)
	}
	if !oauth.CheckPassword(*acc.PasswordHash, password) {
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

// linkToken finds the token of a mailed link (secret, purpose) in the company transaction of
// ctx: unused, unexpired, and its access pending (an invitation) or active (a reset); with
// lock, the token row is locked (FOR UPDATE: of two posts of one link, the second waits and then
// no longer finds it unused). Anything else is errLinkGone.
func (m *Module) linkToken(ctx context.Context, secret string, purpose portaltoken.Purpose, lock bool) (*ent.PortalToken,
	*ent.PortalAccess, error) {
	if secret == "" || len(secret) > 100 {
		return nil, nil, errLinkGone
	}
	db := tenancy.Client(ctx)
	q := db.PortalToken.Query().Where(portaltoken.TokenHash(hashSecret(secret)), portaltoken.PurposeEQ(purpose),
		portaltoken.UsedAtIsNil(), portaltoken.ExpiresAtGT(m.d.Now()))
	if lock {
		q = q.ForUpdate()
	}
	tok, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil, errLinkGone
	}
	if err != nil {
		return nil, nil, fmt.Errorf("portal link: %w", err)
	}
	want := portalaccess.StatusActive
	if purpose == portaltoken.PurposeInvitation {
		want = portalaccess.StatusPending
	}
	acc, err := db.PortalAccess.Query().Where(portalaccess.ID(tok.AccessID), portalaccess.StatusEQ(want)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil, errLinkGone
	}
	if err != nil {
		return nil, nil, fmt.Errorf("portal link: access: %w", err)
	}
	return tok, acc, nil
}

// useLinks marks every unused link of purpose of acc used: accepting one invitation (or reset)
// voids the others mailed before.
func (m *Module) useLinks(ctx context.Context, acc *ent.PortalAccess, purpose portaltoken.Purpose) error {
	_, err := tenancy.Client(ctx).PortalToken.Update().Where(portaltoken.AccessID(acc.ID), portaltoken.PurposeEQ(purpose),
		portaltoken.UsedAtIsNil()).SetUsedAt(m.d.Now()).Save(ctx)
	if err != nil {
		return fmt.Errorf("portal links of %s: %w", acc.ID, err)
	}
	return nil
}

// linkGone is the one page of every link that no longer works, whatever the reason: 410.
func (m *Module) linkGone(c *fiber.Ctx) error {
	return m.render(c, fiber.StatusGone, "message", PageData{Title: msgLinkTitle, Notice: msgLinkGone})
}

// checkNewPassword puts the form's errors about a new password on d.
func checkNewPassword(d *PageData, password, repeat, email string) {
	n := utf8.RuneCountInString(password)
	switch {
	case password == "":
		d.AddError("password", "Bitte geben Sie ein Passwort ein.")
	case n < minPassword:
		d.AddError("password", fmt.Sprintf("Das Passwort muss mindestens %d Zeichen lang sein.", minPassword))
	case n > maxPassword:
		d.AddError("password", fmt.Sprintf("Das Passwort darf höchstens %d Zeichen lang sein.", maxPassword))
	case !utf8.ValidString(password) || strings.ContainsAny(password, "\x00\r\n"):
		d.AddError("password", "Das Passwort enthält ungültige Zeichen.")
	case strings.EqualFold(strings.TrimSpace(password), email):
		d.AddError("password", "Das Passwort darf nicht Ihre E-Mail-Adresse sein.")
	}
	if len(d.Errors) == 0 && password != repeat {
		d.AddError("repeat", "Die beiden Passwörter stimmen nicht überein.")
	}
}

// passwordPage answers a link's form: the form when the link is good, else the link page.
func (m *Module) passwordPage(c *fiber.Ctx, page, title string, purpose portaltoken.Purpose) error {
	pc := companyOf(c)
	secret := c.Params("token")
	var acc *ent.PortalAccess
	err := m.companyTx(c.UserContext(), pc.ID, func(ctx context.Context) (err error) {
		_, acc, err = m.linkToken(ctx, secret, purpose, false)
		return err
	})
	if errors.Is(err, errLinkGone) {
		return m.linkGone(c)
	}
	if err != nil {
		return err
	}
	return m.render(c, fiber.StatusOK, page, PageData{Title: title,
		Data: passwordForm{Action: c.Path(), Email: acc.Email}})
}

// setPassword is the POST of a link's form: the new password checked (422 with the form
// again), hashed outside the transaction, then the link locked and used and done applied
// (the access updated, the session started) in one transaction.
func (m *Module) setPassword(c *fiber.Ctx, page, title string, purpose portaltoken.Purpose,
	done func(ctx context.Context, acc *ent.PortalAccess, hash string) (string, error)) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	secret := strings.Clone(c.Params("token"))
	password, repeat := c.FormValue("password"), c.FormValue("repeat")
	var acc *ent.PortalAccess
	err := m.companyTx(c.UserContext(), pc.ID, func(ctx context.Context) (err error) {
		_, acc, err = m.linkToken(ctx, secret, purpose, false)
		return err
	})
	if errors.Is(err, errLinkGone) {
		return m.linkGone(c)
	}
	if err != nil {
		return err
	}
	d := PageData{Title: title, Data: passwordForm{Action: c.Path(), Email: acc.Email}}
	if checkNewPassword(&d, password, repeat, acc.Email); len(d.Errors) > 0 {
		return m.render(c, fiber.StatusUnprocessableEntity, page, d)
	}
	hash := oauth.HashPassword(password)
	var next string
	err = m.companyTx(c.UserContext(), pc.ID, func(ctx context.Context) error {
		_, acc, err := m.linkToken(ctx, secret, purpose, true)
		if err != nil {
			return err
		}
		if err := m.useLinks(ctx, acc, purpose); err != nil {
			return err
		}
		next, err = done(ctx, acc, hash)
		return err
	})
	if errors.Is(err, errLinkGone) {
		return m.linkGone(c)
	}
	if err != nil {
		return err
	}
	return m.redirect(c, next)
}

// invitationPage handles GET /portal/{c}/invitation/{token}.
func (m *Module) invitationPage(c *fiber.Ctx) error {
	return m.passwordPage(c, "invitation", "Willkommen im Kundenportal", portaltoken.PurposeInvitation)
}

// acceptInvitation handles POST /portal/{c}/invitation/{token}: the first password; the access
// becomes active (portal_access.activated) and the customer is signed in.
func (m *Module) acceptInvitation(c *fiber.Ctx) error {
	return m.setPassword(c, "invitation", "Willkommen im Kundenportal", portaltoken.PurposeInvitation,
		func(ctx context.Context, acc *ent.PortalAccess, hash string) (string, error) {
			now := m.d.Now()
			// Conditional on pending: a revocation that committed meanwhile wins.
			n, err := tenancy.Client(ctx).PortalAccess.Update().
				Where(portalaccess.ID(acc.ID), portalaccess.StatusEQ(portalaccess.StatusPending)).
				SetStatus(portalaccess.StatusActive).SetPasswordHash(hash).SetActivatedAt(now).SetLastLoginAt(now).
				Save(ctx)
			if err != nil {
				return "", fmt.Errorf("activate portal access %s: %w", acc.ID, err)
			}
			if n != 1 {
				return "", errLinkGone
			}
			active, err := tenancy.Client(ctx).PortalAccess.Get(ctx, acc.ID)
			if err != nil {
				return "", fmt.Errorf("read portal access %s: %w", acc.ID, err)
			}
			if err := m.d.Events.Record(ctx, "portal_access.activated", newAccessView(active, nil)); err != nil {
				return "", err
			}
			return "/", m.StartSession(c, ctx, active, false)
		})
}

// resetRequestPage handles GET /portal/{c}/reset.
func (m *Module) resetRequestPage(c *fiber.Ctx) error {
	return m.render(c, fiber.StatusOK, "reset_request", PageData{Title: "Passwort vergessen", Data: loginForm{}})
}

// requestReset handles POST /portal/{c}/reset: whether or not the address has an account, the
// same page; an active access gets a link valid ResetTTL. Every request counts in the throttle.
func (m *Module) requestReset(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	ctx := c.UserContext()
	email := normalEmail(c.FormValue("email"))
	d := PageData{Title: "Passwort vergessen", Data: loginForm{Email: email}}
	if email == "" || len(email) > maxEmail || !strings.Contains(email, "@") {
		d.AddError("email", "Bitte geben Sie die E-Mail-Adresse ein, mit der Sie sich anmelden.")
		return m.render(c, fiber.StatusUnprocessableEntity, "reset_request", d)
	}
	th := m.throttleOf(c, pc.ID, "reset", email)
	if w := th.wait(ctx); w > 0 {
		return m.tooMany(c, "reset_request", w, d)
	}
	th.fail(ctx)
	if err := m.companyTx(ctx, pc.ID, func(ctx context.Context) error { return m.mailReset(ctx, pc, email) }); err != nil {
		return err
	}
	return m.render(c, fiber.StatusOK, "message", PageData{Title: "E-Mail unterwegs",
		Notice: "Wenn es zu dieser E-Mail-Adresse ein Konto gibt, haben wir Ihnen einen Link geschickt, " +
			"mit dem Sie ein neues Passwort festlegen. Der Link gilt eine Stunde."})
}

// resetPage handles GET /portal/{c}/reset/{token}.
func (m *Module) resetPage(c *fiber.Ctx) error {
	return m.passwordPage(c, "reset", "Neues Passwort festlegen", portaltoken.PurposePasswordReset)
}

// reset handles POST /portal/{c}/reset/{token}: the new password; every session of the access
// ends and this browser gets a new one, whose TOTP code is still due when TOTP is on (the
// mailbox alone does not pass the second factor).
func (m *Module) reset(c *fiber.Ctx) error {
	return m.setPassword(c, "reset", "Neues Passwort festlegen", portaltoken.PurposePasswordReset,
		func(ctx context.Context, acc *ent.PortalAccess, hash string) (string, error) {
			if err := tenancy.Client(ctx).PortalAccess.UpdateOne(acc).SetPasswordHash(hash).Exec(ctx); err != nil {
				return "", fmt.Errorf("portal access %s: new password: %w", acc.ID, err)
			}
			if err := RevokeSessions(ctx, acc.ID); err != nil {
				return "", err
			}
			pending := acc.TotpEnabledAt != nil
			if err := m.StartSession(c, ctx, acc, pending); err != nil {
				return "", err
			}
			if pending {
				return "/login/code", nil
			}
			return "/", nil
		})
}

// securityPage handles GET /portal/{c}/security: whether TOTP is on.
func (m *Module) securityPage(c *fiber.Ctx) error {
	return m.signedIn(c, func(_ context.Context, s *Session) error {
		d, err := m.securityData(s.Access, companyOf(c).Name)
		if err != nil {
			return err
		}
		return m.render(c, fiber.StatusOK, "security", PageData{Title: "Sicherheit", SignedIn: true, Nav: "security", Data: d})
	})
}

// securityData is what the security page shows of acc: TOTP on (since when), or a secret
// waiting for its first code (enrolment), or off.
func (m *Module) securityData(acc *ent.PortalAccess, issuer string) (securityData, error) {
	if acc.TotpEnabledAt != nil {
		return securityData{Enabled: true, EnabledAt: acc.TotpEnabledAt.In(httpx.Berlin).Format("02.01.2006")}, nil
	}
	if storedTOTP(acc) == nil {
		return securityData{}, nil
	}
	key, err := openTOTP(m.d.Keys, acc.CompanyID, acc.ID, storedTOTP(acc))
	if err != nil {
		return securityData{}, err
	}
	return securityData{Enrolling: true, Secret: totpEncoding.EncodeToString(key), URI: totpURI(key, issuer, acc.Email)}, nil
}

// enableTOTP handles POST /portal/{c}/security/totp: step "start" makes a new secret and stores
// it sealed, not yet enabled (the page shows it); step "confirm" enables it with a code of it.
func (m *Module) enableTOTP(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		acc := s.Access
		d := PageData{Title: "Sicherheit", SignedIn: true, Nav: "security"}
		db := tenancy.Client(ctx)
		status := fiber.StatusOK
		switch {
		case acc.TotpEnabledAt != nil:
			d.Notice = "Die Anmeldung mit Bestätigungscode ist bereits eingeschaltet."
		case c.FormValue("step") == "confirm" && storedTOTP(acc) != nil:
			ok, err := m.acceptCode(ctx, s, strings.ReplaceAll(c.FormValue("code"), " ", ""))
			if err != nil {
				return err
			}
			if !ok {
				status = fiber.StatusUnprocessableEntity
				d.AddError("code", msgBadCode)
				break
			}
			now := m.d.Now()
			if acc, err = db.PortalAccess.UpdateOneID(acc.ID).SetTotpEnabledAt(now).Save(ctx); err != nil {
				return fmt.Errorf("portal access %s: enable totp: %w", acc.ID, err)
			}
			d.Notice = "Die Anmeldung mit Bestätigungscode ist eingeschaltet. Ab jetzt fragen wir nach dem Passwort auch nach einem Code."
		default:
			key, err := newTOTPKey()
			if err != nil {
				return err
			}
			sealed, err := sealTOTP(m.d.Keys, acc.CompanyID, acc.ID, key)
			if err != nil {
				return err
			}
			if acc, err = db.PortalAccess.UpdateOneID(acc.ID).SetTotpSecret(sealed).Save(ctx); err != nil {
				return fmt.Errorf("portal access %s: new totp secret: %w", acc.ID, err)
			}
		}
		sd, err := m.securityData(acc, pc.Name)
		if err != nil {
			return err
		}
		d.Data = sd
		return m.render(c, status, "security", d)
	})
}

// disableTOTP handles POST /portal/{c}/security/totp/disable: with the account's password (a
// session left open on a shared computer does not switch the second factor off), throttled
// like the login.
func (m *Module) disableTOTP(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	pc := companyOf(c)
	password := c.FormValue("password")
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		acc := s.Access
		d := PageData{Title: "Sicherheit", SignedIn: true, Nav: "security"}
		th := m.throttleOf(c, pc.ID, "disable", acc.ID.String())
		status := fiber.StatusOK
		switch {
		case acc.TotpEnabledAt == nil:
		case th.wait(ctx) > 0:
			d.AddError("password", "Zu viele Versuche. Bitte versuchen Sie es später erneut.")
			status = fiber.StatusTooManyRequests
		case acc.PasswordHash == nil || utf8.RuneCountInString(password) > maxPassword ||
			!oauth.CheckPassword(*acc.PasswordHash, password):
			th.fail(ctx)
			d.AddError("password", "Das Passwort ist falsch.")
			status = fiber.StatusUnprocessableEntity
		default:
			var err error
			if acc, err = tenancy.Client(ctx).PortalAccess.UpdateOneID(acc.ID).ClearTotpSecret().ClearTotpEnabledAt().
				Save(ctx); err != nil {
				return fmt.Errorf("portal access %s: disable totp: %w", acc.ID, err)
			}
			d.Notice = "Die Anmeldung mit Bestätigungscode ist ausgeschaltet."
		}
		sd, err := m.securityData(acc, pc.Name)
		if err != nil {
			return err
		}
		d.Data = sd
		return m.render(c, status, "security", d)
	})
}
