package contacts

import (
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Field bounds (characters).
const (
	MaxName        = 100
	MaxCompanyName = 200
	MaxEmail       = 255
	MaxPhone       = 50
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
	CheckLen(v, prefix+"firstName", f.FirstName, MaxName)
	CheckLen(v, prefix+"lastName", f.LastName, MaxName)
	if f.Email != nil {
		v.Check(prefix+"email", ValidEmail(*f.Email), "invalid_email", "must be an e-mail address")
		CheckLen(v, prefix+"email", f.Email, MaxEmail)
	}
	v.Check(prefix+"phones", len(f.Phones) <= MaxPhones, "too_many", fmt.Sprintf("at most %d phone numbers", MaxPhones))
	primaries := 0
	for i, p := range f.Phones {
		name := fmt.Sprintf("%sphones.%d.", prefix, i)
		_, ok := PhoneKey(p.Number)
		v.Check(name+"number", ok, "invalid_phone", "must be a phone number")
		CheckLen(v, name+"number", &p.Number, MaxPhone)
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

// CheckLen adds field as too_long when s holds more than max characters, and as
// invalid_character when it holds a NUL, which PostgreSQL text cannot store.
func CheckLen(v *errs.Invalid, field string, s *string, max int) {
	if s != nil {
		v.Check(field, utf8.RuneCountInString(*s) <= max, "too_long", fmt.Sprintf("at most %d characters", max))
		CheckText(v, field, *s)
	}
}

// CheckText adds field as invalid_character when s holds a NUL, which PostgreSQL text cannot
// store.
func CheckText(v *errs.Invalid, field, s string) {
	v.Check(field, !strings.ContainsRune(s, 0), "invalid_character", "must not contain NUL characters")
}

// ValidEmail reports whether s is one e-mail address (surrounding blanks allowed), without a
// display name.
func ValidEmail(s string) bool {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// Bounds of external references (shared with leads).
const (
	MaxExternalRefs  = 20
	MaxRefSource     = 100
	MaxRefExternalID = 255
)

// CheckRefs adds every invalid external reference of refs to v.
func CheckRefs(v *errs.Invalid, refs []schematype.ExternalRef) {
	v.Check("externalReferences", len(refs) <= MaxExternalRefs, "too_many",
		fmt.Sprintf("at most %d references", MaxExternalRefs))
	seen := map[schematype.ExternalRef]bool{}
	for i, r := range refs {
		name := fmt.Sprintf("externalReferences.%d.", i)
		v.Check(name+"source", r.Source != "" && utf8.RuneCountInString(r.Source) <= MaxRefSource, "invalid_length",
			fmt.Sprintf("must have 1 to %d characters", MaxRefSource))
		v.Check(name+"externalId", r.ExternalID != "" && utf8.RuneCountInString(r.ExternalID) <= MaxRefExternalID,
			"invalid_length", fmt.Sprintf("must have 1 to %d characters", MaxRefExternalID))
		CheckText(v, name+"source", r.Source)
		CheckText(v, name+"externalId", r.ExternalID)
		v.Check(name+"externalId", !seen[r], "duplicate_reference", "names the same reference as an earlier item")
		seen[r] = true
	}
}
