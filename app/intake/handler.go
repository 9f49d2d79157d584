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

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
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

// headerSecFetchSite is a Fetch Metadata header browsers set (Fiber has no constant for it).
const headerSecFetchSite = "Sec-Fetch-Site"

// Handler serves both intake endpoints. NewHandler builds it.
type Handler struct {
	auth   *tenancy.Authenticator
	limits Limits
	svc    *Service
}

// Limits are the intake's limiters (Redis-backed when REDIS_URL is set, so shared by replicas).
type Limits struct {
	// Key is the spec's quota: 100 valid submissions per key per clock hour.
	Key *ratelimit.Limiter
	// Sender counts browser submissions per (key, sender) for keys with allowed domains, so
	// one visitor cannot use up a website's quota for everyone else (submit says which).
	Sender *ratelimit.Limiter
	// Attachments bounds attachment bytes per company per day.
	Attachments *ratelimit.Limiter
	// Guard answers a sender with too many 401/403 answers 429 before any work (the one
	// ratelimit.Limiter.AuthGuard of the server, shared with the v1 API).
	Guard fiber.Handler
	// Clients tells the sender (X-Forwarded-For only from trusted proxies).
	Clients ratelimit.Clients
}

// NewHandler returns the handler: auth resolves publishable keys, limits bound the intake.
func NewHandler(auth *tenancy.Authenticator, limits Limits, svc *Service) *Handler {
	return &Handler{auth: auth, limits: limits, svc: svc}
}

// Mount registers the legacy endpoint on app and the v1 operation on v1 (the /api/public/v1
// group), each with its CORS preflight.
func (h *Handler) Mount(app *fiber.App, v1 fiber.Router) {
	// Fiber picks the error handler of a mounted app by path prefix, for errors of the route
	// chain and for those it raises before any route runs (a body over the server's limit: 413).
	// The app mounted here has no routes; it lends the legacy path its error shape.
	app.Mount(LegacyPath, fiber.New(fiber.Config{ErrorHandler: legacyError}))
	app.Options(LegacyPath, preflight)
	guard := h.limits.Guard
	// A key in X-API-Key is resolved before the body is parsed (a large multipart body costs
	// nothing for an unknown key); only a form's _key needs the body first.
	headerAuth, bodyAuth := h.auth.Publishable(headerKey), h.auth.Publishable(keyOf)
	app.Post(LegacyPath, begin, guard, h.keyFirst(headerAuth), readBody, h.keyAfter(bodyAuth),
		h.submit(leadsubmission.ChannelLegacy, legacyDone))
	v1.Options(V1Path, preflight)
	v1.Post(V1Path, begin, v1Errors, v1Challenge, guard, h.keyFirst(headerAuth), readBody, h.keyAfter(bodyAuth),
		h.submit(leadsubmission.ChannelIntake, v1Done))
}

// keyFirst authenticates with the X-API-Key header when there is one; the rest of the chain
// (body, submit) then runs inside the request transaction it begins.
func (h *Handler) keyFirst(auth fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if headerKey(c) == "" {
			return c.Next()
		}
		return auth(c)
	}
}

// keyAfter authenticates with the body's _key when keyFirst did not.
func (h *Handler) keyAfter(auth fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, ok := tenancy.PrincipalFrom(c.UserContext()); ok {
			return c.Next()
		}
		return auth(c)
	}
}

// v1Challenge names the intake's credential in a 401: a publishable key in X-API-Key (or the
// form field _key), not a Bearer token (RFC 9110 §11.6.1: the challenge says how to
// authenticate). The mapper sets the v1 API's Bearer challenge; this one replaces it.
func v1Challenge(c *fiber.Ctx) error {
	err := c.Next()
	if errors.Is(err, errs.ErrUnauthenticated) {
		defer c.Set(fiber.HeaderWWWAuthenticate, challenge)
		return httpx.ErrorHandler(c, err)
	}
	return err
}

// challenge is the WWW-Authenticate of the intake's 401.
const challenge = `APIKey realm="brokerdesk", header="` + HeaderAPIKey + `", form-field="_key"`

func headerKey(c *fiber.Ctx) string { return strings.TrimSpace(c.Get(HeaderAPIKey)) }

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
	if k := headerKey(c); k != "" {
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
		// A browser submission with a website's key (one with allowed domains) counts against
		// its sender's bucket, valid or not, so one visitor cannot use up the form's quota for
		// everyone else. A server (a website backend forwarding its form's leads, no Origin) and
		// a key without allowed domains get the key's whole quota from one sender: the spec
		// names server-to-server calls as a route and gives the key 100 an hour
		// (docs/decisions.md "Intake quota"). Only valid submissions count against the key.
		if len(p.AllowedDomains) > 0 && browserSubmission(c) {
			if d := h.limits.Sender.Allow(ctx, p.KeyID.String()+"|"+h.limits.Clients.Bucket(c)); !d.Allowed {
				d.SetHeaders(c)
				return &rateLimited{err: d.Err(), retryAfter: d.RetryAfterSeconds()}
			}
		}
		if err := in.Validate(p.AllowedDomains, lang); err != nil {
			return err
		}
		d := h.limits.Key.Allow(ctx, p.KeyID.String())
		d.SetHeaders(c)
		if !d.Allowed {
			return &rateLimited{err: d.Err(), retryAfter: d.RetryAfterSeconds()}
		}
		var size int64
		for _, f := range in.Files {
			size += int64(len(f.Content))
		}
		if size > 0 {
			if ad := h.limits.Attachments.AllowN(ctx, p.CompanyID.String(), size); !ad.Allowed {
				h.limits.Key.Refund(ctx, p.KeyID.String(), d)
				ad.SetHeaders(c)
				return &rateLimited{err: errs.RateLimited("%s", msgAttachmentQuota(lang)), retryAfter: ad.RetryAfterSeconds()}
			}
		}
		res, err := h.svc.Submit(ctx, in, channel)
		if err != nil {
			if tenancy.Classify(err) == tenancy.Transient {
				h.limits.Key.Refund(ctx, p.KeyID.String(), d) // rolled back: it runs again or gets 503
			}
			return storeError(err, lang)
		}
		if target, ok := redirectURL(in.Redirect, p.AllowedDomains); ok {
			return c.Redirect(target, fiber.StatusFound)
		}
		return done(c, res.Outcome)
	}
}

// browserSubmission reports whether a browser sent the request. Browsers send Origin with
// every POST, a fetch and a form alike (Fetch standard; "null" under a no-referrer policy), and
// Sec-Fetch-Site with every request (Chromium 76, Firefox 90, Safari 16.4); a page's script can
// remove neither (forbidden header names). A server posting a lead sends neither; a client that
// fakes them only puts itself under the per-sender limit.
func browserSubmission(c *fiber.Ctx) bool {
	h := &c.Request().Header
	return len(h.Peek(fiber.HeaderOrigin)) > 0 || len(h.Peek(headerSecFetchSite)) > 0
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
