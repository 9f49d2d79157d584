package httpx

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// Read is the GET of one resource, the read beside the Patch and Delete recipes: the row the
// path names (400 when the id is malformed, 404 when not visible), 200 with its view and the
// ETag of its version (none when Version is nil: an unpaged list under a parent).
//
//	h.get = httpx.Read[uuid.UUID, *ent.Document]{Key: httpx.PathID("documentId"), Get: svc.Get,
//		Version: version, View: httpx.View(NewView)}.Handle
type Read[K, R any] struct {
	Key     func(*fiber.Ctx) (K, error)
	Get     func(context.Context, K) (R, error)
	Version func(R) int64
	View    func(*fiber.Ctx, R) (any, error)
	// ETagAtZero gives version 0 an ETag too ("0"): a resource that exists before its first
	// write (a contact's finances), where If-Match: "0" means "nobody has written it yet".
	// OK leaves version 0 out otherwise.
	ETagAtZero bool
}

// Handle serves the GET.
func (g Read[K, R]) Handle(c *fiber.Ctx) error {
	k, err := g.Key(c)
	if err != nil {
		return err
	}
	r, err := g.Get(c.UserContext(), k)
	if err != nil {
		return err
	}
	if g.ETagAtZero && g.Version(r) == 0 {
		c.Set(fiber.HeaderETag, ETag(0))
	}
	return answerOK(c, r, g.View, g.Version)
}

// answerOK is the tail of Read and Patch: 200 with r's view and the ETag of its version
// (version nil: no ETag).
func answerOK[R any](c *fiber.Ctx, r R, view func(*fiber.Ctx, R) (any, error), version func(R) int64) error {
	v, err := view(c, r)
	if err != nil {
		return err
	}
	if version == nil {
		return c.JSON(v)
	}
	return OK(c, v, version(r))
}
