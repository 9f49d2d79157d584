package privacy

import (
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// MaxReason bounds an erasure's reason (the spec: max 1000).
const MaxReason = 1000

// ErasureInput is the body of POST /contacts/{contactId}/privacy/erasure.
type ErasureInput struct {
	Reason      *string `json:"reason"`
	RequestedAt *string `json:"requestedAt"`
	requestedAt *time.Time
	now         func() time.Time
}

// Validate checks the body: every invalid field is listed.
func (in *ErasureInput) Validate() error {
	var v errs.Invalid
	if in.Reason == nil || strings.TrimSpace(*in.Reason) == "" {
		v.Add("reason", "required", "must not be empty")
	}
	check.Len(&v, "reason", in.Reason, MaxReason)
	if in.RequestedAt != nil {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*in.RequestedAt))
		switch {
		case err != nil:
			v.Add("requestedAt", "invalid_datetime", "must be an RFC 3339 timestamp with offset")
		case in.now != nil && t.After(in.now().Add(time.Minute)):
			// A data subject's request is a past event; a minute of clock skew is allowed.
			v.Add("requestedAt", "in_future", "must not be in the future")
		default:
			in.requestedAt = &t
		}
	}
	return v.Err()
}
