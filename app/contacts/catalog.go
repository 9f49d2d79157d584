package contacts

import (
	_ "embed"
	"encoding/json"
	"slices"
	"sync"
)

// fieldsJSON is the contact field catalog: every group and key with its data type, options and
// contact types. It is data (GET /contact-fields serves it as it is), not code: adding a key or
// a legal form is an edit of fields.json.
//
//go:embed fields.json
var fieldsJSON []byte

// Group is a field group of the Contact.
type Group struct {
	Group        string   `json:"group"`
	Sensitive    bool     `json:"sensitive"`
	ContactTypes []string `json:"contactTypes"`
}

// FieldDef is one entry of the catalog (ContactFieldDefinition).
type FieldDef struct {
	Key          string            `json:"key"`
	Group        string            `json:"group"`
	DataType     string            `json:"dataType"` // string, enum, date, boolean, integer, decimal
	Format       string            `json:"format,omitempty"`
	Options      []string          `json:"options,omitempty"`
	MaxLength    int               `json:"maxLength,omitempty"`
	Min          *int64            `json:"min,omitempty"`
	Max          *int64            `json:"max,omitempty"`
	ContactTypes []string          `json:"contactTypes,omitempty"` // empty: the group's
	Label        map[string]string `json:"label"`
}

// Catalog is the parsed fields.json.
type Catalog struct {
	Groups      []Group    `json:"groups"`
	Fields      []FieldDef `json:"fields"`
	LabelColors []string   `json:"labelColors"`
}

var catalog = sync.OnceValue(func() *Catalog {
	var c Catalog
	if err := json.Unmarshal(fieldsJSON, &c); err != nil {
		panic(err) // embedded and tested: a failure is a build defect
	}
	for i, f := range c.Fields {
		if len(f.ContactTypes) == 0 {
			c.Fields[i].ContactTypes = c.Group(f.Group).ContactTypes
		}
		if f.MaxLength == 0 && f.DataType == "string" {
			c.Fields[i].MaxLength = 100
		}
	}
	return &c
})

// FieldCatalog returns the catalog (read only).
func FieldCatalog() *Catalog { return catalog() }

// Group returns the group named g, or a zero Group.
func (c *Catalog) Group(g string) Group {
	for _, x := range c.Groups {
		if x.Group == g {
			return x
		}
	}
	return Group{}
}

// Field returns the definition of key in group g.
func (c *Catalog) Field(g, key string) (FieldDef, bool) {
	for _, f := range c.Fields {
		if f.Group == g && f.Key == key {
			return f, true
		}
	}
	return FieldDef{}, false
}

// GroupNames lists the group names in catalog order.
func (c *Catalog) GroupNames() []string {
	out := make([]string, len(c.Groups))
	for i, g := range c.Groups {
		out[i] = g.Group
	}
	return out
}

// Applies reports whether group g applies to contacts of type typ.
func (c *Catalog) Applies(g, typ string) bool { return slices.Contains(c.Group(g).ContactTypes, typ) }

// Sensitive reports whether group g is one of the sensitive groups (identity, health, bank,
// income): encrypted at rest and returned only with contacts.sensitive:read.
func (c *Catalog) Sensitive(g string) bool { return c.Group(g).Sensitive }
