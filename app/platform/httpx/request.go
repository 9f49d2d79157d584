package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

const requestIDLocal = "requestId"

// SetRequestID stores the request's id (see RequestID).
func SetRequestID(c *fiber.Ctx, id string) { c.Locals(requestIDLocal, id) }

// RequestID returns the id the request middleware gave this request.
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(requestIDLocal).(string)
	return id
}

// Decode reads a JSON body into v: a body that is not JSON is 400, a field of the wrong type or
// an unknown field is 422 naming it, then v.Validate runs when v has it.
func Decode(c *fiber.Ctx, v any) error {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(c.Get(fiber.HeaderContentType), ";", 2)[0]))
	if ct != fiber.MIMEApplicationJSON && ct != "application/merge-patch+json" {
		return fiber.NewError(fiber.StatusUnsupportedMediaType, "send the body as application/json")
	}
	// Read once: with Fiber's Immutable setting every c.Body() is a copy of the body.
	body := c.Body()
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		return errs.BadRequest("malformed_json", "the body must be a JSON object, not null")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsondoc.DecodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errs.BadRequest("malformed_json", "the body must hold one JSON value")
	}
	nulls := nullMembers(c, body)
	var err error
	if val, ok := v.(jsondoc.Validator); ok {
		err = val.Validate()
	}
	if nulls == nil {
		return err
	}
	var inv *errs.Invalid
	switch {
	case err == nil:
		return nulls
	case errors.As(err, &inv):
		named := map[string]bool{}
		for _, e := range nulls.Errors {
			named[e.Field] = true
		}
		for _, e := range inv.Errors {
			if !named[e.Field] {
				nulls.Errors = append(nulls.Errors, e)
			}
		}
		return nulls
	}
	return err
}

const nonNullableLocal = "nonNullable"

// SetNonNullable names the top-level body members the route's schema does not allow to be
// null (app sets it from the OpenAPI document): Decode refuses them as 422 not_nullable
// instead of reading null as an absent member.
func SetNonNullable(c *fiber.Ctx, members map[string]bool) { c.Locals(nonNullableLocal, members) }

// nullMembers lists the members of the body that are null but may not be; nil when none is.
func nullMembers(c *fiber.Ctx, body []byte) *errs.Invalid {
	members, _ := c.Locals(nonNullableLocal).(map[string]bool)
	if len(members) == 0 || !bytes.Contains(body, []byte("null")) {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	var v errs.Invalid
	for name, raw := range obj {
		if members[name] && string(bytes.TrimSpace(raw)) == "null" {
			v.Add(name, "not_nullable", "must not be null; leave it out instead")
		}
	}
	if len(v.Errors) == 0 {
		return nil
	}
	sort.Slice(v.Errors, func(i, j int) bool { return v.Errors[i].Field < v.Errors[j].Field })
	return &v
}

// UUIDParam reads path parameter name as a UUID; anything else is 400.
func UUIDParam(c *fiber.Ctx, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Params(name))
	if err != nil {
		return uuid.Nil, errs.BadRequest("invalid_id", "%s must be a UUID", name)
	}
	return id, nil
}

// QueryUUID reads query parameter name as a UUID filter: nil when absent; anything else than
// a UUID is added to v as invalid_uuid (422 with the other invalid parameters).
func QueryUUID(c *fiber.Ctx, v *errs.Invalid, name string) *uuid.UUID {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	id, err := uuid.Parse(s)
	v.Check(name, err == nil, "invalid_uuid", "must be a UUID")
	if err != nil {
		return nil
	}
	return &id
}

// CheckQuery refuses the query parameters named in params whose values, once decoded, are
// not valid UTF-8 or hold a NUL byte (422 invalid_encoding naming each): PostgreSQL takes
// neither in text, and a filter carrying one would otherwise fail in the database as a server
// error. app's input guard passes the operation's documented query parameters.
func CheckQuery(c *fiber.Ctx, params map[string]bool) error {
	var v errs.Invalid
	c.Context().QueryArgs().VisitAll(func(k, val []byte) {
		if params[string(k)] && !cleanText(val) {
			v.Add(string(k), "invalid_encoding", "must be UTF-8 text without NUL")
		}
	})
	return v.Err()
}

func cleanText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }
