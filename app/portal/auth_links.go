package portal

// The mailed links: accepting an invitation and resetting the password, both set a new
// password through the same form (setPassword).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portaltoken"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

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

// linkAccess is the access of the link secret of purpose, read without using the link
// (errLinkGone when it is not good).
func (m *Module) linkAccess(c *fiber.Ctx, secret string, purpose portaltoken.Purpose) (*ent.PortalAccess, error) {
	var acc *ent.PortalAccess
	err := m.companyTx(c.UserContext(), companyOf(c).ID, func(ctx context.Context) (err error) {
		_, acc, err = m.linkToken(ctx, secret, purpose, false)
		return err
	})
	return acc, err
}

// passwordPage answers a link's form: the form when the link is good, else the link page.
func (m *Module) passwordPage(c *fiber.Ctx, page, title string, purpose portaltoken.Purpose) error {
	acc, err := m.linkAccess(c, c.Params("token"), purpose)
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
	acc, err := m.linkAccess(c, secret, purpose)
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
	hash := passhash.Hash(password)
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
