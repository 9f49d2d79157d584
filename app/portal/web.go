package portal

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/company"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The portal's web app: server-rendered HTML (html/template, German, one column, no script),
// under /portal/{companyId}/. Every page sends a strict CSP without any script source, no
// framing, nosniff, no referrer (invitation and reset links carry their secret in the URL) and
// no-store. Every form carries a CSRF token: an HMAC of a per-browser nonce kept in a
// SameSite=Strict, HttpOnly cookie (csrfField, csrfOK), checked before anything else.

//go:embed pages/*.html
var pageFiles embed.FS

// MountPublic registers the portal's pages (no API credential: the session cookie or a mailed
// link's token is the credential). The route table is the portal's whole surface; the
// handlers live in auth.go (sign-in, invitation, reset, second factor) and pages.go (what a
// signed-in customer sees and does).
func (m *Module) MountPublic(app *fiber.App) {
	g := app.Group("/portal/:companyId", m.pageErrors, m.company)
	// Before sign-in (auth.go).
	g.Get("/login", m.loginPage)
	g.Post("/login", m.login)
	g.Get("/login/code", m.codePage)
	g.Post("/login/code", m.code)
	g.Post("/logout", m.logout)
	g.Get("/invitation/:token", m.invitationPage)
	g.Post("/invitation/:token", m.acceptInvitation)
	g.Get("/reset", m.resetRequestPage)
	g.Post("/reset", m.requestReset)
	g.Get("/reset/:token", m.resetPage)
	g.Post("/reset/:token", m.reset)
	g.Get("/security", m.securityPage)
	g.Post("/security/totp", m.enableTOTP)
	g.Post("/security/totp/disable", m.disableTOTP)
	// Signed in (pages.go).
	g.Get("/", m.overview)
	g.Get("/contracts", m.contracts)
	g.Get("/documents", m.documents)
	g.Get("/documents/:documentId", m.download)
	g.Get("/signatures", m.signatures)
	g.Post("/signatures/:signerId/open", m.openSigning)
	g.Get("/changes", m.changes)
	g.Get("/changes/new/:kind", m.changeForm)
	g.Post("/changes/new/:kind", m.submitChange)
	g.Post("/changes/:changeRequestId/withdraw", m.withdrawChange)
	g.Use(m.notFound)
}

type companyKey struct{}

// portalCompany is the company of the path, its name for the pages' branding.
type portalCompany struct {
	ID   uuid.UUID
	Name string
}

// company resolves /portal/{companyId}: an active company that licenses customer_portal, else
// the same 404 page for every id (a guessed id tells nothing).
func (m *Module) company(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("companyId"))
	if err != nil {
		return m.notFound(c)
	}
	var pc *portalCompany
	err = m.companyTx(c.UserContext(), id, func(ctx context.Context) error {
		co, err := tenancy.Client(ctx).Company.Query().Where(company.ID(id), company.StatusEQ(company.StatusActive)).
			Only(ctx)
		if err != nil {
			return err
		}
		for _, f := range co.Features {
			if f == "customer_portal" {
				pc = &portalCompany{ID: co.ID, Name: co.Name}
			}
		}
		return nil
	})
	if err != nil || pc == nil {
		return m.notFound(c)
	}
	c.Locals(companyKey{}, pc)
	return c.Next()
}

// companyOf is the company resolved for the request's path.
func companyOf(c *fiber.Ctx) *portalCompany {
	pc, _ := c.Locals(companyKey{}).(*portalCompany)
	return pc
}

// base is the path of a company's portal ("/portal/{companyId}"), without a trailing slash.
func (m *Module) base(company uuid.UUID) string { return "/portal/" + company.String() }

// URL is the absolute address of path (beginning with "/") in company's portal: the links the
// mails carry, and brokerdesk dev prints.
func (m *Module) URL(company uuid.UUID, path string) string {
	return m.d.PublicURL + m.base(company) + path
}

