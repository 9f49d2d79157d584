package leads

import "github.com/brokerdesk/brokerdesk/app/contacts"

// EmailKey is the duplicate key of an e-mail address: trimmed and lower-cased.
func EmailKey(email string) string { return contacts.EmailKey(email) }

// PhoneKey is the duplicate key of a phone number: E.164, read as a German number when it has
// no country code ("0170 1234567" → "+491701234567"). ok is false for something that is no
// phone number. It is contacts.PhoneKey: a lead's phone must find the contact with the number.
func PhoneKey(phone string) (key string, ok bool) { return contacts.PhoneKey(phone) }
