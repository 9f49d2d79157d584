// Package contracts serves /contracts: the insurance contracts of a company's contacts, the
// insurer catalog (/insurers) and the contract types (/contract-types, the GDV Sparten).
package contracts

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// InsurerView is an Insurer of the catalog.
type InsurerView struct {
	ID       uuid.UUID `json:"id"`
	VUNumber string    `json:"vuNumber"`
	Name     string    `json:"name"`
}

func newInsurerView(i *ent.Insurer) InsurerView {
	return InsurerView{ID: i.ID, VUNumber: i.VuNumber, Name: i.Name}
}

// TypeView is a contract type: a GDV Sparte with its labels.
type TypeView struct {
	Code    string `json:"code"`
	Label   string `json:"label"`
	LabelEn string `json:"labelEn"`
}

// View is the Contract resource.
type View struct {
	ID                 uuid.UUID                `json:"id"`
	ContactID          uuid.UUID                `json:"contactId"`
	InsurerID          uuid.UUID                `json:"insurerId"`
	Insurer            InsurerView              `json:"insurer"`
	PolicyNumber       string                   `json:"policyNumber"`
	Type               string                   `json:"type"`
	TypeLabel          string                   `json:"typeLabel"`
	Status             string                   `json:"status"`
	StatusCode         *string                  `json:"statusCode"`
	StartDate          *string                  `json:"startDate"`
	EndDate            *string                  `json:"endDate"`
	MainRenewalDate    *string                  `json:"mainRenewalDate"`
	Premium            *schematype.Money        `json:"premium"`
	PaymentFrequency   *string                  `json:"paymentFrequency"`
	AnnualPremium      *schematype.Money        `json:"annualPremium"`
	OwnerID            *uuid.UUID               `json:"ownerId"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences"`
	Source             *schematype.ImportSource `json:"source"`
	Details            []map[string]any         `json:"details"`
	CreatedAt          time.Time                `json:"createdAt"`
	UpdatedAt          time.Time                `json:"updatedAt"`

	// contactOwner is the owner of the contact at the time of an event (Service.record).
	contactOwner *uuid.UUID
}

// EventAbout makes contract events user-scoped like the contact's: about the contact (while
// it exists) and its owner at the time, so a contract.deleted stays visible to the contact's
// owner after the contact went with it.
func (v View) EventAbout() events.About {
	id := v.ContactID
	return events.About{ContactID: &id, OwnerID: v.contactOwner, UserScoped: true}
}

// Contract is a stored contract as the service returns it: its insurer loaded
// (Edges.Insurer).
type Contract struct{ *ent.Contract }

// View is the Contract resource of c.
func (c Contract) View() View { return NewView(c.Contract) }

// NewView is the Contract resource of c, whose insurer is loaded.
func NewView(c *ent.Contract) View {
	date := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.Format(dateLayout)
		return &s
	}
	sp, _ := gdv.Sparte(c.Type)
	v := View{ID: c.ID, ContactID: c.ContactID, InsurerID: c.InsurerID, Insurer: newInsurerView(c.Edges.Insurer),
		PolicyNumber: c.PolicyNumber, Type: c.Type, TypeLabel: sp.De, Status: string(c.Status),
		StartDate: date(c.StartDate), EndDate: date(c.EndDate), MainRenewalDate: date(c.MainRenewalDate),
		Premium: c.Premium, AnnualPremium: c.AnnualPremium, OwnerID: c.OwnerID,
		ExternalReferences: c.ExternalReferences, Source: c.Source, Details: c.Details,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.StatusCode != "" {
		s := c.StatusCode
		v.StatusCode = &s
	}
	if c.PaymentFrequency != nil {
		s := string(*c.PaymentFrequency)
		v.PaymentFrequency = &s
	}
	if v.ExternalReferences == nil {
		v.ExternalReferences = []schematype.ExternalRef{}
	}
	if v.Details == nil {
		v.Details = []map[string]any{}
	}
	return v
}
