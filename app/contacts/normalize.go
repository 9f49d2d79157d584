package contacts

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// EmailKey is the matching key of an e-mail address: trimmed and lower-cased.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// PhoneKey is the matching key of a phone number: E.164, read as a German number when it has
// no country code ("0170 1234567" → "+491701234567"). ok is false for something that is no
// phone number (libphonenumber's rules, not ours). Leads and contacts share it, so a lead's
// phone finds the contact holding the same number.
func PhoneKey(phone string) (key string, ok bool) {
	n, err := phonenumbers.Parse(strings.TrimSpace(phone), "DE")
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", false
	}
	e164 := phonenumbers.Format(n, phonenumbers.E164)
	if len(e164) < 8 { // "+49" and at least five digits: shorter is no reachable number
		return "", false
	}
	return e164, true
}

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
