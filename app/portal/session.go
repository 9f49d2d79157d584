package portal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portalsession"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Sessions: the cookie holds a random secret (32 bytes, base64url); the table its SHA-256. A
// session lives 12 hours from its last use and 7 days at most; revoking the access deletes its
// sessions, and every signed-in request checks the access is still active, so a revoked
// customer's next request answers 401.
const (
	sessionCookie  = "bd_portal"
	sessionIdle    = 12 * time.Hour
	sessionMaxAge  = 7 * 24 * time.Hour
	touchEvery     = time.Minute // last_seen_at is written at most this often
	InvitationTTL  = 7 * 24 * time.Hour
	ResetTTL       = time.Hour
	secretLen      = 32
	maxUserAgent   = 300
	maxAddressText = 64
)

// Session is the signed-in customer of a request.
type Session struct {
	ID        uuid.UUID
	CompanyID uuid.UUID
	ContactID uuid.UUID
	Access    *ent.PortalAccess
	// SecondFactorPending: the password was right, the TOTP code is still due.
	SecondFactorPending bool
}

// newSecret returns a random secret for a cookie or a mailed link, and its SHA-256.
func newSecret() (string, []byte, error) {
	b := make([]byte, secretLen)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	s := base64.RawURLEncoding.EncodeToString(b)
	return s, hashSecret(s), nil
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// companyTx runs fn in a company-level transaction of company on the job pool and commits when
// fn returns nil: the pages before sign-in (login, invitation, reset) reach the database so,
// looking up by e-mail or token within the company. Row-level security and the ent rules apply
// as for a company-level key.
func (m *Module) companyTx(ctx context.Context, company uuid.UUID, fn func(ctx context.Context) error) error {
	return tenancy.CompanyTx(ctx, m.d.DB, company, fn)
}

// StartSession creates a session of access (in the company transaction of ctx) and sets its
// cookie; pending marks a sign-in whose TOTP code is still due. Call it after the password
// (invitation, reset, login) was checked.
func (m *Module) StartSession(c *fiber.Ctx, ctx context.Context, access *ent.PortalAccess, pending bool) error {
	secret, hash, err := newSecret()
	if err != nil {
		return err
	}
	now := m.d.Now()
	ua := c.Get(fiber.HeaderUserAgent)
	if len(ua) > maxUserAgent {
		ua = strings.ToValidUTF8(ua[:maxUserAgent], "")
	}
	ip := m.d.Clients.Addr(c).String()
	if len(ip) > maxAddressText {
		ip = ip[:maxAddressText]
	}
	_, err = tenancy.Client(ctx).PortalSession.Create().SetCompanyID(access.CompanyID).SetAccessID(access.ID).
		SetContactID(access.ContactID).SetTokenHash(hash).SetSecondFactorPending(pending).
		SetCreatedAt(now).SetLastSeenAt(now).SetExpiresAt(now.Add(sessionIdle)).
		SetIP(ip).SetUserAgent(ua).Save(ctx)
	if err != nil {
		return fmt.Errorf("create portal session: %w", err)
	}
	c.Cookie(m.sessionCookie(access.CompanyID, secret, now.Add(sessionMaxAge)))
	return nil
}

// sessionCookie is the cookie of a session of company: HttpOnly, SameSite=Lax (a link from the
// broker's mail opens the portal signed in; a cross-site form post carries no cookie), Secure
// when the service is served over https (PUBLIC_URL), and scoped to the company's portal path,
// so a customer of two brokerages on one deployment holds two independent sessions.
func (m *Module) sessionCookie(company uuid.UUID, value string, expires time.Time) *fiber.Cookie {
	return &fiber.Cookie{Name: sessionCookie, Value: value, Path: m.base(company) + "/", Expires: expires,
		HTTPOnly: true, Secure: m.secure(), SameSite: fiber.CookieSameSiteLaxMode}
}

func (m *Module) secure() bool { return strings.HasPrefix(m.d.PublicURL, "https://") }

// EndSession deletes the session of the request's cookie, if any, and clears the cookie.
func (m *Module) EndSession(c *fiber.Ctx, ctx context.Context, company uuid.UUID) error {
	if v := c.Cookies(sessionCookie); v != "" {
		if _, err := tenancy.Client(ctx).PortalSession.Delete().
			Where(portalsession.TokenHash(hashSecret(v))).Exec(ctx); err != nil {
			return fmt.Errorf("end portal session: %w", err)
		}
	}
	c.Cookie(m.sessionCookie(company, "", time.Unix(0, 0)))
	return nil
}

// RevokeSessions deletes every session of access (DELETE …/portal-access, a password reset) in
// the transaction of ctx.
func RevokeSessions(ctx context.Context, accessID uuid.UUID) error {
	_, err := tenancy.Client(ctx).PortalSession.Delete().Where(portalsession.AccessID(accessID)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("end portal sessions of %s: %w", accessID, err)
	}
	return nil
}

// errNoSession: no cookie, an unknown or expired session, or an access no longer active.
var errNoSession = errors.New("portal: no session")

// errSecondFactor: a session whose TOTP code is still due, on a page that needs it done.
var errSecondFactor = errors.New("portal: second factor due")

// inSession runs fn for the signed-in customer of the request: in one transaction it finds the
// session by its cookie (company-level: the session says which contact), checks the access is
// active, moves last_seen_at and the idle expiry on, and then pins the transaction to the
// contact (tenancy.PinPortal: role brokerdesk_portal, visibility 'portal'); fn's ctx carries
// that pin, so everything fn reads is the contact's only. allowPending lets a session whose
// TOTP code is still due through (the code form). It commits when fn returns nil and answers
// errNoSession when there is no valid session.
func (m *Module) inSession(c *fiber.Ctx, company uuid.UUID, allowPending bool,
	fn func(ctx context.Context, s *Session) error) error {
	v := c.Cookies(sessionCookie)
	if v == "" {
		return errNoSession
	}
	return m.companyTx(c.UserContext(), company, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		now := m.d.Now()
		row, err := db.PortalSession.Query().Where(portalsession.TokenHash(hashSecret(v)),
			portalsession.ExpiresAtGT(now)).Only(ctx)
		if ent.IsNotFound(err) {
			return errNoSession
		}
		if err != nil {
			return fmt.Errorf("portal session: %w", err)
		}
		if row.CreatedAt.Add(sessionMaxAge).Before(now) {
			return errNoSession
		}
		if row.SecondFactorPending && !allowPending {
			return errSecondFactor
		}
		acc, err := db.PortalAccess.Query().Where(portalaccess.ID(row.AccessID),
			portalaccess.StatusEQ(portalaccess.StatusActive)).Only(ctx)
		if ent.IsNotFound(err) {
			return errNoSession
		}
		if err != nil {
			return fmt.Errorf("portal access: %w", err)
		}
		if now.Sub(row.LastSeenAt) >= touchEvery {
			if err := db.PortalSession.UpdateOne(row).SetLastSeenAt(now).SetExpiresAt(now.Add(sessionIdle)).Exec(ctx); err != nil {
				return fmt.Errorf("touch portal session: %w", err)
			}
		}
		pctx, err := tenancy.PinPortal(ctx, row.CompanyID, row.ContactID)
		if err != nil {
			return err
		}
		return fn(pctx, &Session{ID: row.ID, CompanyID: row.CompanyID, ContactID: row.ContactID, Access: acc,
			SecondFactorPending: row.SecondFactorPending})
	})
}
