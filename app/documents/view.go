package documents

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
)

// View is the Document resource. The blob key is never shown.
type View struct {
	ID          uuid.UUID  `json:"id"`
	ContactID   uuid.UUID  `json:"contactId"`
	ContractID  *uuid.UUID `json:"contractId"`
	Type        string     `json:"type"`
	Filename    string     `json:"filename"`
	ContentType string     `json:"contentType"`
	SizeBytes   int64      `json:"sizeBytes"`
	Sha256      string     `json:"sha256"`
	// ReleasedToCustomer: the customer sees and downloads it in the portal since ReleasedAt
	// (release.go).
	ReleasedToCustomer bool       `json:"releasedToCustomer"`
	ReleasedAt         *time.Time `json:"releasedAt"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`
	owner              *uuid.UUID
}

// EventAbout makes document events user-scoped by the contact and its owner at the time, as
// the contact's own events are.
func (v View) EventAbout() events.About {
	id := v.ContactID
	return events.About{ContactID: &id, OwnerID: v.owner, UserScoped: true}
}

func newView(d *ent.Document, owner *uuid.UUID) View {
	return View{ID: d.ID, ContactID: d.ContactID, ContractID: d.ContractID, Type: string(d.Type), Filename: d.Filename,
		ContentType: d.ContentType, SizeBytes: d.Size, Sha256: d.Sha256, ReleasedToCustomer: d.ReleasedAt != nil,
		ReleasedAt: d.ReleasedAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, owner: owner}
}

// NewView is the Document resource of d for lists and reads (events carry the owner; reads
// need not).
func NewView(d *ent.Document) View { return newView(d, nil) }
