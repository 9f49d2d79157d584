// Package jsondoc is what input documents share whether they come from a request body or from
// a service (an upsert merging into what is stored, a lead conversion's overrides): strict
// decoding with its errors as errs kinds, self-checking inputs, RFC 7396 merge patches. It knows
// nothing of HTTP, so services may use it; app/platform/httpx reads bodies with it.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// Validator is an input type that checks itself; Validate returns *errs.Invalid listing every
// bad field.
type Validator interface{ Validate() error }

// ApplyPatch applies patch (an RFC 7396 merge patch as decoded JSON, e.g. httpx.ReadMergePatch) to current, decodes the result back into
// current (unknown fields are 422) and runs its Validate when it has one.
func ApplyPatch(current any, patch map[string]any) error {
	doc, err := json.Marshal(current)
	if err != nil {
		return err
	}
	var target any
	d2 := json.NewDecoder(bytes.NewReader(doc))
	d2.UseNumber()
	if err := d2.Decode(&target); err != nil {
		return err
	}
	merged, err := json.Marshal(Merge(target, patch))
	if err != nil {
		return err
	}
	// Decode into a zeroed value: fields the patch removed must end up empty, not keep the old value.
	rv := reflect.ValueOf(current)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("merge patch: want a non-nil pointer, got %T", current)
	}
	rv.Elem().Set(reflect.Zero(rv.Elem().Type()))
	strict := json.NewDecoder(bytes.NewReader(merged))
	strict.DisallowUnknownFields()
	if err := strict.Decode(current); err != nil {
		return DecodeError(err)
	}
	if val, ok := current.(Validator); ok {
		return val.Validate()
	}
	return nil
}

// Merge is RFC 7396 §2 MergePatch(Target, Patch) on decoded JSON values.
func Merge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = Merge(t[k], v)
	}
	return t
}

// DecodeError turns an error of a strict JSON decoding (unknown fields disallowed) into what
// the client is told: a value of the wrong type or an unknown field is 422 naming the field, a
// body of the wrong JSON type or no JSON at all is 400 malformed_json.
func DecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field == "" {
		// The body itself is of the wrong JSON type (an array, a string, a number): no field
		// to name, so the body is malformed, as a non-object merge patch is.
		return errs.BadRequest("malformed_json", "the body must be %s", jsonType(te.Type.Kind().String()))
	}
	if errors.As(err, &te) {
		return errs.InvalidField(te.Field, "invalid_type", fmt.Sprintf("must be %s", jsonType(te.Type.Kind().String())))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return errs.InvalidField(strings.Trim(f, `"`), "unknown_field", "is not a field of this resource")
	}
	return errs.BadRequest("malformed_json", "the body is not valid JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	default:
		return "a number"
	}
}
