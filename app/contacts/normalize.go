package contacts

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// PhoneType guesses the type of a valid number: mobile or landline when libphonenumber knows,
// other when it cannot tell.
func PhoneType(phone string) string {
	n, err := phonenumbers.Parse(strings.TrimSpace(phone), "DE")
	if err != nil {
		return PhoneOther
	}
	switch phonenumbers.GetNumberType(n) {
	case phonenumbers.MOBILE:
		return PhoneMobile
	case phonenumbers.FIXED_LINE:
		return PhoneLandline
	}
	return PhoneOther
}
