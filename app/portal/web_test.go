package portal

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPageErrors: an error a portal handler returns is an HTML page with the portal's headers,
// never the API's problem+json: a passing database failure 503 with Retry-After (a customer
// retries), anything unexpected 500. Catches a database blip answered as a 500 or as JSON a
// browser shows raw.
func TestPageErrors(t *testing.T) {
	m := New(Deps{Secret: []byte("test secret"), PublicURL: "http://127.0.0.1"})
	app := fiber.New()
	app.Get("/blip", m.pageErrors, func(*fiber.Ctx) error {
		return &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}
	})
	app.Get("/bug", m.pageErrors, func(*fiber.Ctx) error { return errors.New("a bug") })
	app.Get("/bad", m.pageErrors, func(*fiber.Ctx) error { return fiber.ErrBadRequest })
	for path, want := range map[string]int{"/blip": 503, "/bug": 500, "/bad": 400} {
		resp, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(string(body), "<!doctype html>") || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: %d %q, want %d as an HTML page\n%s", path, resp.StatusCode, resp.Header.Get("Content-Type"), want, body)
		}
		if ra := resp.Header.Get("Retry-After"); (want == 503) != (ra != "") {
			t.Errorf("%s: Retry-After %q", path, ra)
		}
	}
}
