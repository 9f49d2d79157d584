// Package intake serves the lead intake: POST /api/public/leads (legacy, lead-intake.md) and
// POST /api/public/v1/leads/intake. Both run one chain (read the body, check the publishable
// key, license, Origin and rate limit, validate, store) and differ only in how they shape
// answers: the legacy path keeps its own bodies ({} and {error, violations}), v1 answers
// {status} and RFC 9457 problems. Website forms post here with a key that is public by design:
// it can only create leads, never read them.
package intake

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/errs"
	"github.com/brokerdesk/brokerdesk/app/httpx"
	"github.com/brokerdesk/brokerdesk/app/ratelimit"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadsubmission"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Paths of the two endpoints: LegacyPath from the server root, V1Path inside /api/public/v1.
const (
	LegacyPath = "/api/public/leads"
	V1Path     = "/leads/intake"
)

// HeaderAPIKey carries the publishable key; the body field _key is the fallback for HTML forms.
const HeaderAPIKey = "X-API-Key"

// Handler serves both intake endpoints. NewHandler builds it.
type Handler struct {
	auth    *tenancy.Authenticator
	limiter *ratelimit.Limiter
	svc     *Service
}

// NewHandler returns the handler: auth resolves publishable keys, limiter is the intake quota
// (100 per key per clock hour; Redis-backed when REDIS_URL is set, so shared by replicas).
func NewHandler(auth *tenancy.Authenticator, limiter *ratelimit.Limiter, svc *Service) *Handler {
	return &Handler{auth: auth, limiter: limiter, svc: svc}
}

// Mount registers the legacy endpoint on app and the v1 operation on v1 (the /api/public/v1
// group), each with its CORS preflight.
func (h *Handler) Mount(app *fiber.App, v1 fiber.Router) {
	// Fiber picks the error handler of a mounted app by path prefix, for errors of the route
	// chain and for those it raises before any route runs (a body over the server's limit: 413).
	// The app mounted here has no routes; it lends the legacy path its error shape.
	app.Mount(LegacyPath, fiber.New(fiber.Config{ErrorHandler: legacyError}))
	app.Options(LegacyPath, preflight)
	app.Post(LegacyPath, begin, readBody, h.auth.Publishable(keyOf), h.submit(leadsubmission.ChannelLegacy, legacyDone))
	v1.Options(V1Path, preflight)
	v1.Post(V1Path, begin, v1Errors, readBody, h.auth.Publishable(keyOf), h.submit(leadsubmission.ChannelIntake, v1Done))
}

const (
	langLocal       = "intake.lang"
	submissionLocal = "intake.submission"
)

// CORS: any page may post (the key, not the page, says which company gets the lead); the key's
// allowed domains then restrict the Origin of the actual POST (submit). No cookies are used, so
// Access-Control-Allow-Credentials is never sent and "*" is allowed.
const (
	corsAllowHeaders  = "Content-Type, X-API-Key, Accept-Language, X-Request-Id"
	corsExposeHeaders = "Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, RateLimit, X-Request-Id, Content-Language"
	corsMaxAge        = "7200" // Chromium's cap
)

func setCORS(c *fiber.Ctx) {
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set(fiber.HeaderAccessControlExposeHeaders, corsExposeHeaders)
}

// preflight answers OPTIONS for any origin: the key is not sent with a preflight, so the
// origin cannot be judged yet.
func preflight(c *fiber.Ctx) error {
	setCORS(c)
	c.Set(fiber.HeaderAccessControlAllowMethods, "POST, OPTIONS")
	c.Set(fiber.HeaderAccessControlAllowHeaders, corsAllowHeaders)
	c.Set(fiber.HeaderAccessControlMaxAge, corsMaxAge)
	c.Status(fiber.StatusNoContent)
	return nil
}

// begin sets what every answer carries: CORS headers and the language (Content-Language).
func begin(c *fiber.Ctx) error {
	setCORS(c)
	c.Locals(langLocal, httpx.Lang(c))
	return c.Next()
}

func langOf(c *fiber.Ctx) string {
	if l, ok := c.Locals(langLocal).(string); ok {
		return l
	}
	return httpx.Lang(c)
}

