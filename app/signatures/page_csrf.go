package signatures

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

// CSRF of the signing page's forms. The link's token is already a bearer secret that another
// site does not know, so a forged cross-site POST cannot name a signer; what the token does not
// do is tie the form to the browser that loaded it: a link forwarded, leaked from a mail
// client's preview or pasted into a chat could be posted to by anything that has it. So each
// form carries an HMAC of (purpose, signer id, nonce) under a key derived from the app secret,
// and the nonce lives in a SameSite=Strict, HttpOnly cookie the page set: a POST counts only
// from a browser that loaded the page itself, and a form of one signer or one purpose (code,
// sign) is no form of another.

const (
	csrfCookie  = "bd_sign"
	purposeCode = "code"
	purposeSign = "sign"
)

// pageKey derives a key of the signing page from the app secret for one use (label), so that
// no other signed value of the service (links, cursors, tracking tokens) verifies as one of
// these.
func (m *Module) pageKey(label string) []byte {
	mac := hmac.New(sha256.New, m.d.Secret)
	mac.Write([]byte("brokerdesk signing page v1 " + label))
	return mac.Sum(nil)
}

// csrfToken is the form field of purpose for signer under the browser's nonce.
func (m *Module) csrfToken(purpose string, signer uuid.UUID, nonce string) string {
	mac := hmac.New(sha256.New, m.pageKey("csrf"))
	mac.Write([]byte(purpose))
	mac.Write([]byte{0})
	mac.Write(signer[:])
	mac.Write([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// browserNonce returns the nonce of the browser's cookie, setting a new one when it has none
// (or a malformed one). A link opened from a webmail is a cross-site navigation, on which a
// Strict cookie is not sent: the page then sets a fresh one, which the same-site form posts
// that follow carry.
func (m *Module) browserNonce(c *fiber.Ctx) (string, error) {
	if n := c.Cookies(csrfCookie); validNonce(n) {
		return n, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	n := base64.RawURLEncoding.EncodeToString(b)
	c.Cookie(&fiber.Cookie{Name: csrfCookie, Value: n, Path: "/sign/", HTTPOnly: true,
		Secure: strings.HasPrefix(m.d.PublicURL, "https://"), SameSite: fiber.CookieSameSiteStrictMode})
	return n, nil
}

func validNonce(n string) bool {
	b, err := base64.RawURLEncoding.DecodeString(n)
	return err == nil && len(b) == 16
}

// csrfOK checks the form field csrf of a POST of purpose against the browser's cookie.
func (m *Module) csrfOK(c *fiber.Ctx, purpose string, signer uuid.UUID) bool {
	n := c.Cookies(csrfCookie)
	if !validNonce(n) {
		return false
	}
	return hmac.Equal([]byte(c.FormValue("csrf")), []byte(m.csrfToken(purpose, signer, n)))
}
