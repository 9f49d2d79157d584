package signatures

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent/signaturesigner"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Bounds of a drawn signature: the pad is 600×200; anything far larger is not from it, and a
// PNG's dimensions bound the memory its decoding takes (2000×1000 RGBA is 8 MB).
const (
	maxSignatureBytes  = 1 << 20
	maxSignatureWidth  = 2000
	maxSignatureHeight = 1000
	maxTypedName       = 200
	maxUserAgent       = 500
)

// signInput is the sign form, checked.
type signInput struct {
	code    string
	typed   string // the typed name (kept even when a drawing signs)
	png     []byte // the signature image: the drawing, else the typed name rendered
	consent bool
}

// readSignForm reads and checks the sign form; what is wrong goes on d as the page's messages.
// Nothing here needs the database: it runs before the rows are locked.
func readSignForm(c *fiber.Ctx, d *pageData) (signInput, error) {
	in := signInput{
		code:    strings.Join(strings.Fields(c.FormValue("code")), ""), // "123 456" as typed from the mail
		typed:   strings.TrimSpace(c.FormValue("typedName")),
		consent: c.FormValue("consent") != "",
	}
	d.TypedName, d.Consent = in.typed, in.consent
	if drawn := c.FormValue("signature"); drawn != "" {
		img, problem := decodeDrawn(drawn)
		if problem != "" {
			d.addError("typedName", problem)
		}
		in.png = img
	}
	if in.png == nil && in.typed == "" && d.Err["typedName"] == "" {
		d.addError("typedName", "Bitte unterschreiben Sie im Feld oder tippen Sie Ihren Namen.")
	}
	if in.typed != "" {
		switch {
		case utf8.RuneCountInString(in.typed) > maxTypedName:
			d.addError("typedName", fmt.Sprintf("Der Name darf höchstens %d Zeichen lang sein.", maxTypedName))
		case !strings.ContainsFunc(in.typed, unicode.IsLetter) || strings.ContainsFunc(in.typed, unicode.IsControl):
			d.addError("typedName", "Bitte tippen Sie Ihren Namen in Buchstaben.")
		}
	}
	if !in.consent {
		d.addError("consent", "Bitte bestätigen Sie, dass Sie das Dokument gelesen haben und es elektronisch unterschreiben.")
	}
	if in.png == nil && in.typed != "" && d.Err["typedName"] == "" {
		img, err := pdf.TypedSignature(in.typed)
		if err != nil {
			return in, fmt.Errorf("render typed signature: %w", err)
		}
		in.png = img
	}
	return in, nil
}

// decodeDrawn reads the pad's data URL: a PNG of at most 1 MB and 2000×1000 that is not
// blank. problem is the page's message when it is not.
func decodeDrawn(s string) (img []byte, problem string) {
	const prefix = "data:image/png;base64,"
	const unreadable = "Die gezeichnete Unterschrift konnte nicht gelesen werden. Bitte zeichnen Sie erneut oder tippen Sie Ihren Namen."
	const tooLarge = "Die gezeichnete Unterschrift ist zu groß. Bitte zeichnen Sie erneut oder tippen Sie Ihren Namen."
	if !strings.HasPrefix(s, prefix) {
		return nil, unreadable
	}
	enc := s[len(prefix):]
	if base64.StdEncoding.DecodedLen(len(enc)) > maxSignatureBytes+3 {
		return nil, tooLarge
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, unreadable
	}
	if len(b) > maxSignatureBytes {
		return nil, tooLarge
	}
	// The header first: a small file may declare a huge image (a decompression bomb).
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, unreadable
	}
	if cfg.Width > maxSignatureWidth || cfg.Height > maxSignatureHeight {
		return nil, tooLarge
	}
	m, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, unreadable
	}
	r := m.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if _, _, _, a := m.At(x, y).RGBA(); a != 0 {
				return b, ""
			}
		}
	}
	return nil, "Das Unterschriftenfeld ist leer. Bitte unterschreiben Sie oder tippen Sie Ihren Namen."
}

