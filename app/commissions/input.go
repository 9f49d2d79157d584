package commissions

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/commission"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schema"
)

// Formats are the statement formats of the spec.
var Formats = []string{commission.FormatCSV, commission.FormatGDV, commission.FormatBiPRO}

// maxNote bounds a note (the schema's MaxRuneLen).
const maxNote = 2000

// NewStatement is a validated upload of POST /commission-statements.
type NewStatement struct {
	Format    string
	InsurerID *uuid.UUID
	Mapping   map[string]string
	Filename  string
}

// parseStatement checks the form fields of an upload (files: the number of file parts). Every
// bad field is listed.
func parseStatement(values map[string][]string, files int) (NewStatement, error) {
	var v errs.Invalid
	for name := range values {
		if !slices.Contains([]string{"format", "insurerId", "mapping"}, name) {
			v.Add(name, "unknown_field", "is not a field of this request")
		}
	}
	first := func(name string) (string, bool) {
		if vs := values[name]; len(vs) > 0 {
			return vs[0], true
		}
		return "", false
	}
	var in NewStatement
	format, ok := first("format")
	v.Check("format", ok, "required", "is required")
	if ok {
		v.Check("format", slices.Contains(Formats, format), "invalid_enum", "must be one of "+strings.Join(Formats, ", "))
	}
	in.Format = format
	if s, ok := first("insurerId"); ok {
		id, err := uuid.Parse(s)
		v.Check("insurerId", err == nil, "invalid_uuid", "must be a UUID")
		if err == nil {
			in.InsurerID = &id
		}
	}
	if s, ok := first("mapping"); ok {
		switch {
		case format != commission.FormatCSV && format != "":
			v.Add("mapping", "not_applicable", "is read with format csv only")
		default:
			in.Mapping = parseMapping(&v, s)
		}
	}
	v.Check("file", files == 1, "required", "send exactly one file")
	return in, v.Err()
}

// parseMapping reads the CSV mapping: a JSON object of entry field to column header
// (commission.MappingFields; a field left out is found by its usual German headers).
func parseMapping(v *errs.Invalid, s string) map[string]string {
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		v.Add("mapping", "invalid_mapping", `must be a JSON object of entry field to column header, like {"policyNumber":"VSNR"}`)
		return nil
	}
	fields := commission.MappingFields()
	before := len(v.Errors)
	for k, col := range m {
		if !slices.Contains(fields, k) {
			v.Add("mapping."+k, "unknown_field", "is not an entry field ("+strings.Join(fields, ", ")+")")
			continue
		}
		v.Check("mapping."+k, strings.TrimSpace(col) != "" && utf8.RuneCountInString(col) <= 100, "invalid_length",
			"must name a column header of 1 to 100 characters")
	}
	if len(v.Errors) == before {
		if err := commission.ValidateMapping(m); err != nil {
			v.Add("mapping", "invalid_mapping", err.Error())
		}
	}
	return m
}

// StatementPatch is the body of PATCH /commission-statements/{statementId}, merged into the
// statement's current values.
type StatementPatch struct {
	Status *string `json:"status,omitempty"`
	Note   *string `json:"note,omitempty"`
}

// Validate checks the patched values: every bad field is listed.
func (in StatementPatch) Validate() error {
	var v errs.Invalid
	v.Require("status", in.Status != nil)
	if in.Status != nil {
		v.Check("status", slices.Contains(schema.CommissionStatementStatuses, *in.Status), "invalid_enum",
			"must be one of "+strings.Join(schema.CommissionStatementStatuses, ", "))
	}
	check.Len(&v, "note", in.Note, maxNote)
	return v.Err()
}

// EntryPatch is the body of PATCH /commission-entries/{entryId}, merged into the entry's
// current values: contractId null unlinks, a contract id links by hand.
type EntryPatch struct {
	ContractID *string `json:"contractId,omitempty"`
	Note       *string `json:"note,omitempty"`
}

// Validate checks the patched values: every bad field is listed.
func (in EntryPatch) Validate() error {
	var v errs.Invalid
	v.CheckUUID("contractId", in.ContractID)
	check.Len(&v, "note", in.Note, maxNote)
	return v.Err()
}
