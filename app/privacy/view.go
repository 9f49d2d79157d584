package privacy

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
)

// View is the PrivacyRequest resource.
type View struct {
	ID          uuid.UUID  `json:"id"`
	Type        string     `json:"type"`
	Status      string     `json:"status"`
	ContactID   uuid.UUID  `json:"contactId"`
	OwnerID     *uuid.UUID `json:"ownerId"`
	CreatorID   *uuid.UUID `json:"creatorId"`
	Reason      *string    `json:"reason"`
	RequestedAt time.Time  `json:"requestedAt"`
	// DownloadURL is the export's link. The token is random and only its hash is kept, so the
	// link is in the answer that created the request and nowhere else
	// (docs/decisions/privacy.md "Download link").
	DownloadURL *string        `json:"downloadUrl"`
	ExpiresAt   *time.Time     `json:"expiresAt"`
	Size        *int64         `json:"size"`
	Summary     map[string]int `json:"summary"`
	Error       *string        `json:"error"`
	CompletedAt *time.Time     `json:"completedAt"`
	CreatedAt   time.Time      `json:"createdAt"`
	UpdatedAt   time.Time      `json:"updatedAt"`
}

// NewView is the resource of r, without a download link.
func NewView(r *ent.PrivacyRequest) View {
	v := View{ID: r.ID, Type: string(r.Type), Status: string(r.Status), ContactID: r.ContactID, OwnerID: r.OwnerID,
		CreatorID: r.CreatorID, Reason: r.Reason, RequestedAt: r.RequestedAt, ExpiresAt: r.ExpiresAt, Size: r.Size,
		Summary: r.Summary, CompletedAt: r.CompletedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.Error != "" {
		v.Error = &r.Error
	}
	if len(v.Summary) == 0 {
		v.Summary = nil
	}
	return v
}
