package httpx

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// Read is the GET of one resource, the read beside the Patch and Delete recipes: the row the
// path names (400 when the id is malformed, 404 when not visible), 200 with its view and the
// ETag of its version.
//
//	h.get = httpx.Read[uuid.UUID, *ent.Document]{Key: httpx.PathID("documentId"), Get: svc.Get,
//		Version: version, View: httpx.View(NewView)}.Handle
type Read[K, R any] struct {
	Key     func(*fiber.Ctx) (K, error)
	Get     func(context.Context, K) (R, error)
	Version func(R) int64
	View    func(*fiber.Ctx, R) (any, error)
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
	v, err := g.View(c, r)
	if err != nil {
		return err
	}
	return OK(c, v, g.Version(r))
}
