package app

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/account"
	"github.com/brokerdesk/brokerdesk/app/advice"
	"github.com/brokerdesk/brokerdesk/app/appointments"
	"github.com/brokerdesk/brokerdesk/app/commissions"
	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/correspondence"
	"github.com/brokerdesk/brokerdesk/app/delegations"
	"github.com/brokerdesk/brokerdesk/app/doctemplates"
	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/extractions"
	"github.com/brokerdesk/brokerdesk/app/imports"
	"github.com/brokerdesk/brokerdesk/app/intake"
	"github.com/brokerdesk/brokerdesk/app/leads"
	"github.com/brokerdesk/brokerdesk/app/oauth"
	"github.com/brokerdesk/brokerdesk/app/openapi"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/idempotency"
	"github.com/brokerdesk/brokerdesk/app/platform/ratelimit"
	"github.com/brokerdesk/brokerdesk/app/portal"
	"github.com/brokerdesk/brokerdesk/app/portfolio"
	"github.com/brokerdesk/brokerdesk/app/privacy"
	"github.com/brokerdesk/brokerdesk/app/reports"
	"github.com/brokerdesk/brokerdesk/app/sdk"
	"github.com/brokerdesk/brokerdesk/app/search"
	"github.com/brokerdesk/brokerdesk/app/signatures"
	"github.com/brokerdesk/brokerdesk/app/tasks"
	"github.com/brokerdesk/brokerdesk/app/users"
	"github.com/brokerdesk/brokerdesk/app/webhooks"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// V1Prefix is where the Public API v1 lives.
const V1Prefix = httpx.V1Prefix

// routes maps the whole API surface.
func (s *Server) routes(pager *httpx.Pager, o options) {
	s.App.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.App.Get("/readyz", s.readyz)
	sdk.Mount(s.App) // GET /sdk/v1/brokerdesk.js: the JavaScript SDK, outside the API prefix
	// The OAuth 2.0 authorization server (net/http, fosite): /oauth/* and its RFC 8414 metadata.
	authz := oauth.NewServer(s.client, s.oauthSecret, s.limits, o.now)
	oas := adaptor.HTTPHandler(authz.Handler())
	as := func(c *fiber.Ctx) error { // its log lines carry the request id, as the API's do
		c.Context().SetUserValue(oauth.LoggerKey{}, zerolog.Ctx(c.UserContext()))
		c.Context().SetUserValue(oauth.SenderKey{}, s.clients.Bucket(c)) // its per-address limits
		return oas(c)
	}
	s.App.Get(oauth.PathAuthorize, as)
	s.App.Post(oauth.PathAuthorize, as)
	s.App.Post(oauth.PathToken, as)
	s.App.Post(oauth.PathRevoke, as)
	s.App.Post(oauth.PathIntrospect, as)
	s.App.Get(oauth.PathMetadata, as)

	auth := tenancy.NewAuthenticator(s.client, s.drv, policy.Default().RolesSeeingAll(), authz.ValidAccessToken)
	idem := idempotency.New(s.side, o.now)
	idem.OnReplay = s.metrics.Replay
	v1 := s.App.Group(V1Prefix)
	openapi.Mount(v1) // public: the document needs no credential
	// Every v1 route: authenticate (and pin), then count against the credential's quota; a
	// request refused with 401 never reaches the limiter.
	// A sender with too many 401/403 answers gets 429 before authentication (no database work).
	// inputGuard then holds the request to the document's rules the decoders cannot see.
	guard := s.limits.AuthFailures.AuthGuard(s.clients.Bucket)
	api := authed{Router: v1, mw: []fiber.Handler{guard, auth.Secret(), s.limits.API.Middleware(ratelimit.CredentialKey),
		inputGuard()}}
	account.NewHandler().Mount(api)
	users.NewHandler(pager).Mount(api)
	delegations.NewHandler(delegations.NewService(o.now)).Mount(api)
	events.NewHandler(pager, policy.Default()).Mount(api)
	intake.NewHandler(auth, intake.Limits{Key: s.limits.Intake, Sender: s.limits.IntakeSender, Attachments: s.limits.Attachments,
		Guard: guard, Clients: s.clients}, intake.NewService(events.NewService(), o.now)).Mount(s.App, v1)
	contactSvc := contacts.NewService(events.NewService(), s.dataKeys, o.now)
	contractSvc := contracts.NewService(events.NewService())
	contactSvc.OnDelete(contractSvc.DeleteOfContact)
	contacts.NewHandler(contactSvc, pager, idem.Middleware()).Mount(api)
	contacts.NewSubHandler(contactSvc, pager).Mount(api)
	leads.NewHandler(leads.NewService(events.NewService(), contactSvc, o.now), pager, idem.Middleware()).Mount(api)
	contracts.NewHandler(contractSvc, pager, idem.Middleware()).Mount(api)
	docs := documents.NewService(events.NewService(), s.bucket)
	contactSvc.OnDelete(docs.ContactDeleting)
	documents.NewHandler(docs, pager, idem.Middleware()).Mount(api)
	upload := authed{Router: v1, mw: []fiber.Handler{guard, auth.SecretUnpinned(), s.limits.API.Middleware(ratelimit.CredentialKey)}}
	portfolio.NewHandler(s.portfolio.Service(), pager, idem.Middleware(), s.portfolioMaxUpload).Mount(api, upload)
	portfolio.NewMappingHandler(s.portfolio.Service(), pager, idem.Middleware()).Mount(api)
	webhooks.NewHandler(s.hooks.Service(), pager, idem.Middleware()).Mount(api)
	appts := appointments.NewHandler(appointments.NewService(events.NewService(), o.now), idem.Middleware())
	appts.Mount(api)
	appts.MountFeed(api, v1, auth.CalendarFeed(appointments.FeedToken), pager)
	tasks.NewHandler(tasks.NewService(events.NewService(), o.now), pager, idem.Middleware()).Mount(api)
	mail := emails.NewHandler(s.emails.Service(), pager, idem.Middleware())
	mail.Mount(api)
	mail.MountPublic(s.App) // tracking and unsubscribe links: no credential, a signed token each
	correspondence.NewHandler(correspondence.NewService(events.NewService(), s.emails.Service()), pager,
		idem.Middleware()).Mount(api)
	// Documents that brokers sign (issue 22): templates and generation, advice records, and
	// signature requests with the hosted signing page.
	tpl := doctemplates.NewService(events.NewService(), docs, o.now)
	doctemplates.NewHandler(tpl, idem.Middleware()).Mount(api)
	adv := advice.NewService(events.NewService(), tpl, o.now)
	s.signatures.OnCompleted(adv.LockSigned)
	s.signatures.OnCompleted(docs.ReleaseSigned) // what the customer signed is released to its portal (issue 23)
	advice.NewHandler(adv, pager, idem.Middleware()).Mount(api)
	signatures.NewHandler(s.signatures.Service(), pager, idem.Middleware()).Mount(api)
	s.signatures.MountPublic(s.App) // the signing page: no credential, the link's token
	// The customer portal (issue 23): the API that manages it, and the portal's pages (no
	// credential: a customer's session cookie, or a mailed link's token).
	s.portal.UseContacts(contactSvc)
	portal.NewHandler(s.portal.Service(), pager, idem.Middleware()).Mount(api)
	s.portal.MountPublic(s.App)
	// Overview (issue 24): the five reports and the one ranked search.
	reports.NewHandler(reports.NewService(o.now), pager).Mount(api)
	commissions.NewHandler(s.commissions.Service(), pager, idem.Middleware()).Mount(api, upload)
	// Contact imports (issue 25): the upload streams like the portfolio and commission files.
	imports.NewHandler(s.imports.Service(), pager, idem.Middleware()).Mount(api, upload)
	extractions.NewHandler(s.extractions.Service(), idem.Middleware()).Mount(api) // issue 25: contract extraction
	search.NewHandler(search.NewService()).Mount(api)
	// Data-subject requests (issue 25): the API, and the export's download link (no credential).
	s.privacy.UseContacts(contactSvc) // an erasure deletes the contact with its delete hooks
	privacy.NewHandler(s.privacy.Service(), pager, idem.Middleware()).Mount(api)
	s.privacy.MountPublic(s.App)
	if o.testRoutes != nil {
		o.testRoutes(v1, Middleware{Auth: auth.Secret(), RateLimit: s.limits.API.Middleware(ratelimit.CredentialKey),
			Idempotent: idem.Middleware()})
	}
}

