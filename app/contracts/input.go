package contracts

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of contract fields (characters; docs/decisions/contracts-documents-portfolio.md "Contracts").
const (
	MaxPolicyNumber = 50
	// MaxPremium is the largest premium numeric(14,2) stores with room for ×12.
	MaxPremium = "9999999999.99"
)

const dateLayout = "2006-01-02"

// Input is ContractInput: the body of POST /contracts and PUT /external/{source}/contracts/
// {externalId}; PATCH merges its patch into the Input of the stored contract. Ids, dates and
// amounts are strings so that a malformed one is a 422 naming the field.
type Input struct {
	ContactID          *string                  `json:"contactId,omitempty"`
	InsurerID          *string                  `json:"insurerId,omitempty"`
	PolicyNumber       *string                  `json:"policyNumber,omitempty"`
	Type               *string                  `json:"type,omitempty"`
	Status             *string                  `json:"status,omitempty"`
	StatusCode         *string                  `json:"statusCode,omitempty"`
	StartDate          *string                  `json:"startDate,omitempty"`
	EndDate            *string                  `json:"endDate,omitempty"`
	MainRenewalDate    *string                  `json:"mainRenewalDate,omitempty"`
	Premium            *string                  `json:"premium,omitempty"`
	PaymentFrequency   *string                  `json:"paymentFrequency,omitempty"`
	OwnerID            *string                  `json:"ownerId,omitempty"`
	ExternalReferences []schematype.ExternalRef `json:"externalReferences,omitempty"`
}

// Validate checks a contract body: every invalid field is listed.
func (in Input) Validate() error {
	var v errs.Invalid
	in.check(&v)
	return v.Err()
}

func (in Input) check(v *errs.Invalid) {
	checkUUID(v, "contactId", in.ContactID, true)
	checkUUID(v, "insurerId", in.InsurerID, true)
	checkUUID(v, "ownerId", in.OwnerID, false)
	v.Require("policyNumber", in.PolicyNumber != nil)
	if in.PolicyNumber != nil {
		v.Check("policyNumber", strings.TrimSpace(*in.PolicyNumber) != "", "required", "must not be empty")
		check.Len(v, "policyNumber", in.PolicyNumber, MaxPolicyNumber)
	}
	v.Require("type", in.Type != nil)
	if in.Type != nil {
		_, known := gdv.Sparte(*in.Type)
		v.Check("type", known, "unknown_type", "is not a contract type (see GET /contract-types)")
	}
	v.Require("status", in.Status != nil)
	if in.Status != nil {
		v.Check("status", slices.Contains(schema.ContractStatuses, *in.Status), "invalid_enum",
			"must be one of "+strings.Join(schema.ContractStatuses, ", "))
	}
	if in.StatusCode != nil {
		ok := utf8.RuneCountInString(*in.StatusCode) <= 2 && strings.Trim(*in.StatusCode, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
		v.Check("statusCode", ok, "invalid_code", "is a GDV Vertragsstatus: at most 2 digits or capital letters")
	}
	for _, d := range []struct {
		name string
		s    *string
	}{{"startDate", in.StartDate}, {"endDate", in.EndDate}, {"mainRenewalDate", in.MainRenewalDate}} {
		if d.s != nil {
			_, err := time.Parse(dateLayout, *d.s)
			v.Check(d.name, err == nil, "invalid_date", "must be a date YYYY-MM-DD")
		}
	}
	if in.StartDate != nil && in.EndDate != nil && *in.EndDate < *in.StartDate {
		v.Add("endDate", "before_start", "must not be before startDate")
	}
	if in.Premium != nil {
		m, err := schematype.ParseMoney(*in.Premium)
		switch {
		case err != nil:
			v.Add("premium", "invalid_decimal", `must be a decimal string with at most two fraction digits, like "411.41"`)
		case m.Decimal().IsNegative():
			v.Add("premium", "negative", "must not be negative")
		case m.Decimal().GreaterThan(decimal.RequireFromString(MaxPremium)):
			v.Add("premium", "too_large", "at most "+MaxPremium)
		}
	}
	if in.PaymentFrequency != nil {
		v.Check("paymentFrequency", slices.Contains(schema.PaymentFrequencies, *in.PaymentFrequency), "invalid_enum",
			"must be one of "+strings.Join(schema.PaymentFrequencies, ", "))
	}
	extref.Check(v, in.ExternalReferences)
}

func checkUUID(v *errs.Invalid, field string, s *string, required bool) {
	if required {
		v.Require(field, s != nil)
	}
	v.CheckUUID(field, s)
}

// InputOf is the Input of a stored contract: what a PATCH merges into.
func InputOf(c *ent.Contract) Input {
	date := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		return ptr.To(t.Format(dateLayout))
	}
	in := Input{ContactID: ptr.To(c.ContactID.String()), InsurerID: ptr.To(c.InsurerID.String()),
		PolicyNumber: ptr.To(c.PolicyNumber), Type: ptr.To(c.Type), Status: ptr.To(string(c.Status)),
		StartDate: date(c.StartDate), EndDate: date(c.EndDate), MainRenewalDate: date(c.MainRenewalDate),
		ExternalReferences: c.ExternalReferences}
	if c.StatusCode != "" {
		in.StatusCode = ptr.To(c.StatusCode)
	}
	if c.Premium != nil {
		in.Premium = ptr.To(c.Premium.String())
	}
	if c.PaymentFrequency != nil {
		in.PaymentFrequency = ptr.To(string(*c.PaymentFrequency))
	}
	if c.OwnerID != nil {
		in.OwnerID = ptr.To(c.OwnerID.String())
	}
	return in
}
