// Package httpx holds the HTTP pieces every resource uses, each once: the problem mapper, the
// decoder, path parameters, responses with ETags and the pagination helper.
package httpx

import (
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/privacy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ProblemBase is the prefix of every problem type URI; the rest names the kind.
const ProblemBase = "https://brokerdesk.dev/problems/"

// Problem types, one per kind.
const (
	TypeBadRequest       = ProblemBase + "bad-request"
	TypeUnauthorized     = ProblemBase + "unauthorized"
	TypeForbidden        = ProblemBase + "forbidden"
	TypeNotFound         = ProblemBase + "not-found"
	TypeMethodNotAllowed = ProblemBase + "method-not-allowed"
	TypeConflict         = ProblemBase + "conflict"
	TypePrecondition     = ProblemBase + "precondition-failed"
	TypePreconditionReq  = ProblemBase + "precondition-required"
	TypeTooLarge         = ProblemBase + "payload-too-large"
	TypeUnsupportedMedia = ProblemBase + "unsupported-media-type"
	TypeValidation       = ProblemBase + "validation-failed"
	TypeRateLimited      = ProblemBase + "rate-limited"
	TypeInternal         = ProblemBase + "internal"
	TypeUnavailable      = ProblemBase + "unavailable"
	TypeStorage          = ProblemBase + "storage-failed"
	TypeCommitUnknown    = ProblemBase + "commit-outcome-unknown"
	TypePaymentRequired  = ProblemBase + "payment-required"
)

// RetryAfterUnavailable is the Retry-After (seconds) of a 503 for a passing database failure:
// the server already retried within its budget (DB_RETRY_BUDGET), so the blip is longer than
// that; a second is enough for the pool to reconnect after a restart.
const RetryAfterUnavailable = 1

// ContentTypeProblem is the media type of every error body.
const ContentTypeProblem = "application/problem+json"

// Problem is an RFC 9457 problem body. Code is a stable machine code; Errors lists every invalid
// field of a 422.
type Problem struct {
	Type      string            `json:"type"`
	Title     string            `json:"title"`
	Status    int               `json:"status"`
	Detail    string            `json:"detail"`
	Instance  string            `json:"instance"`
	Code      string            `json:"code"`
	RequestID string            `json:"requestId,omitempty"`
	Errors    []errs.FieldError `json:"errors,omitempty"`
}

type kind struct {
	err    error
	status int
	typ    string
}

var kinds = []kind{
	{errs.ErrBadRequest, http.StatusBadRequest, TypeBadRequest},
	{errs.ErrUnauthenticated, http.StatusUnauthorized, TypeUnauthorized},
	{errs.ErrForbidden, http.StatusForbidden, TypeForbidden},
	{errs.ErrNotFound, http.StatusNotFound, TypeNotFound},
	{errs.ErrConflict, http.StatusConflict, TypeConflict},
	{errs.ErrPrecondition, http.StatusPreconditionFailed, TypePrecondition},
	{errs.ErrPreconditionReq, http.StatusPreconditionRequired, TypePreconditionReq},
	{errs.ErrInvalid, http.StatusUnprocessableEntity, TypeValidation},
	{errs.ErrRateLimited, http.StatusTooManyRequests, TypeRateLimited},
	{errs.ErrTooLarge, http.StatusRequestEntityTooLarge, TypeTooLarge},
	{errs.ErrUnsupported, http.StatusUnsupportedMediaType, TypeUnsupportedMedia},
	{errs.ErrStorage, http.StatusBadGateway, TypeStorage},
	{errs.ErrUnavailable, http.StatusServiceUnavailable, TypeUnavailable},
	{errs.ErrPayment, http.StatusPaymentRequired, TypePaymentRequired},
}

// fiberTypes maps the statuses Fiber itself produces (routing, body limits) to problem types.
var fiberTypes = map[int]struct{ typ, code string }{
	http.StatusBadRequest:            {TypeBadRequest, "bad_request"},
	http.StatusNotFound:              {TypeNotFound, "route_not_found"},
	http.StatusMethodNotAllowed:      {TypeMethodNotAllowed, "method_not_allowed"},
	http.StatusRequestEntityTooLarge: {TypeTooLarge, "payload_too_large"},
	http.StatusUnsupportedMediaType:  {TypeUnsupportedMedia, "unsupported_media_type"},
	http.StatusRequestTimeout:        {TypeBadRequest, "request_timeout"},
	http.StatusServiceUnavailable:    {TypeUnavailable, "unavailable"},
}

// ToProblem turns any error into the problem the client sees. It is the only place that
// decides an error's status.
func ToProblem(err error) Problem {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		t, ok := fiberTypes[fe.Code]
		if !ok {
			t = struct{ typ, code string }{TypeInternal, "internal"}
			if fe.Code < 500 {
				t = struct{ typ, code string }{TypeBadRequest, "bad_request"}
			}
		}
		detail := fe.Message
		if fe.Code == http.StatusNotFound {
			detail = "no such route"
		}
		return Problem{Type: t.typ, Title: http.StatusText(fe.Code), Status: fe.Code, Detail: detail, Code: t.code}
	}
	switch tenancy.Classify(err) {
	case tenancy.Transient:
		return Problem{Type: TypeUnavailable, Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
			Detail: "the database is briefly unavailable; nothing was changed, retry the request", Code: "unavailable"}
	case tenancy.CommitUnknown:
		return Problem{Type: TypeCommitUnknown, Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
			Detail: "the connection to the database broke while the change was committed; it may or may not be stored: " +
				"retry with the same Idempotency-Key, or read before writing again", Code: "commit_outcome_unknown"}
	}
	var inv *errs.Invalid
	if errors.As(err, &inv) {
		return Problem{Type: TypeValidation, Title: "Validation failed", Status: http.StatusUnprocessableEntity,
			Detail: "the request has invalid fields", Code: "validation_failed", Errors: inv.Errors}
	}
	var e *errs.E
	if errors.As(err, &e) {
		for _, k := range kinds {
			if errors.Is(e.Kind, k.err) {
				return Problem{Type: k.typ, Title: http.StatusText(k.status), Status: k.status, Detail: e.Detail, Code: e.Code}
			}
		}
	}
	var ve *ent.ValidationError
	switch {
	case errors.As(err, &ve):
		return Problem{Type: TypeValidation, Title: "Validation failed", Status: http.StatusUnprocessableEntity,
			Detail: "the request has invalid fields", Code: "validation_failed",
			Errors: []errs.FieldError{{Field: camel(ve.Name), Code: "invalid", Detail: "is not valid"}}}
	case ent.IsNotFound(err):
		return Problem{Type: TypeNotFound, Title: "Not Found", Status: http.StatusNotFound, Detail: "resource not found", Code: "not_found"}
	case ent.IsConstraintError(err):
		return Problem{Type: TypeConflict, Title: "Conflict", Status: http.StatusConflict,
			Detail: "the change conflicts with an existing record", Code: "conflict"}
	case errors.Is(err, privacy.Deny):
		return Problem{Type: TypeForbidden, Title: "Forbidden", Status: http.StatusForbidden, Detail: "not allowed", Code: "forbidden"}
	}
	return Problem{Type: TypeInternal, Title: "Internal Server Error", Status: http.StatusInternalServerError,
		Detail: "internal error", Code: "internal"}
}