// authed prepends the auth middleware to each route it registers, instead of a group-wide
// Use: an unknown path then answers 404 and a wrong method 405, whatever the credential.
type authed struct {
	fiber.Router
	mw []fiber.Handler
}

func (a authed) with(h []fiber.Handler) []fiber.Handler {
	return append(append([]fiber.Handler{}, a.mw...), h...)
}

// Get registers an authenticated GET route.
func (a authed) Get(path string, h ...fiber.Handler) fiber.Router {
	return a.Router.Get(path, a.with(h)...)
}

// Post registers an authenticated POST route.
func (a authed) Post(path string, h ...fiber.Handler) fiber.Router {
	return a.Router.Post(path, a.with(h)...)
}

// Put registers an authenticated PUT route.
func (a authed) Put(path string, h ...fiber.Handler) fiber.Router {
	return a.Router.Put(path, a.with(h)...)
}

// Patch registers an authenticated PATCH route.
func (a authed) Patch(path string, h ...fiber.Handler) fiber.Router {
	return a.Router.Patch(path, a.with(h)...)
}

// Delete registers an authenticated DELETE route.
func (a authed) Delete(path string, h ...fiber.Handler) fiber.Router {
	return a.Router.Delete(path, a.with(h)...)
}

// inputGuard holds each request to what the OpenAPI document says of its operation's input
// (openapi.Inputs): its documented query parameters must be UTF-8 text without NUL (422
// invalid_encoding), and it tells httpx.Decode which body members may not be null. (Free-text
// path parameters, the external ids, are extref.FromPath's.)
func inputGuard() fiber.Handler {
	inputs, err := openapi.Inputs()
	if err != nil {
		panic(err) // the embedded document is tested; failing here is a build defect
	}
	return func(c *fiber.Ctx) error {
		in, ok := inputs[c.Method()+" "+c.Route().Path]
		if !ok {
			return c.Next()
		}
		if err := httpx.CheckQuery(c, in.Query); err != nil {
			return err
		}
		if len(in.NonNullable) > 0 {
			httpx.SetNonNullable(c, in.NonNullable)
		}
		return c.Next()
	}
}