// pageErrors answers an error a portal handler returned with an HTML page, never the API's
// problem+json: a passing database failure (tenancy.Classify) is 503 with Retry-After ("try
// again", nothing was stored), a fiber.Error its status, anything else 500 (logged).
func (m *Module) pageErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	status, title, text := fiber.StatusInternalServerError, "Fehler",
		"Es ist ein Fehler aufgetreten. Bitte versuchen Sie es später erneut."
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		status = fe.Code
		if status == fiber.StatusNotFound {
			return m.notFound(c)
		}
		if status < 500 {
			title, text = "Anfrage ungültig", "Die Anfrage ist ungültig. Bitte laden Sie die Seite neu."
		}
	case tenancy.Classify(err) != tenancy.Permanent:
		status, title = fiber.StatusServiceUnavailable, "Vorübergehend nicht erreichbar"
		text = "Der Dienst ist kurz nicht erreichbar. Bitte versuchen Sie es in einem Moment erneut."
		c.Set(fiber.HeaderRetryAfter, "1")
	}
	if status >= 500 && status != fiber.StatusServiceUnavailable {
		zerolog.Ctx(c.UserContext()).Error().Err(err).Str("path", c.Path()).Msg("portal page")
	}
	return m.render(c, status, "message", PageData{Title: title, Notice: text})
}

// signedIn wraps a page of a signed-in customer: without a valid session it answers 401 with
// the sign-in page (a revoked access's session included); with one whose TOTP code is still due,
// a redirect to the code form.
func (m *Module) signedIn(c *fiber.Ctx, fn func(ctx context.Context, s *Session) error) error {
	pc := companyOf(c)
	err := m.inSession(c, pc.ID, false, fn)
	if errors.Is(err, errSecondFactor) {
		return m.redirect(c, "/login/code")
	}
	if errors.Is(err, errNoSession) {
		return m.render(c, fiber.StatusUnauthorized, "login", PageData{Title: "Anmelden",
			Notice: "Bitte melden Sie sich an."})
	}
	return err
}

// PageData is what every page may show; each template uses its part. Pages add their own
// values in Data.
type PageData struct {
	Title    string // the page's heading and <title>
	Company  string // the brokerage's name (branding), filled by render
	Base     string // /portal/{companyId}, filled by render
	CSRF     string // the form token, filled by render
	Nonce    string // the CSP nonce of the page's style, filled by render
	SignedIn bool   // shows the navigation and the sign-out button
	Nav      string // the navigation entry of the page: data, contracts, documents, signatures, changes, security
	Notice   string // a status line (role=status)
	Errors   []FieldError
	Data     any
}

// FieldError is one entry of a form's error summary; Field is the id of the input it is about
// (the summary links to it, the input's aria-describedby to the message).
type FieldError struct{ Field, Text string }

// AddError puts a message on a field (the first message of a field wins).
func (d *PageData) AddError(field, text string) {
	for _, e := range d.Errors {
		if e.Field == field {
			return
		}
	}
	d.Errors = append(d.Errors, FieldError{Field: field, Text: text})
}

// ErrorOf is the message of field, for the templates.
func (d PageData) ErrorOf(field string) string {
	for _, e := range d.Errors {
		if e.Field == field {
			return e.Text
		}
	}
	return ""
}

var pageFuncs = template.FuncMap{}

// pageTemplates are parsed once: each page file with the layout.
var pageTemplates = parsePages()

func parsePages() map[string]*template.Template {
	names, err := pageFiles.ReadDir("pages")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		if n.Name() == "layout.html" {
			continue
		}
		name := n.Name()[:len(n.Name())-len(".html")]
		out[name] = template.Must(template.New(n.Name()).Funcs(pageFuncs).ParseFS(pageFiles, "pages/layout.html", "pages/"+n.Name()))
	}
	return out
}

