package emails

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The public links of sent mail: the open pixel (/t/o/TOKEN.gif), the click redirect
// (/t/c/TOKEN) and the unsubscribe page (/u/TOKEN). No credential: each token is the
// authorisation, an HMAC-SHA256 (key derived from APP_SECRET) over what it names, so a token
// cannot be forged or changed, and the redirect goes only to the URL inside the token (no open
// redirect). A bad token is 404.

// Token purposes: a token of one purpose is no token of another.
const (
	purposeOpen        byte = 'o'
	purposeClick       byte = 'c'
	purposeUnsubscribe byte = 'u'
)

// token is what a public link names: the company and the e-mail, and the link's URL (click)
// or the recipient's address (unsubscribe).
type token struct {
	purpose byte
	company uuid.UUID
	email   uuid.UUID
	value   string
}

// tokenKey derives the signing key of the tokens from the server's secret: the same secret
// signs other things (cursors), which must not verify as tokens.
func (m *Module) tokenKey() []byte {
	h := hmac.New(sha256.New, m.d.Secret)
	h.Write([]byte("brokerdesk/emails/tracking/v1"))
	return h.Sum(nil)
}

// sign is t as a URL-safe token: base64url(purpose | company | email | value | HMAC of those).
func (m *Module) sign(t token) string {
	b := make([]byte, 0, 33+len(t.value)+sha256.Size)
	b = append(b, t.purpose)
	b = append(b, t.company[:]...)
	b = append(b, t.email[:]...)
	b = append(b, t.value...)
	h := hmac.New(sha256.New, m.tokenKey())
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(b))
}

// verify reads a token of purpose; false for anything not signed by us for that purpose.
func (m *Module) verify(s string, purpose byte) (token, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 33+sha256.Size {
		return token{}, false
	}
	payload, mac := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	h := hmac.New(sha256.New, m.tokenKey())
	h.Write(payload)
	if !hmac.Equal(mac, h.Sum(nil)) || payload[0] != purpose {
		return token{}, false
	}
	var t token
	t.purpose = payload[0]
	copy(t.company[:], payload[1:17])
	copy(t.email[:], payload[17:33])
	t.value = string(payload[33:])
	return t, true
}

// badToken is the answer to a token we did not sign: nothing to say about it.
func badToken() error { return errs.NotFound("link not found") }

// recordEmail records an event of type typ about e (read again with what its view shows, in
// the transaction of ctx), as visible as its thread (eventView).
func (s *Service) recordEmail(ctx context.Context, typ string, e *ent.Email) error {
	l, err := s.load(ctx, []*ent.Email{e})
	if err != nil {
		return err
	}
	v, err := eventView(ctx, l[0])
	if err != nil {
		return err
	}
	return s.events.Record(ctx, typ, v)
}

// recordOpen marks the first open of an e-mail (opened_at; status opened when it was sent or
// delivered) and records email.opened. Later opens change nothing. A token of a message that
// is gone still gets its pixel.
func (m *Module) recordOpen(ctx context.Context, t token) error {
	return m.companyTx(ctx, t.company, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		e, err := db.Email.Get(ctx, t.email)
		if ent.IsNotFound(err) || err == nil && e.OpenedAt != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read email %s: %w", t.email, err)
		}
		u := db.Email.UpdateOne(e).Where(email.OpenedAtIsNil()).SetOpenedAt(m.d.Now())
		if e.Status == email.StatusSent || e.Status == email.StatusDelivered {
			u.SetStatus(email.StatusOpened)
		}
		return m.svc.recordTracked(ctx, u, "email.opened")
	})
}

// recordClick marks the first click of an e-mail (clicked_at; status clicked unless it failed
// or is not sent yet) and records email.clicked.
func (m *Module) recordClick(ctx context.Context, t token) error {
	return m.companyTx(ctx, t.company, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		e, err := db.Email.Get(ctx, t.email)
		if ent.IsNotFound(err) || err == nil && e.ClickedAt != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read email %s: %w", t.email, err)
		}
		u := db.Email.UpdateOne(e).Where(email.ClickedAtIsNil()).SetClickedAt(m.d.Now())
		if slices.Contains([]email.Status{email.StatusSent, email.StatusDelivered, email.StatusOpened}, e.Status) {
			u.SetStatus(email.StatusClicked)
		}
		return m.svc.recordTracked(ctx, u, "email.clicked")
	})
}

