package advice

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Bounds of advice record fields (characters; docs/decisions/signatures.md "Advice records").
const (
	MaxSubject = 500
	// MaxText bounds each of customerWishes, customerNeeds, advice, reasons and notes: a
	// protocol of a few pages, not a document store.
	MaxText     = 20000
	MaxProducts = 50
	// MaxProductName bounds a product's insurer and product names.
	MaxProductName = 200
	// MaxPremium is the largest premium, as a contract's (numeric(14,2) with room for ×12).
	MaxPremium = "9999999999.99"
	// FutureSkew is how far consultedAt may lie ahead of the server's clock: a client's clock
	// a few minutes fast is not a consultation in the future.
	FutureSkew = 5 * time.Minute
)

// Input is AdviceRecordInput: the body of POST /advice-records; PATCH merges its patch into the
// Input of the stored record. Ids, times and amounts are strings so that a malformed one is a
// 422 naming the field.
type Input struct {
	ContactID      *string        `json:"contactId,omitempty"`
	ContractID     *string        `json:"contractId,omitempty"`
	AdvisorID      *string        `json:"advisorId,omitempty"`
	ConsultedAt    *string        `json:"consultedAt,omitempty"`
	Channel        *string        `json:"channel,omitempty"`
	Subject        *string        `json:"subject,omitempty"`
	CustomerWishes *string        `json:"customerWishes,omitempty"`
	CustomerNeeds  *string        `json:"customerNeeds,omitempty"`
	Advice         *string        `json:"advice,omitempty"`
	Reasons        *string        `json:"reasons,omitempty"`
	Products       []ProductInput `json:"products,omitempty"`
	AdviceWaived   *bool          `json:"adviceWaived,omitempty"`
	Notes          *string        `json:"notes,omitempty"`
}

// ProductInput is a product discussed in the consultation.
type ProductInput struct {
	Insurer      *string `json:"insurer,omitempty"`
	Product      *string `json:"product,omitempty"`
	ContractType *string `json:"contractType,omitempty"`
	Premium      *string `json:"premium,omitempty"`
	Recommended  *bool   `json:"recommended,omitempty"`
	Chosen       *bool   `json:"chosen,omitempty"`
}