// render answers with page name (pages/<name>.html in the layout): the status, the headers
// every portal page carries and the HTML.
func (m *Module) render(c *fiber.Ctx, status int, name string, d PageData) error {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("page nonce: %w", err)
	}
	d.Nonce = base64.RawStdEncoding.EncodeToString(nonce)
	if pc := companyOf(c); pc != nil {
		d.Company, d.Base = pc.Name, m.base(pc.ID)
	}
	csrf, err := m.csrfField(c)
	if err != nil {
		return err
	}
	d.CSRF = csrf
	var b bytes.Buffer
	t, ok := pageTemplates[name]
	if !ok {
		err = fmt.Errorf("no page %q", name)
	} else {
		err = t.ExecuteTemplate(&b, "layout", d)
	}
	if err != nil {
		// A template defect, not bad input: a plain page, never the problem+json of the API.
		zerolog.Ctx(c.UserContext()).Error().Err(err).Str("page", name).Msg("portal page")
		b.Reset()
		b.WriteString(`<!doctype html><html lang="de"><meta charset="utf-8"><title>Fehler</title>` +
			`<p>Es ist ein Fehler aufgetreten. Bitte versuchen Sie es später erneut.</p></html>`)
		status = fiber.StatusInternalServerError
	}
	Headers(c)
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+d.Nonce+
		"'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(b.Bytes())
}

// Headers are the headers of every answer under /portal/ (pages, downloads, redirects).
func Headers(c *fiber.Ctx) {
	httpx.PageHeaders(c)
	if c.GetRespHeader("Content-Security-Policy") == "" { // a page sets its own (render)
		c.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	}
}

// redirect answers 303 to path within the company's portal.
func (m *Module) redirect(c *fiber.Ctx, path string) error {
	Headers(c)
	return c.Redirect(m.base(companyOf(c).ID)+path, fiber.StatusSeeOther)
}

// notFound is the portal's 404 page.
func (m *Module) notFound(c *fiber.Ctx) error {
	return m.render(c, fiber.StatusNotFound, "message", PageData{Title: "Seite nicht gefunden",
		Notice: "Diese Seite gibt es nicht. Bitte prüfen Sie die Adresse."})
}

// CSRF: the form field csrf is an HMAC of the browser's nonce (cookie bd_portal_csrf) under a
// key derived from the app secret. Another site can neither read the nonce nor make the
// browser send the Strict cookie with its form.
const csrfCookie = "bd_portal_csrf"

func (m *Module) csrfKey() []byte {
	mac := hmac.New(sha256.New, m.d.Secret)
	mac.Write([]byte("brokerdesk portal csrf v1"))
	return mac.Sum(nil)
}

func (m *Module) csrfToken(nonce string) string {
	mac := hmac.New(sha256.New, m.csrfKey())
	mac.Write([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// csrfField returns the form token of the browser, setting a nonce cookie when it has none. A
// link opened from a mail is a cross-site navigation, on which the Strict cookie is not sent:
// the page then sets a fresh one, which the same-site form posts that follow carry.
func (m *Module) csrfField(c *fiber.Ctx) (string, error) {
	if n := c.Cookies(csrfCookie); validNonce(n) {
		return m.csrfToken(n), nil
	}
	if n, ok := c.Locals(csrfCookie).(string); ok {
		return m.csrfToken(n), nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	n := base64.RawURLEncoding.EncodeToString(b)
	c.Locals(csrfCookie, n)
	c.Cookie(&fiber.Cookie{Name: csrfCookie, Value: n, Path: "/portal/", HTTPOnly: true, Secure: m.secure(),
		SameSite: fiber.CookieSameSiteStrictMode})
	return m.csrfToken(n), nil
}

func validNonce(n string) bool {
	b, err := base64.RawURLEncoding.DecodeString(n)
	return err == nil && len(b) == 16
}

// csrfOK checks the form field csrf of a POST against the browser's cookie.
func (m *Module) csrfOK(c *fiber.Ctx) bool {
	n := c.Cookies(csrfCookie)
	return validNonce(n) && hmac.Equal([]byte(c.FormValue("csrf")), []byte(m.csrfToken(n)))
}

// badForm is the answer to a form post without a valid CSRF token: 403 and a page that asks
// to reload (the form may simply be old).
func (m *Module) badForm(c *fiber.Ctx) error {
	return m.render(c, fiber.StatusForbidden, "message", PageData{Title: "Formular abgelaufen",
		Notice: "Das Formular ist abgelaufen oder stammt nicht von dieser Seite. Bitte laden Sie die Seite neu."})
}
