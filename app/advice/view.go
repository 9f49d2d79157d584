package advice

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
)

// View is the AdviceRecord resource.
type View struct {
	ID             uuid.UUID     `json:"id"`
	ContactID      uuid.UUID     `json:"contactId"`
	ContractID     *uuid.UUID    `json:"contractId"`
	AdvisorID      *uuid.UUID    `json:"advisorId"`
	CreatorID      *uuid.UUID    `json:"creatorId"`
	ConsultedAt    time.Time     `json:"consultedAt"`
	Channel        string        `json:"channel"`
	Subject        string        `json:"subject"`
	CustomerWishes string        `json:"customerWishes"`
	CustomerNeeds  string        `json:"customerNeeds"`
	Advice         string        `json:"advice"`
	Reasons        string        `json:"reasons"`
	Products       []ProductView `json:"products"`
	AdviceWaived   bool          `json:"adviceWaived"`
	Notes          string        `json:"notes"`
	Status         string        `json:"status"`
	LockedAt       *time.Time    `json:"lockedAt"`
	DocumentID     *uuid.UUID    `json:"documentId"`
	CreatedAt      time.Time     `json:"createdAt"`
	UpdatedAt      time.Time     `json:"updatedAt"`
}

// ProductView is a product of an advice record.
type ProductView struct {
	Insurer      string  `json:"insurer"`
	Product      string  `json:"product"`
	ContractType *string `json:"contractType"`
	Premium      *string `json:"premium"`
	Recommended  bool    `json:"recommended"`
	Chosen       bool    `json:"chosen"`
}

// NewView is the AdviceRecord resource of a.
func NewView(a *ent.AdviceRecord) View {
	v := View{ID: a.ID, ContactID: a.ContactID, ContractID: a.ContractID, AdvisorID: a.AdvisorID, CreatorID: a.CreatorID,
		ConsultedAt: a.ConsultedAt, Channel: string(a.Channel), Subject: a.Subject, CustomerWishes: a.CustomerWishes,
		CustomerNeeds: a.CustomerNeeds, Advice: a.Advice, Reasons: a.Reasons, Products: make([]ProductView, len(a.Products)),
		AdviceWaived: a.AdviceWaived, Notes: a.Notes, Status: string(a.Status), LockedAt: a.LockedAt,
		DocumentID: a.DocumentID, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	for i, p := range a.Products {
		pv := ProductView{Insurer: p.Insurer, Product: p.Product, Recommended: p.Recommended, Chosen: p.Chosen}
		if p.ContractType != "" {
			ct := p.ContractType
			pv.ContractType = &ct
		}
		if p.Premium != nil {
			s := p.Premium.String()
			pv.Premium = &s
		}
		v.Products[i] = pv
	}
	return v
}

// EventAbout makes advice record events exactly as visible as the record: through its contact
// (whose owner at the time Record keeps, so the event stays with who saw it).
func (v View) EventAbout() events.About {
	id := v.ContactID
	return events.About{ContactID: &id, UserScoped: true}
}
