package httpx

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// Create is the POST that makes one resource, the recipe beside Read, Patch and Delete: the
// body decoded into an I (400 when malformed, 422 when Validate refuses it), the service's
// Create, 201 with Location, the view and the ETag of the new version.
//
//	h.create = httpx.Create[Input, *ent.Task]{Create: svc.Create, Location: location,
//		Version: version, View: httpx.View(NewView)}.Handle
//
// Location nil answers without a Location header, Version nil without an ETag (resources that
// are never read or changed on their own, as a task's comment).
type Create[I, R any] struct {
	Create   func(context.Context, I) (R, error)
	Location func(R) string
	Version  func(R) int64
	View     func(*fiber.Ctx, R) (any, error)
}

// Handle serves the POST.
func (p Create[I, R]) Handle(c *fiber.Ctx) error {
	r, err := Call(c, p.Create)
	if err != nil {
		return err
	}
	return p.answer(c, r)
}

func (p Create[I, R]) answer(c *fiber.Ctx, r R) error {
	v, err := p.View(c, r)
	if err != nil {
		return err
	}
	if p.Location != nil {
		c.Set(fiber.HeaderLocation, p.Location(r))
	}
	if p.Version != nil && p.Version(r) > 0 {
		c.Set(fiber.HeaderETag, ETag(p.Version(r)))
	}
	return c.Status(fiber.StatusCreated).JSON(v)
}

// CreateUnder is Create for a resource made under a parent the path names (a task's comment,
// a contact's note): the parent's key first (400 when malformed, before the body is read).
type CreateUnder[K, I, R any] struct {
	Key      func(*fiber.Ctx) (K, error)
	Create   func(context.Context, K, I) (R, error)
	Location func(R) string
	Version  func(R) int64
	View     func(*fiber.Ctx, R) (any, error)
}

// Handle serves the POST.
func (p CreateUnder[K, I, R]) Handle(c *fiber.Ctx) error {
	k, err := p.Key(c)
	if err != nil {
		return err
	}
	r, err := Call(c, func(ctx context.Context, in I) (R, error) { return p.Create(ctx, k, in) })
	if err != nil {
		return err
	}
	return Create[I, R]{Location: p.Location, Version: p.Version, View: p.View}.answer(c, r)
}
