package doctemplates

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// Bounds of POST /documents/generate.
const (
	// MaxFilename is the spec's bound of filename (characters, ".pdf" included).
	MaxFilename = 255
	// MaxVariables bounds the variables object (keys) and MaxVariable each value (characters):
	// a letter's text, not a book.
	MaxVariables = 50
	MaxVariable  = 20000
)

// GenerateInput is the body of POST /documents/generate.
type GenerateInput struct {
	TemplateID *string           `json:"templateId"`
	ContactID  *string           `json:"contactId"`
	ContractID *string           `json:"contractId"`
	Variables  map[string]string `json:"variables"`
	Filename   *string           `json:"filename"`

	parsed Generate
}

// Validate checks the shape: the ids UUIDs (templateId and contactId required), at most
// MaxVariables variables of at most MaxVariable characters, a filename of at most MaxFilename
// characters. Whether template, contact and contract exist, and whether each variable is a
// placeholder of the template, is the service's check.
func (in *GenerateInput) Validate() error {
	var v errs.Invalid
	id := func(field string, s *string, required bool) *uuid.UUID {
		if s == nil {
			v.Check(field, !required, "required", "is required")
			return nil
		}
		u, err := uuid.Parse(*s)
		if err != nil {
			v.Add(field, "invalid_uuid", "must be a UUID")
			return nil
		}
		return &u
	}
	if t := id("templateId", in.TemplateID, true); t != nil {
		in.parsed.TemplateID = *t
	}
	if c := id("contactId", in.ContactID, true); c != nil {
		in.parsed.ContactID = *c
	}
	in.parsed.ContractID = id("contractId", in.ContractID, false)
	v.Check("variables", len(in.Variables) <= MaxVariables, "too_many", fmt.Sprintf("at most %d variables", MaxVariables))
	keys := make([]string, 0, len(in.Variables))
	for k := range in.Variables {
		keys = append(keys, k)
	}
	slices.Sort(keys) // one order of errors for the same body
	for _, k := range keys {
		val := in.Variables[k]
		check.Len(&v, "variables."+k, &val, MaxVariable)
	}
	in.parsed.Variables = in.Variables
	if in.Filename != nil {
		check.Len(&v, "filename", in.Filename, MaxFilename)
		v.Check("filename", strings.TrimSpace(*in.Filename) != "", "required", "must not be blank (leave it out for the template's name)")
		in.parsed.Filename = *in.Filename
	}
	return v.Err()
}

// Parsed is the validated input (after Validate).
func (in *GenerateInput) Parsed() Generate { return in.parsed }

// pdfName is the file name of a generated PDF: given (cleaned by the handler as an upload's
// name is), else "<fallback>.pdf"; ".pdf" appended when it does not end so. Longer than
// MaxFilename characters with it: 422 too_long.
func pdfName(given, fallback string) (string, error) {
	name := strings.TrimSpace(given)
	if name == "" {
		name = fallback
	}
	if !strings.HasSuffix(strings.ToLower(name), ".pdf") {
		name += ".pdf"
	}
	if utf8.RuneCountInString(name) > MaxFilename {
		return "", errs.InvalidField("filename", "too_long",
			fmt.Sprintf("at most %d characters, with the extension .pdf the service appends", MaxFilename))
	}
	return name, nil
}
