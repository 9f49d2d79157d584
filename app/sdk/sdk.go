// Package sdk serves the JavaScript SDK of the lead intake (brokerdesk.js): a small,
// dependency-free script that websites load with a script tag to validate and submit leads with
// a publishable key. It is served outside the API prefix in two ways:
//
//   - /sdk/v1/brokerdesk.js, the stable alias: always the current release, cached briefly
//     (AliasCacheControl) and revalidated with its ETag, so a fix reaches every site within
//     minutes;
//   - /sdk/v1/brokerdesk.<hash>.js, one file per release named by its content hash: immutable,
//     cached for a year, for sites that pin a release with Subresource Integrity. Every release
//     stays served (releases/): a pinned page never breaks.
//
// A breaking change ships under a new major path (/sdk/v2/...), never in place.
package sdk

import (
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
)

// Path is the stable alias of the SDK, from the server root.
const Path = "/sdk/v1/brokerdesk.js"

// ContentType is the SDK's media type (RFC 9239: text/javascript).
const ContentType = "text/javascript; charset=utf-8"

// CacheControl lets browsers and CDNs keep a release (a content-hashed file) for a year
// without asking again: its content never changes.
const CacheControl = "public, max-age=31536000, immutable"

// AliasCacheControl is the alias's: five minutes, then a revalidation (304 while unchanged).
const AliasCacheControl = "public, max-age=300"

//go:embed brokerdesk.js
var script []byte

//go:embed example.html
var example []byte

//go:embed releases/*.js
var releaseFiles embed.FS

// Release is one published version of the SDK.
type Release struct {
	Hash      string // the first 12 hex digits of the content's SHA-256: the file name's middle
	Path      string // /sdk/v1/brokerdesk.<hash>.js
	Integrity string // sha384-… for the script tag's integrity attribute (Subresource Integrity)
	ETag      string
	Content   []byte
}

// HashLen is how many hex digits of the SHA-256 name a release.
const HashLen = 12

// NewRelease describes content as a release.
func NewRelease(content []byte) Release {
	sum := sha256.Sum256(content)
	h := hex.EncodeToString(sum[:])[:HashLen]
	sri := sha512.Sum384(content)
	return Release{Hash: h, Path: "/sdk/v1/brokerdesk." + h + ".js",
		Integrity: "sha384-" + base64.StdEncoding.EncodeToString(sri[:]),
		ETag:      `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`, Content: content}
}

// Script returns the SDK's current source, as the alias serves it.
func Script() []byte { return script }

// Current is the release the alias serves.
func Current() Release { return current }

// Example returns example.html: a plain page that loads the SDK and binds a form.
func Example() []byte { return example }

// ETag is the strong entity tag of the current script: the hash of its content.
func ETag() string { return current.ETag }

var current = NewRelease(script)

// Releases returns every release served, by hash. The current script is one of them (a test
// holds it: a change to brokerdesk.js is released by copying it to releases/ under its hash).
func Releases() map[string]Release { return releases }

var releases = func() map[string]Release {
	out := map[string]Release{}
	names, err := fs.Glob(releaseFiles, "releases/brokerdesk.*.js")
	if err != nil {
		panic(err) // a constant pattern
	}
	for _, name := range names {
		b, err := releaseFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded
		}
		r := NewRelease(b)
		out[strings.TrimSuffix(strings.TrimPrefix(path.Base(name), "brokerdesk."), ".js")] = r
	}
	return out
}()

// Mount registers GET (and HEAD) of the alias and of every release on r, which must be the
// server root. The script needs no credential; Access-Control-Allow-Origin lets pages load it
// with crossorigin="anonymous" and an integrity attribute (Subresource Integrity).
func Mount(r fiber.Router) {
	r.Get(Path, func(c *fiber.Ctx) error {
		// The immutable file of this very content, for whoever wants to pin it.
		c.Set(fiber.HeaderLink, "<"+current.Path+`>; rel="canonical"`)
		return send(c, current, AliasCacheControl)
	})
	r.Get("/sdk/v1/brokerdesk.:hash.js", func(c *fiber.Ctx) error {
		rel, ok := releases[c.Params("hash")]
		if !ok {
			return errs.NotFound("no SDK release %q", c.Params("hash"))
		}
		return send(c, rel, CacheControl)
	})
}

func send(c *fiber.Ctx, rel Release, cacheControl string) error {
	c.Set(fiber.HeaderETag, rel.ETag)
	c.Set(fiber.HeaderCacheControl, cacheControl)
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if httpx.IfNoneMatch(c.Get(fiber.HeaderIfNoneMatch), rel.ETag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, ContentType)
	return c.Send(rel.Content)
}