// sign handles POST /sign/{token}: with the request and the signer locked, it refuses (nothing
// signed) a request that is no longer pending (410), a signer who signed (409), a wrong,
// expired or missing code or a bad form (422; a wrong code counts against it); else it stores
// the signature, records signature_request.signed and, when every signer has signed,
// finalizes the request in the same transaction. 303 to the thank-you page.
func (m *Module) sign(c *fiber.Ctx) error {
	tok := c.Params("token")
	_, signerID, ok := m.parseLinkToken(tok)
	if !ok {
		return m.unknownLink(c)
	}
	if !m.csrfOK(c, purposeSign, signerID) {
		return m.forbidden(c)
	}
	var form pageData
	in, err := readSignForm(c, &form)
	if err != nil {
		return m.failed(c, err, "/sign/"+tok+"?step=sign")
	}
	ip := m.d.Clients.Addr(c).String() // the client behind trusted proxies, as the rate limits see it
	ua := truncateUTF8(strings.ToValidUTF8(c.Get(fiber.HeaderUserAgent), "\uFFFD"), maxUserAgent)
	var codeErr codeRefusal
	open := true
	v, err := m.visitIn(c, true, func(ctx context.Context, v *visit) error {
		if signed(v.signer) || m.state(v.req) != statePending {
			open = false
			return nil
		}
		if err := m.checkCode(ctx, v.signer, in.code); err != nil {
			if !errors.As(err, &codeErr) {
				return err
			}
			return nil // commit the attempt counted (and the code voided); nothing signed
		}
		if len(form.ErrorList) > 0 {
			return nil // the code stays valid for the corrected form
		}
		return m.storeSignature(ctx, v, in, ip, ua)
	})
	if err != nil {
		return m.failed(c, err, "/sign/"+tok+"?step=sign")
	}
	if !open {
		_, err := m.closed(c, v, fiber.StatusConflict, false)
		return err
	}
	if codeErr != "" || len(form.ErrorList) > 0 {
		d, err := m.formData(c, v)
		if err != nil {
			return m.failed(c, err, "")
		}
		if codeErr != "" {
			d.addError("code", string(codeErr))
		}
		for _, e := range form.ErrorList {
			d.addError(e.Field, e.Text)
		}
		d.TypedName, d.Consent = form.TypedName, form.Consent
		if codeErr == errCodeVoid || codeErr == errCodeExpired || codeErr == errCodeNone {
			d.Notice = ""
		}
		return m.render(c, fiber.StatusUnprocessableEntity, "sign", d)
	}
	return c.Redirect("/sign/"+tok+"?step=done", fiber.StatusSeeOther)
}

// storeSignature signs for v's signer (rows locked, code checked): the signature, the times
// (verified_at is now: the code proved the address), the client's address and user agent; the
// code is used up. Every signer signed: finalize, in this transaction, so that a failure there
// leaves this signature unstored too.
func (m *Module) storeSignature(ctx context.Context, v *visit, in signInput, ip, ua string) error {
	now := m.d.Now()
	db := tenancy.Client(ctx)
	s, err := db.SignatureSigner.UpdateOne(v.signer).
		SetStatus(signaturesigner.StatusSigned).
		SetSignature(in.png).
		SetTypedName(in.typed).
		SetSignedAt(now).
		SetVerifiedAt(now).
		SetSignedIP(ip).
		SetSignedUserAgent(ua).
		ClearCodeHash().
		ClearCodeExpiresAt().
		Save(ctx)
	if err != nil {
		return fmt.Errorf("store signature of signer %s: %w", v.signer.ID, err)
	}
	v.signer = s
	// The request's version is the ETag of its View, which now shows this signature.
	if v.req, err = db.SignatureRequest.UpdateOne(v.req).SetUpdatedAt(now).Save(ctx); err != nil {
		return fmt.Errorf("touch signature request %s: %w", v.req.ID, err)
	}
	if err := m.recordEvent(ctx, "signature_request.signed", v.req); err != nil {
		return err
	}
	signers, err := loadSigners(ctx, v.req)
	if err != nil {
		return err
	}
	for _, x := range signers {
		if !signed(x) {
			return nil
		}
	}
	v.req, err = m.finalize(ctx, v.req, signers)
	return err
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
