// Package contacts holds the people and businesses a brokerage advises. For now it is the
// minimal service lead conversion needs (create, read, match, merge); the contacts issue adds
// the /contacts routes and the field groups.
package contacts

import (
	"cmp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Contact types.
const (
	TypePrivate  = "private"
	TypeBusiness = "business"
)

// Phone types. The spec does not list them; these are the ones lead conversion produces.
const (
	PhoneMobile   = "mobile"
	PhoneLandline = "landline"
	PhoneFax      = "fax"
	PhoneOther    = "other"
)

// PhoneTypes are the allowed phone types.
var PhoneTypes = []string{PhoneMobile, PhoneLandline, PhoneFax, PhoneOther}

// View is the Contact resource (the fields that exist so far).
type View struct {
	ID                 uuid.UUID                `json:"id"`
	Type               string                   `json:"type"`
	FirstName          string                   `json:"firstName"`
	LastName           string                   `json:"lastName"`
	Business           *BusinessView            `json:"business"`
	Email              *string                  `json:"email"`
	Phones             []PhoneView              `json:"phones"`
	OwnerID            *uuid.UUID               `json:"ownerId"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	CreatedAt          time.Time                `json:"createdAt"`
	UpdatedAt          time.Time                `json:"updatedAt"`
}

// BusinessView is the business group of a business contact; private contacts have none.
type BusinessView struct {
	CompanyName string `json:"companyName"`
}

// PhoneView is one phone number of a contact.
type PhoneView struct {
	ID        uuid.UUID `json:"id"`
	Number    string    `json:"number"`
	Type      string    `json:"type"`
	IsPrimary bool      `json:"isPrimary"`
}

// EventAbout makes contact events user-scoped by the contact and its owner at the time.
func (v View) EventAbout() events.About {
	id := v.ID
	return events.About{ContactID: &id, OwnerID: v.OwnerID, UserScoped: true}
}

// NewView is the Contact resource of c with its phones.
func NewView(c *ent.Contact, phones []*ent.ContactPhone) View {
	v := View{ID: c.ID, Type: string(c.Type), FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		Phones: []PhoneView{}, OwnerID: c.OwnerID, ExternalReferences: c.ExternalReferences,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.Type == TypeBusiness {
		v.Business = &BusinessView{CompanyName: c.CompanyName}
	}
	if v.ExternalReferences == nil {
		v.ExternalReferences = []schematype.ExternalRef{}
	}
	phones = slices.Clone(phones)
	slices.SortStableFunc(phones, func(a, b *ent.ContactPhone) int { // primary first
		return cmp.Compare(b2i(b.IsPrimary), b2i(a.IsPrimary))
	})
	for _, p := range phones {
		v.Phones = append(v.Phones, PhoneView{ID: p.ID, Number: p.Number, Type: p.Type, IsPrimary: p.IsPrimary})
	}
	return v
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
