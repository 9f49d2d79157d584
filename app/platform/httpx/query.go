package httpx

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// The query parsers of list filters. Each reads one parameter, adds what is wrong with it to v
// (so a request learns every bad parameter at once, 422) and returns the zero value then. Each
// message is written here once. Strings are copied: Fiber reuses the request's memory.

// QueryTime reads an optional timestamp (RFC 3339, or Europe/Berlin local time without an
// offset): nil when absent.
func QueryTime(c *fiber.Ctx, v *errs.Invalid, name string) *time.Time {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	t, ok := ParseTime(s)
	v.Check(name, ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
	if !ok {
		return nil
	}
	return &t
}

// RequiredQueryTime reads a timestamp that must be there; ok is false when it is absent or bad.
func RequiredQueryTime(c *fiber.Ctx, v *errs.Invalid, name string) (t time.Time, ok bool) {
	if c.Query(name) == "" {
		v.Add(name, "required", "is required")
		return time.Time{}, false
	}
	p := QueryTime(c, v, name)
	if p == nil {
		return time.Time{}, false
	}
	return *p, true
}

// QueryBool reads an optional true or false: nil when absent.
func QueryBool(c *fiber.Ctx, v *errs.Invalid, name string) *bool {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	ok := s == "true" || s == "false"
	v.Check(name, ok, "invalid_boolean", "must be true or false")
	if !ok {
		return nil
	}
	b, _ := strconv.ParseBool(s)
	return &b
}

// QueryEnum reads an optional value of allowed: nil when absent.
func QueryEnum(c *fiber.Ctx, v *errs.Invalid, name string, allowed []string) *string {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	if !slices.Contains(allowed, s) {
		v.Add(name, "invalid_enum", "must be one of "+strings.Join(allowed, ", "))
		return nil
	}
	s = strings.Clone(s)
	return &s
}

// QueryEnums reads a comma-separated list of values of allowed, sorted and without repeats:
// nil when absent.
func QueryEnums(c *fiber.Ctx, v *errs.Invalid, name string, allowed []string) []string {
	s := c.Query(name)
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allowed, p) {
			v.Add(name, "invalid_enum", "comma-separated values of "+strings.Join(allowed, ", "))
			return nil
		}
		out = append(out, strings.Clone(p))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// QueryList reads a comma-separated list of free values (tags), trimmed, without empties or
// repeats, in the order given: nil when absent.
func QueryList(c *fiber.Ctx, name string) []string {
	var out []string
	for _, p := range strings.Split(c.Query(name), ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, strings.Clone(p))
		}
	}
	return out
}
