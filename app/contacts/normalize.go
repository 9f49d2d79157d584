package contacts

import (
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/brokerdesk/brokerdesk/app/platform/identity"
)

// EmailKey is the matching key of an e-mail address: trimmed and lower-cased (identity.EmailKey,
// the one rule for matching people).
func EmailKey(email string) string { return identity.EmailKey(email) }

// PhoneKey is the matching key of a phone number: E.164, German without a country code
// (identity.PhoneKey). Leads and contacts share it, so a lead's phone finds the contact holding
// the same number.
func PhoneKey(phone string) (key string, ok bool) { return identity.PhoneKey(phone) }

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
