package portal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portaltoken"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Feature is the license feature of the portal: portal:write needs it in the policy; the reads
// and decisions (contacts:read, contacts:write) check it here.
const Feature = "customer_portal"

// licensed refuses a credential whose company does not license the portal (403
// feature_not_licensed, as the policy answers for portal:write).
func licensed(ctx context.Context) error {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok {
		return errs.Unauthenticated("missing_credential", "no credential")
	}
	if !p.HasFeature(Feature) {
		return errs.Forbidden("feature_not_licensed", "the company's license does not include the feature %s", Feature)
	}
	return nil
}

// Access is the portal access of a contact with the expiry of its newest invitation.
type Access struct {
	*ent.PortalAccess
	InvitationExpiresAt *time.Time
}

// View is the PortalAccess resource of a.
func (a Access) View() AccessView { return newAccessView(a.PortalAccess, a.InvitationExpiresAt) }

// Get returns the portal access of contact contactID: 404 when the contact is not visible or has
// none (a revoked access is shown, status revoked).
func (s *Service) Get(ctx context.Context, contactID uuid.UUID) (Access, error) {
	if err := licensed(ctx); err != nil {
		return Access{}, err
	}
	a, err := tenancy.Client(ctx).PortalAccess.Query().Where(portalaccess.ContactID(contactID)).Only(ctx)
	if err != nil {
		return Access{}, errs.FromEnt(err, "portal access of contact %s", contactID)
	}
	return s.withExpiry(ctx, a)
}

// withExpiry is a with the expiry of its newest invitation link.
func (s *Service) withExpiry(ctx context.Context, a *ent.PortalAccess) (Access, error) {
	t, err := tenancy.Client(ctx).PortalToken.Query().Where(portaltoken.AccessID(a.ID),
		portaltoken.PurposeEQ(portaltoken.PurposeInvitation)).
		Order(ent.Desc(portaltoken.FieldCreatedAt), ent.Desc(portaltoken.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return Access{PortalAccess: a}, nil
	}
	if err != nil {
		return Access{}, fmt.Errorf("read invitation of portal access %s: %w", a.ID, err)
	}
	exp := t.ExpiresAt
	return Access{PortalAccess: a, InvitationExpiresAt: &exp}, nil
}

// Invite invites contact contactID to the portal, or invites it again: a new access is
// created pending; a pending one gets a new invitation (re-send, the spec), a revoked one
// starts over pending (password and second factor cleared: the customer sets new ones). Every
// earlier unused invitation link of the access stops working: only the newest mail's link
// opens. The invitation goes to in.Email or else the contact's e-mail, stored lower-cased as
// the sign-in name. It records portal_access.invited.
//
// 404 when the contact is not visible; 409 access_active when the access is active, 409
// email_in_use when another contact's access (not revoked) signs in with that address, 409
// mailbox_required when the caller has no mailbox to send from; 422 email_required without a
// usable address.
func (s *Service) Invite(ctx context.Context, contactID uuid.UUID, in InviteInput) (Access, error) {
	m := s.m
	c, err := m.d.Contacts.LockContact(ctx, contactID) // one invitation at a time per contact
	if err != nil {
		return Access{}, err
	}
	db := tenancy.Client(ctx)
	cur, err := db.PortalAccess.Query().Where(portalaccess.ContactID(contactID)).ForUpdate().Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return Access{}, fmt.Errorf("read portal access of contact %s: %w", contactID, err)
	}
	if cur != nil && cur.Status == portalaccess.StatusActive {
		return Access{}, errs.Conflict("access_active", "contact %s has an active portal access; revoke it first", contactID)
	}
	email := strings.ToLower(strings.TrimSpace(ptr.Deref(in.Email)))
	if in.Email == nil {
		email = strings.ToLower(strings.TrimSpace(ptr.Deref(c.Email)))
		if email == "" || !check.ValidEmail(email) {
			return Access{}, errs.InvalidField("email", "email_required",
				"the contact has no usable e-mail address; give one in the body")
		}
	}
	// The sign-in name is unique in the company, whoever sees the contact: another contact's
	// access the caller may not see (an agent's key) takes the name as well.
	var taken bool
	err = tenancy.ReadCompanyWide(ctx, func() (err error) {
		taken, err = db.PortalAccess.Query().Where(portalaccess.Email(email), portalaccess.ContactIDNEQ(contactID),
			portalaccess.StatusNEQ(portalaccess.StatusRevoked)).Exist(ctx)
		return err
	})
	if err != nil {
		return Access{}, fmt.Errorf("check portal sign-in name: %w", err)
	}
	if taken {
		return Access{}, errs.Conflict("email_in_use", "another contact's portal access signs in with %s", email)
	}
	mb, err := senderMailbox(ctx)
	if err != nil {
		return Access{}, err
	}
	now := m.d.Now()
	var a *ent.PortalAccess
	switch {
	case cur == nil:
		a, err = db.PortalAccess.Create().SetContactID(contactID).SetEmail(email).SetInvitedAt(now).
			SetNillableInvitedBy(tenancy.ActingUser(ctx)).SetInvitationsSent(1).Save(ctx)
	default:
		u := cur.Update().SetStatus(portalaccess.StatusPending).SetEmail(email).SetInvitedAt(now).
			SetNillableInvitedBy(tenancy.ActingUser(ctx)).AddInvitationsSent(1)
		if cur.Status == portalaccess.StatusRevoked {
			u.ClearRevokedAt().ClearActivatedAt().ClearPasswordHash().ClearTotpSecret().ClearTotpEnabledAt().
				SetTotpLastStep(0)
		}
		if tenancy.ActingUser(ctx) == nil {
			u.ClearInvitedBy()
		}
		a, err = u.Save(ctx)
	}
	if err != nil {
		return Access{}, fmt.Errorf("save portal access of contact %s: %w", contactID, err)
	}
	if err := expireTokens(ctx, a.ID, now); err != nil {
		return Access{}, err
	}
	secret, hash, err := newSecret()
	if err != nil {
		return Access{}, err
	}
	exp := now.Add(InvitationTTL)
	if _, err := db.PortalToken.Create().SetAccessID(a.ID).SetContactID(contactID).SetPurpose(portaltoken.PurposeInvitation).
		SetTokenHash(hash).SetExpiresAt(exp).SetCreatedAt(now).Save(ctx); err != nil {
		return Access{}, fmt.Errorf("create invitation of portal access %s: %w", a.ID, err)
	}
	if err := m.mailInvitation(ctx, mb, c.Contact, a, secret, exp); err != nil {
		return Access{}, err
	}
	out := Access{PortalAccess: a, InvitationExpiresAt: &exp}
	if err := m.d.Events.Record(ctx, "portal_access.invited", out.View()); err != nil {
		return Access{}, err
	}
	return out, nil
}

