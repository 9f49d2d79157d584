package extractions

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// StartInput is the body of POST /documents/{documentId}/extractions.
type StartInput struct {
	ContractID   *string `json:"contractId,omitempty"`
	ContractType *string `json:"contractType,omitempty"`
	AutoApply    *bool   `json:"autoApply,omitempty"`
}

// Validate checks the body: every invalid field is listed.
func (in StartInput) Validate() error {
	var v errs.Invalid
	v.CheckUUID("contractId", in.ContractID)
	if in.ContractType != nil {
		_, known := gdv.Sparte(*in.ContractType)
		v.Check("contractType", known, "unknown_type", "is not a contract type (see GET /contract-types)")
	}
	if in.AutoApply != nil && *in.AutoApply && in.ContractID != nil {
		v.Add("autoApply", "not_combinable", "autoApply creates a new contract and cannot be combined with contractId")
	}
	return v.Err()
}

// ApplyInput is the body of POST /extractions/{extractionId}/apply: the keys of the fields to
// write, and values that replace the extracted ones (each a key of fields).
type ApplyInput struct {
	Fields []string                   `json:"fields"`
	Values map[string]json.RawMessage `json:"values,omitempty"`
}

// Applicable are the keys apply writes to a contract: ContractInput's names. holder.name is
// extracted as evidence only (a contract's contact is never written from a document).
var Applicable = []string{KeyInsurer, KeyPolicyNumber, KeyType, "status", KeyStartDate, KeyEndDate,
	"mainRenewalDate", KeyPremium, KeyPaymentFrequency}

// extracted are the keys an extraction yields.
var extracted = []string{KeyInsurer, KeyPolicyNumber, KeyType, KeyStartDate, KeyEndDate, KeyPremium,
	KeyPaymentFrequency, KeyHolder}

// Validate checks the shape: fields (at least one, known, no duplicates), values keyed by a
// listed field, each a string, number, boolean or null.
func (in ApplyInput) Validate() error {
	var v errs.Invalid
	v.Check("fields", len(in.Fields) > 0, "required", "name at least one field")
	seen := map[string]bool{}
	for _, k := range in.Fields {
		switch {
		case k == KeyHolder:
			v.Add("fields", "not_applicable", "holder.name is evidence only: a contract's contact is not written from a document")
		case !slices.Contains(Applicable, k):
			v.Add("fields", "unknown_field", "unknown field "+quote(k)+"; one of "+strings.Join(Applicable, ", "))
		case seen[k]:
			v.Add("fields", "duplicate", "field "+quote(k)+" is listed twice")
		}
		seen[k] = true
	}
	keys := make([]string, 0, len(in.Values))
	for k := range in.Values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !seen[k] {
			v.Add("values."+k, "not_in_fields", "a value for a field not listed in fields")
			continue
		}
		var x any
		if err := json.Unmarshal(in.Values[k], &x); err != nil {
			v.Add("values."+k, "invalid_value", "must be a string, number, boolean or null")
			continue
		}
		switch x.(type) {
		case nil, string, float64, bool:
		default:
			v.Add("values."+k, "invalid_value", "must be a string, number, boolean or null")
		}
	}
	return v.Err()
}

func quote(s string) string { return `"` + s + `"` }

// validDate says whether s is a calendar date YYYY-MM-DD.
func validDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}