// camel turns a snake_case column name into the API's camelCase field name.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// ErrorHandler is Fiber's error handler: it writes every error as a problem and logs the ones
// that are the server's fault, once, with the request id.
func ErrorHandler(c *fiber.Ctx, err error) error {
	p := ToProblem(err)
	p.Instance = c.Path()
	p.RequestID = RequestID(c)
	if p.RequestID == "" {
		// An error the server raised before any middleware ran (a body over the size limit):
		// it gets an id all the same, so every answer carries X-Request-Id.
		p.RequestID = uuid.NewString()
		c.Set(RequestIDHeader, p.RequestID)
	}
	log := zerolog.Ctx(c.UserContext())
	switch {
	case p.Type == TypeUnavailable || p.Type == TypeCommitUnknown:
		// A passing failure (the database, blob storage), not a bug: a warning, once, with what
		// the client was told.
		log.Warn().Err(err).Str("request_id", p.RequestID).Str("code", p.Code).Msg("service unavailable")
	case p.Status >= 500:
		log.Error().Err(err).Str("request_id", p.RequestID).Msg("internal error")
	case errors.Is(err, privacy.Deny):
		// The route's scope check passed but ent privacy denied: a missing company is a bug.
		log.Warn().Err(err).Str("request_id", p.RequestID).Msg("privacy denied")
	}
	switch p.Status {
	case http.StatusUnauthorized:
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="brokerdesk"`)
	case http.StatusMethodNotAllowed:
		c.Set(fiber.HeaderAllow, strings.Join(allowed(c), ", "))
	case http.StatusServiceUnavailable:
		if len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(RetryAfterUnavailable))
		}
	}
	c.Status(p.Status)
	return c.JSON(p, ContentTypeProblem)
}

// allowed lists the methods the app serves on the request's path (RFC 9110: a 405 names them).
func allowed(c *fiber.Ctx) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range c.App().GetRoutes(true) {
		if !seen[r.Method] && r.Method != fiber.MethodHead && matchPath(r.Path, c.Path()) {
			seen[r.Method] = true
			out = append(out, r.Method)
		}
	}
	sort.Strings(out)
	return out
}

// matchPath matches a Fiber route pattern ("/users/:userId") against a request path.
func matchPath(pattern, path string) bool {
	ps, xs := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if !strings.HasPrefix(p, ":") && p != xs[i] {
			return false
		}
	}
	return true
}
