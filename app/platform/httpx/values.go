package httpx

import (
	"strings"
	"time"
	_ "time/tzdata" // Europe/Berlin must resolve on machines without a zoneinfo database

	"github.com/gofiber/fiber/v2"
)

// Berlin is the zone of timestamps sent without an offset (spec: Conventions).
var Berlin = mustZone("Europe/Berlin")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

var localLayouts = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04"}

// ParseTime reads an input timestamp: RFC 3339 with an offset, or without one as Europe/Berlin
// local time.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	for _, l := range localLayouts {
		if t, err := time.ParseInLocation(l, s, Berlin); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Lang is the language of …Label fields and messages: "de" (default) or "en", chosen from
// Accept-Language. It sets Content-Language on the response.
func Lang(c *fiber.Ctx) string {
	lang := "de"
	if c.AcceptsLanguages("de", "en") == "en" {
		lang = "en"
	}
	c.Set(fiber.HeaderContentLanguage, lang)
	c.Vary(fiber.HeaderAcceptLanguage)
	return lang
}
