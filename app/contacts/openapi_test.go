package contacts

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/openapi"
)

// groupSchemasFile is the OpenAPI area file that types the field groups, written from the
// catalog by renderGroupSchemas:
//
//	go test ./app/contacts -run TestGroupSchemas -update
const groupSchemasFile = "../openapi/areas/contacts-groups.yaml"

var update = flag.Bool("update", false, "rewrite "+groupSchemasFile+" from fields.json")

// groupSchema is the schema name of group g (ContactAddress), input adds "Input".
func groupSchema(g string, input bool) string {
	name := "Contact" + strings.ToUpper(g[:1]) + g[1:]
	if input {
		name += "Input"
	}
	return name
}

// renderGroupSchemas writes one schema per group for answers (object, or null when the group
// does not apply) and one for request bodies (every key nullable: null clears it).
func renderGroupSchemas() string {
	cat := FieldCatalog()
	q := strconv.Quote
	var b strings.Builder
	b.WriteString("# Generated from app/contacts/fields.json by\n" +
		"#   go test ./app/contacts -run TestGroupSchemas -update\n" +
		"# Do not edit: edit fields.json and regenerate (TestGroupSchemas fails while they differ).\n" +
		"paths: {}\ncomponents:\n  schemas:\n")
	for _, g := range cat.Groups {
		for _, input := range []bool{false, true} {
			fmt.Fprintf(&b, "    %s:\n      type: [object, 'null']\n", groupSchema(g.Group, input))
			desc := fmt.Sprintf("The field group `%s` (keys as `GET /contact-fields` lists them) of %s contacts", g.Group,
				strings.Join(g.ContactTypes, " and "))
			if input {
				desc += "; merged key by key on PATCH, `null` clears a key (or the whole group)"
			} else {
				desc += "; `null` on a contact of another type"
			}
			if g.Sensitive {
				desc += ". Sensitive: returned only with `contacts.sensitive:read`, encrypted at rest"
			}
			fmt.Fprintf(&b, "      description: %s\n      additionalProperties: false\n      properties:\n", q(desc+"."))
			for _, f := range cat.Fields {
				if f.Group != g.Group {
					continue
				}
				fmt.Fprintf(&b, "        %s:\n", f.Key)
				typ := map[string]string{"string": "string", "enum": "string", "date": "string", "decimal": "string",
					"boolean": "boolean", "integer": "integer"}[f.DataType]
				if input {
					fmt.Fprintf(&b, "          type: [%s, 'null']\n", typ)
				} else {
					fmt.Fprintf(&b, "          type: %s\n", typ)
				}
				d := f.Label["en"]
				if f.Format != "" {
					d += " (format `" + f.Format + "`)"
				}
				if len(f.ContactTypes) < len(g.ContactTypes) {
					d += "; " + strings.Join(f.ContactTypes, " and ") + " contacts only"
				}
				fmt.Fprintf(&b, "          description: %s\n", q(d))
				switch f.DataType {
				case "string":
					fmt.Fprintf(&b, "          maxLength: %d\n", f.MaxLength)
				case "enum":
					opts := make([]string, len(f.Options))
					for i, o := range f.Options {
						opts[i] = q(o)
					}
					if input {
						opts = append(opts, "null")
					}
					fmt.Fprintf(&b, "          enum: [%s]\n", strings.Join(opts, ", "))
				case "date":
					b.WriteString("          format: date\n")
				case "decimal":
					fmt.Fprintf(&b, "          pattern: %s\n", q(reDecimal.String()))
				case "integer":
					if f.Min != nil {
						fmt.Fprintf(&b, "          minimum: %d\n", *f.Min)
					}
					if f.Max != nil {
						fmt.Fprintf(&b, "          maximum: %d\n", *f.Max)
					}
				}
			}
		}
	}
	return b.String()
}

// TestGroupSchemas keeps the OpenAPI document's typed field groups in step with the catalog:
// the generated area file matches fields.json, and Contact, ContactInput and ContactPatch
// reference the schema of every catalog group.
func TestGroupSchemas(t *testing.T) {
	want := renderGroupSchemas()
	if *update {
		if err := os.WriteFile(groupSchemasFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(groupSchemasFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with fields.json: go test ./app/contacts -run TestGroupSchemas -update", groupSchemasFile)
	}
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Ref string `json:"$ref"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for schema, input := range map[string]bool{"Contact": false, "ContactInput": true, "ContactPatch": true} {
		props := doc.Components.Schemas[schema].Properties
		for _, g := range FieldCatalog().GroupNames() {
			want := "#/components/schemas/" + groupSchema(g, input)
			if props[g].Ref != want {
				t.Errorf("%s.%s references %q, want %q", schema, g, props[g].Ref, want)
			}
		}
	}
}
