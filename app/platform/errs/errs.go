// Package errs holds the HTTP-free error kinds that services return. app/platform/httpx maps them to
// RFC 9457 problems; nothing else decides a status code.
package errs

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Kinds. Compare with errors.Is.
var (
	ErrUnauthenticated = errors.New("unauthenticated")
	ErrForbidden       = errors.New("forbidden")
	ErrNotFound        = errors.New("not found")
	ErrConflict        = errors.New("conflict")
	ErrPrecondition    = errors.New("precondition failed")
	ErrPreconditionReq = errors.New("precondition required")
	ErrInvalid         = errors.New("invalid")
	ErrBadRequest      = errors.New("bad request")
	ErrRateLimited     = errors.New("rate limited")
	ErrTooLarge        = errors.New("too large")
	ErrUnsupported     = errors.New("unsupported media type")
	ErrStorage         = errors.New("storage failed")
	ErrUnavailable     = errors.New("unavailable")
	ErrPayment         = errors.New("payment required")
)

// E is an error of one kind with a stable machine code and a detail that is safe to show.
type E struct {
	Kind   error
	Code   string
	Detail string
}

func (e *E) Error() string { return e.Detail }

// Unwrap gives the kind.
func (e *E) Unwrap() error { return e.Kind }

func newE(kind error, code, format string, args ...any) *E {
	return &E{Kind: kind, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Unauthenticated is a missing, unknown or inactive credential (401).
func Unauthenticated(code, format string, args ...any) error {
	return newE(ErrUnauthenticated, code, format, args...)
}

// Forbidden is a credential that may not do this (403): a missing scope, an unlicensed feature.
func Forbidden(code, format string, args ...any) error {
	return newE(ErrForbidden, code, format, args...)
}

// NotFound is a missing resource, including one of another company (404).
func NotFound(format string, args ...any) error {
	return newE(ErrNotFound, "not_found", format, args...)
}

// Conflict is a clash with the current state (409).
func Conflict(code, format string, args ...any) error {
	return newE(ErrConflict, code, format, args...)
}

// BadRequest is a malformed request: bad JSON, a bad path or query parameter (400).
func BadRequest(code, format string, args ...any) error {
	return newE(ErrBadRequest, code, format, args...)
}

// RateLimited is a request over its quota (429); the limiter sets Retry-After.
func RateLimited(format string, args ...any) error {
	return newE(ErrRateLimited, "rate_limited", format, args...)
}

// TooLarge is a request body or file over its size limit (413).
func TooLarge(code, format string, args ...any) error {
	return newE(ErrTooLarge, code, format, args...)
}

// Unsupported is content of a type the endpoint does not take (415), judged by the content.
func Unsupported(code, format string, args ...any) error {
	return newE(ErrUnsupported, code, format, args...)
}

// Storage is stored content that cannot be served as it was stored (502): blob storage lost
// it or returned other bytes. The request changed nothing; the server logs it as an error.
func Storage(code, format string, args ...any) error {
	return newE(ErrStorage, code, format, args...)
}

// Unavailable is a passing failure of a service the request needs other than the database
// (503, Retry-After): blob storage did not answer. Nothing was changed or sent; retry.
func Unavailable(code, format string, args ...any) error {
	return newE(ErrUnavailable, code, format, args...)
}

// PaymentRequired is a request the company's balance does not cover (402): sending e-mail
// without enough points. Nothing was changed; granting points and retrying succeeds.
func PaymentRequired(code, format string, args ...any) error {
	return newE(ErrPayment, code, format, args...)
}

// FieldError is one invalid field of a 422.
type FieldError struct {
	Field  string `json:"field"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Invalid collects every invalid field of a request (422). The zero value is ready to use.
type Invalid struct {
	Errors []FieldError
}

// Add records one invalid field.
func (v *Invalid) Add(field, code, detail string) {
	v.Errors = append(v.Errors, FieldError{Field: field, Code: code, Detail: detail})
}

// Check records field as invalid with code and detail unless ok.
func (v *Invalid) Check(field string, ok bool, code, detail string) {
	if !ok {
		v.Add(field, code, detail)
	}
}

// Require records field as missing unless ok.
func (v *Invalid) Require(field string, ok bool) {
	v.Check(field, ok, "required", "is required")
}

// CheckUUID records field as invalid_uuid unless s is absent (nil) or a UUID.
func (v *Invalid) CheckUUID(field string, s *string) {
	if s != nil {
		_, err := uuid.Parse(*s)
		v.Check(field, err == nil, "invalid_uuid", "must be a UUID")
	}
}

// Err returns v as an error, or nil when no field was added.
func (v *Invalid) Err() error {
	if len(v.Errors) == 0 {
		return nil
	}
	return v
}

func (v *Invalid) Error() string {
	return fmt.Sprintf("%d invalid field(s), first %s: %s", len(v.Errors), v.Errors[0].Field, v.Errors[0].Detail)
}

// Unwrap gives the kind.
func (v *Invalid) Unwrap() error { return ErrInvalid }

// InvalidField is a 422 for one field.
func InvalidField(field, code, detail string) error {
	var v Invalid
	v.Add(field, code, detail)
	return &v
}

// Prefixed returns err with every field of an Invalid named prefix + field, for a body nested
// in another ("overrides." in lead conversion); any other error comes back unchanged.
func Prefixed(err error, prefix string) error {
	var v *Invalid
	if !errors.As(err, &v) {
		return err
	}
	out := &Invalid{Errors: make([]FieldError, len(v.Errors))}
	for i, e := range v.Errors {
		e.Field = prefix + e.Field
		out.Errors[i] = e
	}
	return out
}