// readBody reads the submission before authentication: an HTML form carries its key in it.
func readBody(c *fiber.Ctx) error {
	in, err := read(c, langOf(c))
	if err != nil {
		return err
	}
	c.Locals(submissionLocal, in)
	return c.Next()
}

// keyOf is the publishable key: X-API-Key, else the body's _key.
func keyOf(c *fiber.Ctx) string {
	if k := strings.TrimSpace(c.Get(HeaderAPIKey)); k != "" {
		return k
	}
	if in, ok := c.Locals(submissionLocal).(*Submission); ok {
		return in.Key
	}
	return ""
}

// submit runs after the key was resolved (401 before here): license and Origin (403, not
// counted), the quota (429), validation (400/422, counted: a request that reached it used the
// quota), then the store. A valid _redirect answers 302 to it, for a new lead and a merged one
// alike: the visitor of a form sees the thank-you page either way.
func (h *Handler) submit(channel leadsubmission.Channel, done func(*fiber.Ctx, Outcome) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		lang := langOf(c)
		in, _ := c.Locals(submissionLocal).(*Submission)
		p, ok := tenancy.PrincipalFrom(ctx)
		if in == nil || !ok {
			return errors.New("intake: submission or principal missing")
		}
		if !p.HasFeature("leads") {
			return errs.Forbidden("feature_not_licensed", "%s", msgNotLicensed(lang))
		}
		if !originAllowed(c.Get(fiber.HeaderOrigin), p.AllowedDomains) {
			return errs.Forbidden("origin_not_allowed", "%s", msgOriginNotAllowed(lang))
		}
		d := h.limiter.Allow(ctx, p.KeyID.String())
		d.SetHeaders(c)
		if !d.Allowed {
			return &rateLimited{err: d.Err(), retryAfter: d.RetryAfterSeconds()}
		}
		if err := in.Validate(p.AllowedDomains, lang); err != nil {
			return err
		}
		res, err := h.svc.Submit(ctx, in, channel)
		if err != nil {
			if tenancy.Classify(err) == tenancy.Transient {
				h.limiter.Refund(ctx, p.KeyID.String(), d) // rolled back: it runs again or gets 503
			}
			return storeError(err, lang)
		}
		if target, ok := redirectURL(in.Redirect, p.AllowedDomains); ok {
			return c.Redirect(target, fiber.StatusFound)
		}
		return done(c, res.Outcome)
	}
}

// rateLimited is a refused request with the seconds to wait (the Retry-After header and the
// legacy retryAfter field hold the same number). It unwraps to the 429 error kind.
type rateLimited struct {
	err        error
	retryAfter int64
}

func (r *rateLimited) Error() string { return r.err.Error() }
func (r *rateLimited) Unwrap() error { return r.err }

// storeError turns a schema validator's refusal (ent/schema/lead.go) into the field's
// violation, should the schema ever be stricter than Validate: bad input is never a 500.
func storeError(err error, lang string) error {
	var ve *ent.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	field, max := "", 0
	switch ve.Name {
	case "first_name":
		field, max = "firstName", MaxNameLen
	case "last_name":
		field, max = "lastName", MaxNameLen
	case "email", "email_key":
		field, max = "email", MaxEmailLen
	case "phone", "phone_key":
		field, max = "phone", MaxPhoneLen
	default:
		return err
	}
	return invalid([]violation{{Field: field, Code: codeTooLong, Max: max}}, lang)
}

// v1Done answers 201 {status}.
func v1Done(c *fiber.Ctx, o Outcome) error {
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"status": o})
}

// v1Errors adapts the chain's errors to v1: a problem's errors[] names real fields, so the
// e-mail-or-phone rule (field "" in the legacy shape) is reported on both email and phone.
func v1Errors(c *fiber.Ctx) error {
	err := c.Next()
	var inv *errs.Invalid
	if errors.As(err, &inv) {
		out := make([]errs.FieldError, 0, len(inv.Errors)+1)
		for _, e := range inv.Errors {
			if e.Field == "" {
				out = append(out, errs.FieldError{Field: "email", Code: e.Code, Detail: e.Detail},
					errs.FieldError{Field: "phone", Code: e.Code, Detail: e.Detail})
				continue
			}
			out = append(out, e)
		}
		inv.Errors = out
	}
	return err
}
