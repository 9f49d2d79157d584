package signatures

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// The signing page is server-rendered HTML (html/template, German, one column, no framework):
// it must work on any phone a customer opens the mail on, and without JavaScript (the drawing
// pad is the only script; a typed name signs without it).

//go:embed pages/*.html
var pageFiles embed.FS

// Pages of the signing link: review (step 1, the code), sign (the form), message (everything
// else: done, gone, unknown link, errors).
var pageTemplates = map[string]*template.Template{
	"review":  parsePage("review.html"),
	"sign":    parsePage("sign.html"),
	"message": parsePage("message.html"),
}

func parsePage(name string) *template.Template {
	return template.Must(template.New(name).ParseFS(pageFiles, "pages/layout.html", "pages/"+name))
}

// fieldError is one entry of the sign form's error summary; Field is the id of the input it
// is about (the summary links to it, the input's aria-describedby to the message).
type fieldError struct{ Field, Text string }

// pageData is what every page may show; each template uses its part.
type pageData struct {
	Heading string
	Company string
	Nonce   string // the CSP nonce of the page's style and script
	Lines   []string
	// The request and the signer.
	Signer, Email, Message string
	Action                 string // /sign/{token}: the forms post here, the PDF links hang off it
	CSRF, CodeCSRF         string
	CodeSent               bool
	Notice                 string
	TypedName              string
	Consent                bool
	Err                    map[string]string
	ErrorList              []fieldError
	SignedURL, Back        string
}

// addError puts a message on a field of the sign form (first message of a field wins).
func (d *pageData) addError(field, text string) {
	if d.Err == nil {
		d.Err = map[string]string{}
	}
	if _, ok := d.Err[field]; ok {
		return
	}
	d.Err[field] = text
	d.ErrorList = append(d.ErrorList, fieldError{Field: field, Text: text})
}

// render answers with a page: the status, the headers every signing page carries and the HTML.
//
// The headers: the token is in the URL, so no Referer may carry it anywhere (Referrer-Policy)
// and no cache may keep a page (no-store); no other site may frame the page to trick a click on
// "unterschreiben" (frame-ancestors, X-Frame-Options); the one inline script and style run by a
// fresh nonce, anything injected does not (script-src); the drawn signature is a data: URL
// image (img-src).
func (m *Module) render(c *fiber.Ctx, status int, name string, d pageData) error {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("page nonce: %w", err)
	}
	d.Nonce = base64.RawStdEncoding.EncodeToString(nonce)
	var b bytes.Buffer
	if err := pageTemplates[name].ExecuteTemplate(&b, "layout", d); err != nil {
		// A template defect, not bad input: a plain page, never the problem+json of the API.
		zerolog.Ctx(c.UserContext()).Error().Err(err).Str("page", name).Msg("signing page")
		b.Reset()
		b.WriteString(`<!doctype html><html lang="de"><meta charset="utf-8"><title>Fehler</title>` +
			`<p>Es ist ein Fehler aufgetreten. Bitte versuchen Sie es später erneut.</p></html>`)
		status = fiber.StatusInternalServerError
	}
	pageHeaders(c)
	c.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+d.Nonce+"'; style-src 'nonce-"+d.Nonce+
		"'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(b.Bytes())
}

// pageHeaders are the headers of every answer under /sign/ (pages and PDFs).
func pageHeaders(c *fiber.Ctx) { httpx.PageHeaders(c) }

// message answers with the message page.
func (m *Module) message(c *fiber.Ctx, status int, d pageData) error {
	return m.render(c, status, "message", d)
}

// unknownLink is the answer to a link this server did not make, or whose signer is gone: it
// says nothing about what might exist.
func (m *Module) unknownLink(c *fiber.Ctx) error {
	return m.message(c, fiber.StatusNotFound, pageData{Heading: "Link nicht gefunden",
		Lines: []string{"Dieser Link ist ungültig. Bitte prüfen Sie, ob Sie ihn vollständig aus der E-Mail übernommen haben."}})
}
