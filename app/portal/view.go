package portal

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
)

// AccessView is the PortalAccess resource. The password hash and the TOTP secret never leave
// the service; invitationExpiresAt is the expiry of the newest invitation link (absent before
// the first one and once the access is active or revoked).
type AccessView struct {
	ID                  uuid.UUID  `json:"id"`
	ContactID           uuid.UUID  `json:"contactId"`
	Status              string     `json:"status"`
	Email               string     `json:"email"`
	InvitedAt           time.Time  `json:"invitedAt"`
	InvitationExpiresAt *time.Time `json:"invitationExpiresAt"`
	InvitationsSent     int        `json:"invitationsSent"`
	ActivatedAt         *time.Time `json:"activatedAt"`
	RevokedAt           *time.Time `json:"revokedAt"`
	LastLoginAt         *time.Time `json:"lastLoginAt"`
	TwoFactorEnabled    bool       `json:"twoFactorEnabled"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
}

// EventAbout makes portal_access.* events as visible as the contact.
func (v AccessView) EventAbout() events.About {
	return events.About{ContactID: &v.ContactID, UserScoped: true}
}

// newAccessView is the view of a; expires is the expiry of its newest invitation (nil: none).
func newAccessView(a *ent.PortalAccess, expires *time.Time) AccessView {
	if a.Status != "pending" {
		expires = nil
	}
	return AccessView{ID: a.ID, ContactID: a.ContactID, Status: string(a.Status), Email: a.Email,
		InvitedAt: a.InvitedAt, InvitationExpiresAt: expires, InvitationsSent: a.InvitationsSent,
		ActivatedAt: a.ActivatedAt, RevokedAt: a.RevokedAt, LastLoginAt: a.LastLoginAt,
		TwoFactorEnabled: a.TotpEnabledAt != nil, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// ChangeView is the PortalChangeRequest resource. Changes are the new values by field of the
// kind ("" clears a field); a bank request's IBAN is masked unless the reader may see sensitive
// data (contacts.sensitive:read).
type ChangeView struct {
	ID          uuid.UUID         `json:"id"`
	ContactID   uuid.UUID         `json:"contactId"`
	Kind        string            `json:"kind"`
	Changes     map[string]string `json:"changes"`
	Status      string            `json:"status"`
	Reason      string            `json:"reason"`
	CreatedAt   time.Time         `json:"createdAt"`
	DecidedAt   *time.Time        `json:"decidedAt"`
	DecidedBy   *uuid.UUID        `json:"decidedBy"`
	WithdrawnAt *time.Time        `json:"withdrawnAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
}

// EventAbout makes portal_change_request.* events as visible as the contact.
func (v ChangeView) EventAbout() events.About {
	return events.About{ContactID: &v.ContactID, UserScoped: true}
}

// ChangeView is the view of r; sensitive shows a bank request's IBAN in full (opened from its
// sealed column), otherwise it stays masked. The portal's pages show the customer its own
// request masked too (ChangeView(r, false)).
func (m *Module) ChangeView(r *ent.PortalChangeRequest, sensitive bool) (ChangeView, error) {
	changes := r.Changes
	if sensitive && sealed(r) {
		var err error
		if changes, _, err = m.openChange(r); err != nil {
			return ChangeView{}, err
		}
	}
	if changes == nil {
		changes = map[string]string{}
	}
	return ChangeView{ID: r.ID, ContactID: r.ContactID, Kind: string(r.Kind), Changes: changes,
		Status: string(r.Status), Reason: r.Reason, CreatedAt: r.CreatedAt, DecidedAt: r.DecidedAt,
		DecidedBy: r.DecidedBy, WithdrawnAt: r.WithdrawnAt, UpdatedAt: r.UpdatedAt}, nil
}
