package contacts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
)

// Field bounds (characters; names, e-mail and phone numbers are check's, shared with leads).
const (
	MaxCompanyName = 200
	MaxPhones      = 10
)

// Fields are the top-level contact fields Doc.check validates one by one (the groups go by the
// catalog). A nil field was not given.
type Fields struct {
	FirstName *string
	LastName  *string
	Email     *string
	Phones    []PhoneInput
	OwnerID   *string
}

// PhoneInput is one phone number of a contact's body.
type PhoneInput struct {
	Number    string  `json:"number"`
	Type      *string `json:"type"`
	IsPrimary bool    `json:"isPrimary"`
}

// Check adds every invalid field of f to v, each named prefix + its JSON name.
func (f *Fields) Check(v *errs.Invalid, prefix string) {
	if f == nil {
		return
	}
	check.Len(v, prefix+"firstName", f.FirstName, check.MaxName)
	check.Len(v, prefix+"lastName", f.LastName, check.MaxName)
	if f.Email != nil {
		v.Check(prefix+"email", check.ValidEmail(*f.Email), "invalid_email", "must be an e-mail address")
		check.Len(v, prefix+"email", f.Email, check.MaxEmail)
	}
	v.Check(prefix+"phones", len(f.Phones) <= MaxPhones, "too_many", fmt.Sprintf("at most %d phone numbers", MaxPhones))
	primaries := 0
	for i, p := range f.Phones {
		name := fmt.Sprintf("%sphones.%d.", prefix, i)
		_, ok := identity.PhoneKey(p.Number)
		v.Check(name+"number", ok, "invalid_phone", "must be a phone number")
		check.Len(v, name+"number", &p.Number, check.MaxPhone)
		v.Check(name+"type", p.Type == nil || slices.Contains(PhoneTypes, *p.Type), "invalid_enum",
			"must be one of "+strings.Join(PhoneTypes, ", "))
		if p.IsPrimary {
			primaries++
		}
	}
	v.Check(prefix+"phones", primaries <= 1, "several_primary", "at most one phone number is primary")
	if f.OwnerID != nil {
		_, err := uuid.Parse(*f.OwnerID)
		v.Check(prefix+"ownerId", err == nil, "invalid_uuid", "must be a UUID")
	}
}
