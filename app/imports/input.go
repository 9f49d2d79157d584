package imports

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/schema"
)

// NewImport is a checked upload of POST /imports.
type NewImport struct {
	ContactType string
	// Mapping is the given column → field key mapping, nil to use the suggestion. Its columns
	// are checked against the file's header once the file is stored (checkMapping).
	Mapping  map[string]string
	Tags     []string
	OwnerID  *uuid.UUID
	Filename string
}

// uploadFields are the form fields of POST /imports besides the file.
var uploadFields = []string{"contactType", "mapping", "tags", "ownerId"}

// parseUpload checks the form fields of an upload (files: the number of file parts). Every bad
// field is listed. contactType defaults to private (the spec names no default; a private
// contact is what most broker exports hold).
func parseUpload(values map[string][]string, files int) (NewImport, error) {
	var v errs.Invalid
	for name, vs := range values {
		if !slices.Contains(uploadFields, name) {
			v.Add(name, "unknown_field", "is not a field of this request")
		} else if len(vs) > 1 {
			v.Add(name, "repeated", "give the field once")
		}
	}
	first := func(name string) (string, bool) {
		if vs := values[name]; len(vs) > 0 {
			return vs[0], true
		}
		return "", false
	}
	in := NewImport{ContactType: contacts.TypePrivate}
	if s, ok := first("contactType"); ok {
		in.ContactType = s
		v.Check("contactType", s == contacts.TypePrivate || s == contacts.TypeBusiness, "invalid_enum", "must be private or business")
	}
	if s, ok := first("mapping"); ok {
		var m map[string]string
		if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
			v.Add("mapping", "invalid_mapping", `must be a JSON object of column header to contact field key, like {"Vorname":"firstName","PLZ":"address.zipCode"}`)
		} else if len(m) == 0 {
			v.Add("mapping", "invalid_mapping", "maps no column: omit it to use the suggested mapping")
		} else {
			in.Mapping = m
		}
	}
	if s, ok := first("tags"); ok {
		for _, t := range strings.Split(s, ",") {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(in.Tags, t) {
				in.Tags = append(in.Tags, t)
			}
		}
		v.Check("tags", len(in.Tags) <= contacts.MaxTags, "too_many", fmt.Sprintf("at most %d tags", contacts.MaxTags))
		for _, t := range in.Tags {
			n := utf8.RuneCountInString(t)
			if n > contacts.MaxTag {
				v.Add("tags", "invalid_length", fmt.Sprintf("each tag has 1 to %d characters", contacts.MaxTag))
				break
			}
			check.Text(&v, "tags", t)
		}
	}
	if s, ok := first("ownerId"); ok {
		id, err := uuid.Parse(s)
		v.Check("ownerId", err == nil, "invalid_uuid", "must be a UUID")
		if err == nil {
			in.OwnerID = &id
		}
	}
	v.Check("file", files == 1, "required", "send exactly one file")
	return in, v.Err()
}

// CommitInput is the optional body of POST /imports/{importId}/commit.
type CommitInput struct {
	Duplicates *string `json:"duplicates,omitempty"`
}

// Validate checks the body.
func (in CommitInput) Validate() error {
	var v errs.Invalid
	if in.Duplicates != nil {
		v.Check("duplicates", slices.Contains(schema.ImportDuplicates, *in.Duplicates), "invalid_enum",
			"must be one of "+strings.Join(schema.ImportDuplicates, ", "))
	}
	return v.Err()
}
