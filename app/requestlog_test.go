package app

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"
)

// TestRequestLog_NoFeedToken: the request line logs the calendar feed's route pattern, never
// its token (a credential); other paths are logged as they are.
func TestRequestLog_NoFeedToken(t *testing.T) {
	var buf bytes.Buffer
	a := fiber.New()
	a.Use(requestLog(zerolog.New(&buf)))
	a.Get(V1Prefix+"/calendar/:token.ics", func(c *fiber.Ctx) error { return c.SendString("BEGIN:VCALENDAR") })
	a.Get(V1Prefix+"/tasks/:taskId", func(c *fiber.Ctx) error { return c.SendStatus(404) })
	for _, p := range []string{"/calendar/cal_SECRETTOKEN123.ics", "/tasks/0190f3a5-0000-7000-8000-000000000001"} {
		resp, err := a.Test(httptest.NewRequest("GET", V1Prefix+p, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	log := buf.String()
	if strings.Contains(log, "SECRETTOKEN") || !strings.Contains(log, `"path":"/api/public/v1/calendar/:token.ics"`) {
		t.Errorf("feed token in the log, or no feed line: %s", log)
	}
	if !strings.Contains(log, `"path":"/api/public/v1/tasks/0190f3a5-0000-7000-8000-000000000001"`) {
		t.Errorf("task path not logged as it is: %s", log)
	}
}
