package httpx

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

// The conditional-write recipes: PATCH and DELETE of a resource are one recipe each, and what
// differs between resources is fields of a value, not copied control flow (fosite's handlers):
//
//	h.update = httpx.Patch[uuid.UUID, *ent.Task, Input]{
//		Key: httpx.PathID("taskId"), Lock: svc.Lock, Version: taskVersion,
//		Input: inputOf, Update: svc.Update, View: httpx.View(NewView),
//	}.Handle
//
// Both lock the row first (SELECT … FOR UPDATE in the request's transaction), so the If-Match
// comparison and the write see the same version: two clients patching with the same ETag get
// one 200 and one 412, never a lost update.

// Patch is the PATCH recipe: lock the row the path names, check If-Match against its version,
// build the new input from the current one and the request (an RFC 7396 merge patch onto
// Input(row) unless Read says otherwise), update, answer 200 with the view and the new ETag.
type Patch[K, R, I any] struct {
	Key     func(*fiber.Ctx) (K, error)         // the path's id (400 when malformed)
	Lock    func(context.Context, K) (R, error) // the row, locked; 404 when not visible
	Version func(R) int64                       // what the ETag says
	// IfMatchRequired makes a PATCH without If-Match 428 (contacts); otherwise it is optional.
	IfMatchRequired bool
	Input           func(R) I                      // the row as its input type
	Read            func(*fiber.Ctx, R) (I, error) // instead of Input + merge patch
	Update          func(context.Context, R, I) (R, error)
	View            func(*fiber.Ctx, R) (any, error)
}

// Handle serves the PATCH.
func (p Patch[K, R, I]) Handle(c *fiber.Ctx) error {
	ctx := c.UserContext()
	cur, err := lockMatching(c, p.Key, p.Lock, p.Version, p.IfMatchRequired)
	if err != nil {
		return err
	}
	var in I
	if p.Read != nil {
		in, err = p.Read(c, cur)
	} else {
		in = p.Input(cur)
		err = MergePatch(c, &in)
	}
	if err != nil {
		return err
	}
	saved, err := p.Update(ctx, cur, in)
	if err != nil {
		return err
	}
	return answerOK(c, saved, p.View, p.Version)
}

// Delete is the DELETE recipe: lock the row the path names, check If-Match, delete, 204.
type Delete[K, R any] struct {
	Key             func(*fiber.Ctx) (K, error)
	Lock            func(context.Context, K) (R, error)
	Version         func(R) int64
	IfMatchRequired bool
	Delete          func(context.Context, R) error
}

// Handle serves the DELETE.
func (d Delete[K, R]) Handle(c *fiber.Ctx) error {
	cur, err := lockMatching(c, d.Key, d.Lock, d.Version, d.IfMatchRequired)
	if err != nil {
		return err
	}
	if err := d.Delete(c.UserContext(), cur); err != nil {
		return err
	}
	return NoContent(c)
}

func lockMatching[K, R any](c *fiber.Ctx, key func(*fiber.Ctx) (K, error), lock func(context.Context, K) (R, error),
	version func(R) int64, required bool) (R, error) {
	var zero R
	k, err := key(c)
	if err != nil {
		return zero, err
	}
	cur, err := lock(c.UserContext(), k)
	if err != nil {
		return zero, err
	}
	if err := IfMatch(c, version(cur), required); err != nil {
		return zero, err
	}
	return cur, nil
}

// PathID is the Key of a resource named by one UUID path parameter.
func PathID(param string) func(*fiber.Ctx) (uuid.UUID, error) {
	return func(c *fiber.Ctx) (uuid.UUID, error) { return UUIDParam(c, param) }
}

// ChildID names a sub-resource: its parent's id and its own, both from the path.
type ChildID struct{ Parent, ID uuid.UUID }

// PathChildID is the Key of a sub-resource (/contacts/{contactId}/notes/{noteId}).
func PathChildID(parent, param string) func(*fiber.Ctx) (ChildID, error) {
	return func(c *fiber.Ctx) (ChildID, error) {
		p, err := UUIDParam(c, parent)
		if err != nil {
			return ChildID{}, err
		}
		id, err := UUIDParam(c, param)
		return ChildID{Parent: p, ID: id}, err
	}
}

// View makes a view constructor the View of a recipe.
func View[R, V any](view func(R) V) func(*fiber.Ctx, R) (any, error) {
	return func(_ *fiber.Ctx, r R) (any, error) { return view(r), nil }
}
