package httpx

import "github.com/gofiber/fiber/v2"

// PageHeaders are the headers of every answer of the server-rendered pages outside the API
// (the signing page, the customer portal: pages, files, redirects). Their URLs may carry a
// secret (a signing or invitation link), so no Referer may carry it anywhere and no cache keep a
// page; no other site may frame them to trick a click; nothing is sniffed; no search engine
// indexes them. Each page adds its own Content-Security-Policy (its nonce).
func PageHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set("X-Robots-Tag", "noindex, nofollow")
}
