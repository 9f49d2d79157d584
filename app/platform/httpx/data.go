package httpx

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// Data answers 200 with an unpaged list, {"data": [view(row)...]} ([] when empty): the answer of
// lists the spec does not page (a contact's relationships, custom field definitions, matches).
func Data[R, V any](c *fiber.Ctx, rows []R, view func(R) V) error {
	return c.JSON(dataOf(rows, view))
}

// DataView is Data as a recipe's View: httpx.Read[uuid.UUID, []*ent.X]{…, View:
// httpx.DataView(NewX)} answers a parent's unpaged list.
func DataView[R, V any](view func(R) V) func(*fiber.Ctx, []R) (any, error) {
	return func(_ *fiber.Ctx, rows []R) (any, error) { return dataOf(rows, view), nil }
}

func dataOf[R, V any](rows []R, view func(R) V) fiber.Map {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = view(r)
	}
	return fiber.Map{"data": out}
}

// Call is the head of a POST: the body decoded into an I (400 when malformed, 422 when Validate
// refuses it), then the service's fn with the request's context.
func Call[I, R any](c *fiber.Ctx, fn func(context.Context, I) (R, error)) (R, error) {
	var in I
	if err := Decode(c, &in); err != nil {
		var zero R
		return zero, err
	}
	return fn(c.UserContext(), in)
}