// recordTracked saves a first open or click and records its event; a concurrent first one
// (the update's condition no longer holds) records nothing.
func (s *Service) recordTracked(ctx context.Context, u *ent.EmailUpdateOne, event string) error {
	e, err := u.Save(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("track email: %w", err)
	}
	return s.recordEmail(ctx, event, e)
}

// gif is a transparent 1×1 GIF.
var gif = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// openPixel handles GET /t/o/{token}.gif: the pixel, never cached, and the first open.
func (h *Handler) openPixel(c *fiber.Ctx) error {
	t, ok := h.svc.m.verify(c.Params("token"), purposeOpen)
	if !ok {
		return badToken()
	}
	if err := h.svc.m.recordOpen(c.UserContext(), t); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, "image/gif")
	return c.Send(gif)
}

// click handles GET /t/c/{token}: 302 to the URL inside the token, and the first click.
func (h *Handler) click(c *fiber.Ctx) error {
	t, ok := h.svc.m.verify(c.Params("token"), purposeClick)
	if !ok {
		return badToken()
	}
	if err := h.svc.m.recordClick(c.UserContext(), t); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer")
	return c.Redirect(t.value, fiber.StatusFound)
}

// unsubscribePage handles GET /u/{token}: a page with a button that unsubscribes. It changes
// nothing itself: mail scanners and link previews follow GET links (RFC 8058 §1).
func (h *Handler) unsubscribePage(c *fiber.Ctx) error {
	t, ok := h.svc.m.verify(c.Params("token"), purposeUnsubscribe)
	if !ok {
		return badToken()
	}
	return unsubscribeHTML(c, unsubscribeData{Address: t.value, Action: c.Path()})
}

// unsubscribe handles POST /u/{token}, the one-click unsubscribe of RFC 8058 (and the page's
// button): the address inside the token goes on the company's opt-out list (source
// unsubscribe; email_opt_out.created the first time). Repeating it changes nothing.
func (h *Handler) unsubscribe(c *fiber.Ctx) error {
	t, ok := h.svc.m.verify(c.Params("token"), purposeUnsubscribe)
	if !ok {
		return badToken()
	}
	err := h.svc.m.companyTx(c.UserContext(), t.company, func(ctx context.Context) error {
		_, _, err := h.svc.AddOptOut(ctx, t.value, "", OptOutUnsubscribe)
		return err
	})
	if err != nil {
		return err
	}
	return unsubscribeHTML(c, unsubscribeData{Address: t.value, Done: true})
}

type unsubscribeData struct {
	Address string
	Action  string
	Done    bool
}

var unsubscribeTmpl = template.Must(template.New("u").Parse(`<!doctype html>
<html lang="de"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Abmelden / Unsubscribe</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}button{font-size:1rem;padding:.5rem 1rem}</style>
</head><body>
{{if .Done}}<h1>Abgemeldet</h1>
<p>{{.Address}} erhält keine Marketing-E-Mails dieses Absenders mehr.</p>
<p lang="en">{{.Address}} will no longer receive marketing e-mails from this sender.</p>
{{else}}<h1>Abmelden</h1>
<p>Keine Marketing-E-Mails dieses Absenders mehr an {{.Address}} senden?</p>
<p lang="en">Stop marketing e-mails from this sender to {{.Address}}?</p>
<form method="post" action="{{.Action}}"><button type="submit">Abmelden / Unsubscribe</button></form>
{{end}}</body></html>
`))

func unsubscribeHTML(c *fiber.Ctx, d unsubscribeData) error {
	var b bytes.Buffer
	if err := unsubscribeTmpl.Execute(&b, d); err != nil {
		return errors.Join(errors.New("unsubscribe page"), err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(b.Bytes())
}
