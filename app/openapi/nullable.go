package openapi

import (
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Input is what the document says of one operation's input that the server enforces in one
// place (app's input guard): the top-level members of its JSON body that must not be null,
// and its query parameters, which must be UTF-8 text.
type Input struct {
	// NonNullable: members of an application/json body whose schema does not take null. Go's
	// decoder reads a null member as an absent one; httpx.Decode refuses these instead, so a
	// create answers as its schema says. A PATCH read as a merge patch (httpx.MergePatch,
	// where null clears) never reaches Decode; one read by Decode (phones) gets the check.
	NonNullable map[string]bool
	// Query: the names of the documented query parameters.
	Query map[string]bool
}

// Inputs maps each operation, keyed "METHOD /route" in Fiber's syntax
// ("POST /api/public/v1/contacts/:contactId/notes"), to its Input.
func Inputs() (map[string]Input, error) { return inputs() }

var inputs = sync.OnceValues(func() (map[string]Input, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	out := map[string]Input{}
	for path, item := range doc.Paths.Map() {
		prefix := strings.TrimSuffix(doc.Servers[0].URL, "/")
		if len(item.Servers) > 0 {
			prefix = strings.TrimSuffix(item.Servers[0].URL, "/")
		}
		route := prefix + strings.NewReplacer("{", ":", "}", "").Replace(path)
		for method, op := range item.Operations() {
			in := Input{NonNullable: map[string]bool{}, Query: map[string]bool{}}
			for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range list {
					if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
						in.Query[p.Value.Name] = true
					}
				}
			}
			if method != http.MethodGet && op.RequestBody != nil && op.RequestBody.Value != nil {
				if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
					props := map[string]bool{} // member -> may be null
					members(mt.Schema.Value, props)
					for name, nullable := range props {
						if !nullable {
							in.NonNullable[name] = true
						}
					}
				}
			}
			out[method+" "+route] = in
		}
	}
	return out, nil
})

// members records the properties of s (through allOf, oneOf, anyOf) and whether one of their
// schemas takes null.
func members(s *openapi3.Schema, props map[string]bool) {
	for name, p := range s.Properties {
		props[name] = props[name] || (p.Value != nil && takesNull(p.Value))
	}
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range list {
			if r.Value != nil {
				members(r.Value, props)
			}
		}
	}
}

// takesNull reports whether s accepts the JSON value null.
func takesNull(s *openapi3.Schema) bool {
	if s.Nullable || (s.Type != nil && s.Type.Includes("null")) {
		return true
	}
	if s.Type == nil && len(s.AllOf) == 0 && len(s.OneOf) == 0 && len(s.AnyOf) == 0 && len(s.Enum) == 0 && s.Not == nil &&
		s.Const == nil {
		return true // no type at all: anything goes
	}
	for _, e := range s.Enum {
		if e == nil {
			return true
		}
	}
	for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, r := range list {
			if r.Value != nil && takesNull(r.Value) {
				return true
			}
		}
	}
	if len(s.AllOf) > 0 {
		for _, r := range s.AllOf {
			if r.Value == nil || !takesNull(r.Value) {
				return false
			}
		}
		return true
	}
	return false
}
