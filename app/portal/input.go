package portal

import (
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// MaxReason bounds the reason of a decision (the spec's "portal rejection reason 1000").
const MaxReason = 1000

// InviteInput is the optional body of POST /contacts/{contactId}/portal-access: email
// overrides the contact's address for this invitation (and becomes the sign-in name).
type InviteInput struct {
	Email *string `json:"email"`
}

// Validate checks the body.
func (in InviteInput) Validate() error {
	var v errs.Invalid
	if in.Email != nil {
		v.Check("email", check.ValidEmail(*in.Email), "invalid_email", "must be an e-mail address")
		check.Len(&v, "email", in.Email, check.MaxEmail)
	}
	return v.Err()
}

// DecideInput is the optional body of POST /portal-change-requests/{id}/{decision}: reason is
// shown to the customer (on either decision); confirm approves a request although the contact's
// fields it changes were changed since it was made (409 contact_changed otherwise).
type DecideInput struct {
	Reason  *string `json:"reason"`
	Confirm bool    `json:"confirm"`
}

// Validate checks the body.
func (in DecideInput) Validate() error {
	var v errs.Invalid
	if in.Reason != nil {
		v.Check("reason", utf8.RuneCountInString(*in.Reason) <= MaxReason, "too_long", "at most 1000 characters")
		check.Text(&v, "reason", *in.Reason)
	}
	return v.Err()
}
