package httpx

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ETag returns the strong entity tag of a resource version.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// OK answers 200 with v as JSON and, for a single resource, its ETag (version > 0).
func OK(c *fiber.Ctx, v any, version int64) error {
	if version > 0 {
		c.Set(fiber.HeaderETag, ETag(version))
	}
	return c.JSON(v)
}

// Created answers 201 with v, its Location and its ETag.
func Created(c *fiber.Ctx, location string, v any, version int64) error {
	c.Set(fiber.HeaderLocation, location)
	if version > 0 {
		c.Set(fiber.HeaderETag, ETag(version))
	}
	return c.Status(fiber.StatusCreated).JSON(v)
}

// NoContent answers 204.
func NoContent(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) }

// V1Prefix is where the Public API v1 lives.
const V1Prefix = "/api/public/v1"

// URL is the address of a v1 resource, for Location: URL("tasks", id) is
// /api/public/v1/tasks/{id}.
func URL(segments ...string) string {
	return V1Prefix + "/" + strings.Join(segments, "/")
}
