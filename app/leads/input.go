package leads

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of lead fields (characters; docs/decisions/leads-and-intake.md "Leads").
const (
	MaxNotes           = 50000
	MaxAdditional      = 50
	MaxAdditionalKey   = 100
	MaxAdditionalValue = 2000
)

// Input is LeadInput: the body of POST /leads and PUT /external/{source}/leads/{externalId};
// PATCH merges its patch into the Input of the stored lead. A nil field was not given. Ids
// are strings so that a malformed one is a 422 naming the field, not a 400 for the body.
type Input struct {
	FirstName          *string                  `json:"firstName,omitempty"`
	LastName           *string                  `json:"lastName,omitempty"`
	Email              *string                  `json:"email,omitempty"`
	Phone              *string                  `json:"phone,omitempty"`
	Source             *string                  `json:"source,omitempty"`
	Notes              *string                  `json:"notes,omitempty"`
	AdditionalFields   map[string]string        `json:"additionalFields,omitempty"`
	OwnerID            *string                  `json:"ownerId,omitempty"`
	StageID            *string                  `json:"stageId,omitempty"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences,omitempty"`
}

// Validate checks the body of POST /leads and PUT /external/...: every invalid field is listed.
func (in Input) Validate() error {
	var v errs.Invalid
	in.check(&v)
	return v.Err()
}

func (in Input) check(v *errs.Invalid) {
	check.Len(v, "firstName", in.FirstName, check.MaxName)
	check.Len(v, "lastName", in.LastName, check.MaxName)
	if in.Email == nil && in.Phone == nil {
		v.Add("email", "email_or_phone_required", "give email or phone (or both)")
		v.Add("phone", "email_or_phone_required", "give email or phone (or both)")
	}
	if in.Email != nil {
		v.Check("email", check.ValidEmail(*in.Email), "invalid_email", "must be an e-mail address")
		check.Len(v, "email", in.Email, check.MaxEmail)
	}
	if in.Phone != nil {
		_, ok := identity.PhoneKey(*in.Phone)
		v.Check("phone", ok, "invalid_phone", "must be a phone number")
		check.Len(v, "phone", in.Phone, check.MaxPhone)
	}
	if in.Source != nil {
		v.Check("source", slices.Contains(schema.LeadSources, *in.Source), "invalid_enum",
			"must be one of "+strings.Join(schema.LeadSources, ", "))
	}
	check.Len(v, "notes", in.Notes, MaxNotes)
	v.Check("additionalFields", len(in.AdditionalFields) <= MaxAdditional, "too_many",
		fmt.Sprintf("at most %d fields", MaxAdditional))
	for _, k := range slices.Sorted(maps.Keys(in.AdditionalFields)) {
		ok := strings.TrimSpace(k) != "" && utf8.RuneCountInString(k) <= MaxAdditionalKey
		v.Check("additionalFields", ok && !strings.ContainsRune(k, 0), "invalid_key",
			fmt.Sprintf("keys have 1 to %d characters", MaxAdditionalKey))
		val := in.AdditionalFields[k]
		check.Len(v, "additionalFields."+k, &val, MaxAdditionalValue)
	}
	v.CheckUUID("ownerId", in.OwnerID)
	v.CheckUUID("stageId", in.StageID)
	extref.Check(v, in.ExternalReferences)
}

// patchInput is what PATCH /leads/{leadId} validates after merging: LeadInput where stageId
// cannot be cleared (a lead always stands in a stage).
type patchInput struct{ Input }

// Validate checks the merged lead of a PATCH.
func (in *patchInput) Validate() error {
	var v errs.Invalid
	in.check(&v)
	v.Require("stageId", in.StageID != nil)
	return v.Err()
}

// inputOf is the Input of a stored lead: what a PATCH merges into.
func inputOf(l *ent.Lead) Input {
	in := Input{FirstName: ptr.To(l.FirstName), LastName: ptr.To(l.LastName), Email: l.Email, Phone: l.Phone,
		Notes: ptr.To(l.Notes), StageID: ptr.To(l.StageID.String()), ExternalReferences: l.ExternalReferences}
	if l.Source != nil {
		in.Source = ptr.To(string(*l.Source))
	}
	if len(l.AdditionalFields) > 0 {
		in.AdditionalFields = l.AdditionalFields
	}
	if l.OwnerID != nil {
		in.OwnerID = ptr.To(l.OwnerID.String())
	}
	return in
}
