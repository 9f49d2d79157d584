// Package portaltest makes customers of the customer portal for the tests (test/portalpages,
// test/portaldb): a contact with an active portal access and a signed-in session, written
// directly, so the pages and the database layer are tested without the sign-in flow.
package portaltest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portalchangerequest"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// CookieName is the portal's session cookie (app/portal session.go).
const CookieName = "bd_portal"

// Customer is a contact signed in to its company's portal.
type Customer struct {
	Company, Contact, Access, Session uuid.UUID
	// Cookie is the session cookie's value; the table holds its SHA-256.
	Cookie string
}

// SignIn gives contact of company an active portal access and a session of it (12 hours), as
// accepting the invitation would, and returns the customer with its cookie.
func SignIn(t testing.TB, env *apitest.Env, company, contact uuid.UUID) Customer {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	c := Customer{Company: company, Contact: contact, Cookie: base64.RawURLEncoding.EncodeToString(b)}
	hash := sha256.Sum256([]byte(c.Cookie))
	now := time.Now()
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		acc, err := db.PortalAccess.Create().SetContactID(contact).SetStatus(portalaccess.StatusActive).
			SetEmail(fmt.Sprintf("kunde-%s@kunde.test", contact)).SetPasswordHash("$argon2id$v=19$m=1,t=1,p=1$x$y").
			SetInvitedAt(now).SetActivatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("portal access: %w", err)
		}
		s, err := db.PortalSession.Create().SetAccessID(acc.ID).SetContactID(contact).SetTokenHash(hash[:]).
			SetCreatedAt(now).SetLastSeenAt(now).SetExpiresAt(now.Add(12 * time.Hour)).Save(ctx)
		if err != nil {
			return fmt.Errorf("portal session: %w", err)
		}
		c.Access, c.Session = acc.ID, s.ID
		return nil
	})
	return c
}

// ChangeRequest stores a pending e-mail change request of c (new address email) and returns its
// id.
func ChangeRequest(t testing.TB, env *apitest.Env, c Customer, email string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	env.InCompany(t, c.Company, func(ctx context.Context, db *ent.Client) error {
		r, err := db.PortalChangeRequest.Create().SetContactID(c.Contact).SetAccessID(c.Access).
			SetKind(portalchangerequest.KindEmail).SetChanges(map[string]string{"email": email}).
			SetBaseline(map[string]string{"email": ""}).Save(ctx)
		if err != nil {
			return fmt.Errorf("change request: %w", err)
		}
		id = r.ID
		return nil
	})
	return id
}