// expireTokens marks every unused link of access used (now): a re-sent invitation replaces the
// earlier ones, a revoked access's links open nothing.
func expireTokens(ctx context.Context, accessID uuid.UUID, now time.Time) error {
	err := tenancy.Client(ctx).PortalToken.Update().Where(portaltoken.AccessID(accessID), portaltoken.UsedAtIsNil()).
		SetUsedAt(now).Exec(ctx)
	if err != nil {
		return fmt.Errorf("expire links of portal access %s: %w", accessID, err)
	}
	return nil
}

// Revoke revokes the portal access of contact contactID: status revoked, every session ended at
// once (the next portal request answers 401), every unused link void. It records
// portal_access.revoked. 404 when the contact is not visible, has no access, or it is revoked
// already (nothing left to revoke).
func (s *Service) Revoke(ctx context.Context, contactID uuid.UUID) error {
	db := tenancy.Client(ctx)
	a, err := db.PortalAccess.Query().Where(portalaccess.ContactID(contactID),
		portalaccess.StatusNEQ(portalaccess.StatusRevoked)).ForUpdate().Only(ctx)
	if err != nil {
		return errs.FromEnt(err, "portal access of contact %s", contactID)
	}
	now := s.m.d.Now()
	if a, err = a.Update().SetStatus(portalaccess.StatusRevoked).SetRevokedAt(now).Save(ctx); err != nil {
		return fmt.Errorf("revoke portal access of contact %s: %w", contactID, err)
	}
	if err := RevokeSessions(ctx, a.ID); err != nil {
		return err
	}
	if err := expireTokens(ctx, a.ID, now); err != nil {
		return err
	}
	return s.m.d.Events.Record(ctx, "portal_access.revoked", newAccessView(a, nil))
}
