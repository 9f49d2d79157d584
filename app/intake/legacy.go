package intake

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// The legacy endpoint's bodies (lead-intake.md). They are plain application/json, not problems:
// existing website integrations read exactly these.
type (
	legacyViolation struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	}
	legacyInvalid struct {
		Error      string            `json:"error"`
		Violations []legacyViolation `json:"violations"`
	}
	legacyMessage struct {
		Error string `json:"error"`
	}
	legacyLimited struct {
		Error      string `json:"error"`
		RetryAfter int64  `json:"retryAfter"`
	}
)

// Fixed texts of the legacy bodies. The spec gives the first three; the others keep the same
// {error} shape (403, 413, 415, 404, 405, 500: the spec shows no body).
const (
	legacyValidationFailed = "Validation failed"
	legacyInvalidKey       = "Invalid or inactive API key"
	legacyRateLimited      = "rate_limit_exceeded"
	legacyNotLicensed      = "Leads module not licensed"
	legacyOriginNotAllowed = "Origin not allowed"
	legacyInternal         = "Internal server error"
)

// legacyDone answers 201 with an empty object, for a created and an updated lead alike.
func legacyDone(c *fiber.Ctx, _ Outcome) error {
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{})
}

// legacyError writes every error under LegacyPath in the legacy shape. The status is the one
// app/platform/httpx decides for the error, except that a validation failure (422 in v1) is 400 here and
// a malformed body (400) is reported as a violation of field "" so that every 400 has the shape
// the spec documents.
func legacyError(c *fiber.Ctx, err error) error {
	setCORS(c)
	httpx.Lang(c) // Content-Language; violation messages are in that language already
	id := httpx.RequestID(c)
	if id == "" { // errors Fiber raises before the middleware ran (413)
		id = uuid.NewString()
		httpx.SetRequestID(c, id)
		c.Set(httpx.RequestIDHeader, id)
	}
	p := httpx.ToProblem(err)
	status := p.Status
	var body any
	switch {
	case status == http.StatusBadRequest:
		body = legacyInvalid{Error: legacyValidationFailed, Violations: []legacyViolation{{Field: "", Message: p.Detail}}}
	case status == http.StatusUnprocessableEntity:
		status = http.StatusBadRequest
		vs := make([]legacyViolation, len(p.Errors))
		for i, e := range p.Errors {
			vs[i] = legacyViolation{Field: e.Field, Message: e.Detail}
		}
		body = legacyInvalid{Error: legacyValidationFailed, Violations: vs}
	case status == http.StatusUnauthorized:
		body = legacyMessage{Error: legacyInvalidKey}
	case status == http.StatusForbidden:
		switch p.Code {
		case "feature_not_licensed":
			body = legacyMessage{Error: legacyNotLicensed}
		case "origin_not_allowed":
			body = legacyMessage{Error: legacyOriginNotAllowed}
		default:
			body = legacyMessage{Error: http.StatusText(status)}
		}
	case status == http.StatusTooManyRequests:
		var rl *rateLimited
		retry := int64(1)
		if errors.As(err, &rl) {
			retry = rl.retryAfter
		} else if n, perr := strconv.ParseInt(string(c.Response().Header.Peek(fiber.HeaderRetryAfter)), 10, 64); perr == nil {
			retry = n
		}
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(retry, 10))
		body = legacyLimited{Error: legacyRateLimited, RetryAfter: retry}
	case status == http.StatusServiceUnavailable:
		retry := int64(httpx.RetryAfterUnavailable)
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(retry, 10))
		zerolog.Ctx(c.UserContext()).Warn().Err(err).Str("request_id", id).Str("code", p.Code).Msg("database unavailable")
		// The {error, retryAfter} shape of 429, with the problem's code: "unavailable" (nothing
		// stored) or "commit_outcome_unknown" (the lead may be stored; a repeated submission
		// merges into it as a duplicate).
		body = legacyLimited{Error: p.Code, RetryAfter: retry}
	case status >= http.StatusInternalServerError:
		zerolog.Ctx(c.UserContext()).Error().Err(err).Str("request_id", id).Msg("internal error")
		body = legacyMessage{Error: legacyInternal}
	default: // 404, 405, 413, 415 ...
		body = legacyMessage{Error: http.StatusText(status)}
	}
	return c.Status(status).JSON(body)
}
