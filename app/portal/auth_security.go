package portal

// The security page: the second factor (TOTP) switched on and off.

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

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
			!passhash.Check(*acc.PasswordHash, password):
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
