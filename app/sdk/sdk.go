// Package sdk serves the JavaScript SDK of the lead intake (brokerdesk.js): a small,
// dependency-free script that websites load with a script tag to validate and submit leads with
// a publishable key. It is served outside the API prefix, under a versioned path, as an
// immutable file: a breaking change ships under a new path (/sdk/v2/...), never in place.
package sdk

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/httpx"
)

// Path is where the SDK is served, from the server root.
const Path = "/sdk/v1/brokerdesk.js"

// ContentType is the SDK's media type (RFC 9239: text/javascript).
const ContentType = "text/javascript; charset=utf-8"

// CacheControl lets browsers and CDNs keep the script for a year without asking again.
const CacheControl = "public, max-age=31536000, immutable"

//go:embed brokerdesk.js
var script []byte

//go:embed example.html
var example []byte

// Script returns the SDK's source as served.
func Script() []byte { return script }

// Example returns example.html: a plain page that loads the SDK and binds a form.
func Example() []byte { return example }

// ETag is the strong entity tag of the script: the hash of its content.
func ETag() string { return etag }

var etag = func() string {
	sum := sha256.Sum256(script)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}()

// Mount registers GET (and HEAD) Path on r, which must be the server root. The script needs no
// credential; Access-Control-Allow-Origin lets pages load it with crossorigin="anonymous" and
// an integrity attribute (Subresource Integrity).
func Mount(r fiber.Router) {
	r.Get(Path, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderETag, etag)
		c.Set(fiber.HeaderCacheControl, CacheControl)
		c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		if httpx.IfNoneMatch(c.Get(fiber.HeaderIfNoneMatch), etag) {
			return c.SendStatus(fiber.StatusNotModified)
		}
		c.Set(fiber.HeaderContentType, ContentType)
		return c.Send(script)
	})
}
