// Package contacts serves /contacts: the people and businesses a brokerage advises, their field
// groups (sensitive ones encrypted at rest), the field catalog and custom field definitions.
// Its Service reads and writes the Contact aggregate (a contact with its phones); handlers build
// the views. Lead conversion uses Create, LockContact, DocOf, SaveWith, Duplicates and CheckPatch.
package contacts

import (
	"bytes"
	"cmp"
	"encoding/json"
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

// View is the Contact resource. Groups holds the field groups the answer carries (the
// selection of `fields`, sensitive ones only for contacts.sensitive:read): an applicable group
// is an object (empty when nothing is stored), a group that does not apply to the contact's
// type is null, a group not selected is absent.
type View struct {
	ID                 uuid.UUID                 `json:"id"`
	Type               string                    `json:"type"`
	FirstName          string                    `json:"firstName"`
	LastName           string                    `json:"lastName"`
	Email              *string                   `json:"email"`
	Phones             []PhoneView               `json:"phones"`
	OwnerID            *uuid.UUID                `json:"ownerId"`
	Tags               []string                  `json:"tags"`
	Labels             []string                  `json:"labels"`
	CustomFields       map[string]any            `json:"customFields"`
	ExternalReferences []schematype.ExternalRef  `json:"externalReferences"`
	CreatedAt          time.Time                 `json:"createdAt"`
	UpdatedAt          time.Time                 `json:"updatedAt"`
	Groups             map[string]map[string]any `json:"-"`
	Version            int64                     `json:"-"`
}

// MarshalJSON writes the fields of v and then its groups in catalog order.
func (v View) MarshalJSON() ([]byte, error) {
	type plain View
	b, err := json.Marshal(plain(v))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, g := range FieldCatalog().GroupNames() {
		vals, ok := v.Groups[g]
		if !ok {
			continue
		}
		gb, err := json.Marshal(vals) // nil map: null
		if err != nil {
			return nil, err
		}
		buf.WriteString(`,"` + g + `":`)
		buf.Write(gb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// PhoneView is one phone number of a contact.
type PhoneView struct {
	ID        uuid.UUID `json:"id"`
	Number    string    `json:"number"`
	Type      string    `json:"type"`
	IsPrimary bool      `json:"isPrimary"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// EventAbout makes contact events user-scoped by the contact and its owner at the time.
func (v View) EventAbout() events.About {
	id := v.ID
	return events.About{ContactID: &id, OwnerID: v.OwnerID, UserScoped: true}
}

// NewView is the Contact resource of c with its phones and every non-sensitive group: what
// events carry (sensitive groups never reach events or logs in clear). Times in UTC whatever
// the session's TimeZone: a list with q reads its rows in text format (tenancy.CustomPlans),
// where PostgreSQL writes them with the session's offset.
func NewView(ct Contact) View {
	c := ct.Contact
	v := View{ID: c.ID, Type: string(c.Type), FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		Phones: []PhoneView{}, OwnerID: c.OwnerID, Tags: c.Tags, Labels: c.Labels, CustomFields: c.CustomFields,
		ExternalReferences: c.ExternalReferences, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		Groups: map[string]map[string]any{}, Version: c.Version}
	if v.ExternalReferences == nil {
		v.ExternalReferences = []schematype.ExternalRef{}
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if v.Labels == nil {
		v.Labels = []string{}
	}
	if v.CustomFields == nil {
		v.CustomFields = map[string]any{}
	}
	cat := FieldCatalog()
	for _, g := range cat.GroupNames() {
		if cat.Sensitive(g) {
			continue
		}
		v.Groups[g] = groupOf(c, g)
	}
	phones := slices.Clone(ct.Phones)
	slices.SortStableFunc(phones, func(a, b *ent.ContactPhone) int { // primary first
		return cmp.Compare(b2i(b.IsPrimary), b2i(a.IsPrimary))
	})
	for _, p := range phones {
		v.Phones = append(v.Phones, NewPhoneView(p))
	}
	return v
}

// groupOf is the stored non-sensitive group g of c: nil when g does not apply to c's type.
func groupOf(c *ent.Contact, g string) map[string]any {
	if !FieldCatalog().Applies(g, string(c.Type)) {
		return nil
	}
	out := map[string]any{}
	for k, val := range c.Groups[g] {
		out[k] = val
	}
	if g == "business" {
		out["companyName"] = c.CompanyName
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
