// Package check holds the field checks every area runs on its input before a service writes:
// lengths, text PostgreSQL can store, e-mail addresses, the German identifiers of ids.go (IBAN,
// BIC, tax id, social insurance number), and the bounds of the fields that describe a person (a
// contact's, a lead's, an intake submission's name must fit the same column). Len and Text add
// to an errs.Invalid, so one answer names every bad field; the Valid* functions answer a bool
// and leave the code and detail to the caller. It imports no area; areas import it.
package check

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// Bounds (characters) of the fields of a person, shared by contacts, leads and intake: a lead
// becomes a contact, so its fields must fit a contact's.
const (
	MaxName  = 100
	MaxEmail = 255
	MaxPhone = 50
)

// Len adds field as too_long when s holds more than max characters, and as
// invalid_character when it holds a NUL, which PostgreSQL text cannot store. A nil s was not
// given and passes.
func Len(v *errs.Invalid, field string, s *string, max int) {
	if s != nil {
		v.Check(field, utf8.RuneCountInString(*s) <= max, "too_long", fmt.Sprintf("at most %d characters", max))
		Text(v, field, *s)
	}
}

// Text adds field as invalid_character when s holds a NUL, which PostgreSQL text cannot
// store.
func Text(v *errs.Invalid, field, s string) {
	v.Check(field, !strings.ContainsRune(s, 0), "invalid_character", "must not contain NUL characters")
}

// ValidEmail reports whether s is one e-mail address (surrounding blanks allowed), without a
// display name.
func ValidEmail(s string) bool {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}
