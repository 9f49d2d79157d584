// Package openapi holds the OpenAPI 3.1 document of the Public API (openapi.yaml, written by
// hand: it is the contract) and serves it as JSON at GET /api/public/v1/openapi.json. The
// integration tests validate every request and response they make against it.
package openapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var source []byte

// areas holds one file per resource area (areas/leads.yaml, …), each with top-level `paths`
// and `components` (schemas, responses, parameters, headers) that are merged into openapi.yaml:
// areas grow their part of the contract without editing one shared file.
//
//go:embed areas/*.yaml
var areas embed.FS

// document is the JSON form of openapi.yaml and its ETag, converted once.
type document struct {
	json []byte
	etag string
}

var converted = sync.OnceValues(func() (document, error) {
	j, err := assemble()
	if err != nil {
		return document{}, err
	}
	sum := sha256.Sum256(j)
	return document{json: j, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`}, nil
})

// JSON returns the document as JSON, keys in the order openapi.yaml lists them.
func JSON() ([]byte, error) {
	d, err := converted()
	return d.json, err
}

// Load parses the document (a fresh copy on every call: callers may change it) and resolves
// its references. It does not validate it; doc.Validate does.
func Load() (*openapi3.T, error) {
	j, err := JSON()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(j)
	if err != nil {
		return nil, fmt.Errorf("load openapi document: %w", err)
	}
	return doc, nil
}

// Mount registers GET /openapi.json on r, which must not authenticate: the document is public.
// The answer is cacheable: its ETag is the content hash, and If-None-Match gets 304.
func Mount(r fiber.Router) {
	d, err := converted()
	if err != nil {
		panic(err) // the embedded document is tested; failing here is a build defect
	}
	r.Get("/openapi.json", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderETag, d.etag)
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		if httpx.IfNoneMatch(c.Get(fiber.HeaderIfNoneMatch), d.etag) {
			return c.SendStatus(fiber.StatusNotModified)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(d.json)
	})
}

// assemble merges the area files into openapi.yaml and converts the result to JSON.
func assemble() ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(source, &root); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	names, err := fs.Glob(areas, "areas/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := areas.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var frag yaml.Node
		if err := yaml.Unmarshal(b, &frag); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := mergeArea(root.Content[0], frag.Content[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	addUnavailable(child(root.Content[0], "paths"))
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// addUnavailable documents 503 on every operation that documents the generic 500
// (InternalError) and no 503 of its own: any request that touches the database can meet a
// passing database failure (docs/operations.md), so every area gets it without repeating it.
func addUnavailable(paths *yaml.Node) {
	for i := 1; i < len(paths.Content); i += 2 {
		item := paths.Content[i]
		for j := 1; j < len(item.Content); j += 2 {
			op := item.Content[j]
			if op.Kind != yaml.MappingNode {
				continue
			}
			rs := child(op, "responses")
			r500 := lookup(rs, "500")
			if r500 == nil || lookup(r500, "$ref") == nil || lookup(r500, "$ref").Value != "#/components/responses/InternalError" || lookup(rs, "503") != nil {
				continue
			}
			rs.Content = append(rs.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "503", Style: yaml.SingleQuotedStyle},
				&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: "$ref"},
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: "#/components/responses/Unavailable"},
				}})
		}
	}
}

// lookup returns the value under key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mergeArea appends an area's paths and components to the document's; a key defined twice is
// an error (writeJSON reports duplicates).
func mergeArea(doc, frag *yaml.Node) error {
	for i := 0; i+1 < len(frag.Content); i += 2 {
		key, val := frag.Content[i].Value, frag.Content[i+1]
		switch key {
		case "paths":
			appendMapping(child(doc, "paths"), val)
		case "components":
			comps := child(doc, "components")
			for j := 0; j+1 < len(val.Content); j += 2 {
				appendMapping(child(comps, val.Content[j].Value), val.Content[j+1])
			}
		case "tags":
			t := child(doc, "tags")
			t.Content = append(t.Content, val.Content...)
		case "webhooks": // OpenAPI 3.1: requests the API makes (webhook deliveries)
			appendMapping(child(doc, "webhooks"), val)
		default:
			return fmt.Errorf("an area file may hold paths, webhooks, components and tags, not %q", key)
		}
	}
	return nil
}

// child returns the mapping under key in m, creating it when missing.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, k, v)
	return v
}

func appendMapping(dst, src *yaml.Node) {
	dst.Content = append(dst.Content, src.Content...)
}

// yamlToJSON converts a YAML document to JSON, keeping the order of mapping keys.
func yamlToJSON(y []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(y, &root); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: mapping keys must be scalars", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeScalar(buf, k.Value, k.Line); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		return writeScalar(buf, v, n.Line)
	}
	return fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// writeScalar writes v as JSON without escaping <, > and & (the document is no HTML).
func writeScalar(buf *bytes.Buffer, v any, line int) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("line %d: %w", line, err)
	}
	buf.Truncate(buf.Len() - 1) // Encode ends with a newline
	return nil
}