// Validate checks an AdviceRecordInput's shape: every invalid field is listed. Whether the
// contact, contract and advisor exist and whether consultedAt lies in the future (the clock is
// the service's) are the service's checks.
func (in *Input) Validate() error {
	var v errs.Invalid
	v.Require("contactId", in.ContactID != nil)
	v.CheckUUID("contactId", in.ContactID)
	v.CheckUUID("contractId", in.ContractID)
	v.CheckUUID("advisorId", in.AdvisorID)
	v.Require("consultedAt", in.ConsultedAt != nil)
	if in.ConsultedAt != nil {
		_, ok := httpx.ParseTime(*in.ConsultedAt)
		v.Check("consultedAt", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
	}
	if in.Channel != nil {
		v.Check("channel", slices.Contains(schema.AdviceChannels, *in.Channel), "invalid_enum",
			"must be one of "+strings.Join(schema.AdviceChannels, ", "))
	}
	if in.Subject == nil || strings.TrimSpace(*in.Subject) == "" {
		v.Add("subject", "required", "must not be empty")
	}
	check.Len(&v, "subject", in.Subject, MaxSubject)
	for _, f := range []struct {
		name string
		s    *string
	}{{"customerWishes", in.CustomerWishes}, {"customerNeeds", in.CustomerNeeds}, {"advice", in.Advice},
		{"reasons", in.Reasons}, {"notes", in.Notes}} {
		check.Len(&v, f.name, f.s, MaxText)
	}
	if len(in.Products) > MaxProducts {
		v.Add("products", "too_long", fmt.Sprintf("at most %d products", MaxProducts))
	} else {
		for i, p := range in.Products {
			p.check(&v, fmt.Sprintf("products.%d.", i))
		}
	}
	return v.Err()
}

// check adds the problems of one product to v, its fields named prefix + name.
func (p ProductInput) check(v *errs.Invalid, prefix string) {
	for _, f := range []struct {
		name string
		s    *string
	}{{"insurer", p.Insurer}, {"product", p.Product}} {
		if f.s == nil || strings.TrimSpace(*f.s) == "" {
			v.Add(prefix+f.name, "required", "must not be empty")
		}
		check.Len(v, prefix+f.name, f.s, MaxProductName)
	}
	if p.ContractType != nil {
		_, known := gdv.Sparte(*p.ContractType)
		v.Check(prefix+"contractType", known, "unknown_type", "is not a contract type (see GET /contract-types)")
	}
	if p.Premium != nil {
		m, err := schematype.ParseMoney(*p.Premium)
		switch {
		case err != nil:
			v.Add(prefix+"premium", "invalid_decimal", `must be a decimal string with at most two fraction digits, like "123.45"`)
		case m.Decimal().IsNegative():
			v.Add(prefix+"premium", "negative", "must not be negative")
		case m.Decimal().GreaterThan(decimal.RequireFromString(MaxPremium)):
			v.Add(prefix+"premium", "too_large", "at most "+MaxPremium)
		}
	}
}

// record is a validated Input as the schema stores it.
type record struct {
	contactID   uuid.UUID
	contractID  *uuid.UUID
	advisorID   *uuid.UUID
	consultedAt time.Time
	channel     string
	subject     string
	wishes      string
	needs       string
	advice      string
	reasons     string
	products    []schematype.AdviceProduct
	waived      bool
	notes       string
}

// recordOf reads a validated Input; absent texts are empty, an absent channel in_person.
func recordOf(in Input) record {
	at, _ := httpx.ParseTime(*in.ConsultedAt) // validated
	r := record{contactID: uuid.MustParse(*in.ContactID), contractID: parseID(in.ContractID),
		advisorID: parseID(in.AdvisorID), consultedAt: at.UTC(), channel: ptr.Or(in.Channel, "in_person"),
		subject: strings.TrimSpace(*in.Subject), wishes: ptr.Deref(in.CustomerWishes), needs: ptr.Deref(in.CustomerNeeds),
		advice: ptr.Deref(in.Advice), reasons: ptr.Deref(in.Reasons), waived: ptr.Deref(in.AdviceWaived),
		notes: ptr.Deref(in.Notes), products: []schematype.AdviceProduct{}}
	for _, p := range in.Products {
		ap := schematype.AdviceProduct{Insurer: strings.TrimSpace(*p.Insurer), Product: strings.TrimSpace(*p.Product),
			ContractType: ptr.Deref(p.ContractType), Recommended: ptr.Deref(p.Recommended), Chosen: ptr.Deref(p.Chosen)}
		if p.Premium != nil {
			m := schematype.MustMoney(*p.Premium) // validated
			ap.Premium = &m
		}
		r.products = append(r.products, ap)
	}
	return r
}

func parseID(s *string) *uuid.UUID {
	if s == nil {
		return nil
	}
	id := uuid.MustParse(*s) // validated
	return &id
}

// inputOf is the Input of a stored record: what a PATCH merges into.
func inputOf(a *ent.AdviceRecord) Input {
	id := func(u *uuid.UUID) *string {
		if u == nil {
			return nil
		}
		return ptr.To(u.String())
	}
	text := func(s string) *string {
		if s == "" {
			return nil
		}
		return ptr.To(s)
	}
	in := Input{ContactID: ptr.To(a.ContactID.String()), ContractID: id(a.ContractID), AdvisorID: id(a.AdvisorID),
		ConsultedAt: ptr.To(a.ConsultedAt.UTC().Format(time.RFC3339Nano)), Channel: ptr.To(string(a.Channel)),
		Subject: ptr.To(a.Subject), CustomerWishes: text(a.CustomerWishes), CustomerNeeds: text(a.CustomerNeeds),
		Advice: text(a.Advice), Reasons: text(a.Reasons), Notes: text(a.Notes)}
	if a.AdviceWaived {
		in.AdviceWaived = ptr.To(true)
	}
	for _, p := range a.Products {
		pi := ProductInput{Insurer: ptr.To(p.Insurer), Product: ptr.To(p.Product), ContractType: text(p.ContractType)}
		if p.Premium != nil {
			pi.Premium = ptr.To(p.Premium.String())
		}
		if p.Recommended {
			pi.Recommended = ptr.To(true)
		}
		if p.Chosen {
			pi.Chosen = ptr.To(true)
		}
		in.Products = append(in.Products, pi)
	}
	return in
}
