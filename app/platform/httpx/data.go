package httpx

import "github.com/gofiber/fiber/v2"

// Data answers 200 with an unpaged list, {"data": [view(row)...]} ([] when empty): the answer of
// lists the spec does not page (a contact's relationships, custom field definitions, matches).
func Data[R, V any](c *fiber.Ctx, rows []R, view func(R) V) error {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = view(r)
	}
	return c.JSON(fiber.Map{"data": out})
}
