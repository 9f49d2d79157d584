package httpx

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/jsondoc"
)

// ServerOwned are fields a client never writes: a merge patch naming one is refused with 422
// read_only_field instead of being ignored (OWASP API3, mass assignment).
var ServerOwned = []string{"id", "createdAt", "updatedAt", "companyId", "version", "object"}

// IfMatch checks the If-Match header of a PATCH or DELETE against the resource's version. A
// missing header is allowed unless required (then 428); "*" matches any version; a list of tags
// matches when one does; weak tags never match (RFC 9110 §13.1.1).
func IfMatch(c *fiber.Ctx, version int64, required bool) error {
	h := strings.TrimSpace(c.Get(fiber.HeaderIfMatch))
	if h == "" {
		if required {
			return &errs.E{Kind: errs.ErrPreconditionReq, Code: "if_match_required",
				Detail: "send If-Match with the ETag of the version you changed"}
		}
		return nil
	}
	if h == "*" {
		return nil
	}
	want := ETag(version)
	for _, tag := range splitTags(h) {
		if tag == want { // strong comparison: a weak tag never matches
			return nil
		}
	}
	return &errs.E{Kind: errs.ErrPrecondition, Code: "etag_mismatch",
		Detail: "the resource changed since you read it (its ETag is " + want + "); read it again and retry"}
}

// MergePatch applies the request body, an RFC 7396 JSON merge patch, to current (the resource
// as its input type, e.g. a ContactPatch filled from the stored record) and decodes the result
// back into current. Absent keys stay, null clears, objects merge key by key, arrays and scalars
// replace. The body must be application/merge-patch+json or application/json and a JSON
// object; a server-owned field anywhere at the top level is 422 read_only_field. Validate runs
// on the result when current has it.
func MergePatch(c *fiber.Ctx, current any) error {
	patch, err := ReadMergePatch(c)
	if err != nil {
		return err
	}
	return jsondoc.ApplyPatch(current, patch)
}

// ReadMergePatch reads the body of a PATCH as MergePatch does (content type, a JSON object,
// no server-owned field) without applying it, for resources that rewrite the patch first
// (writeMode fill_empty_only). Numbers stay json.Number.
func ReadMergePatch(c *fiber.Ctx) (map[string]any, error) {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(c.Get(fiber.HeaderContentType), ";", 2)[0]))
	if ct != "application/merge-patch+json" && ct != fiber.MIMEApplicationJSON {
		c.Set("Accept-Patch", "application/merge-patch+json")
		return nil, fiber.NewError(fiber.StatusUnsupportedMediaType, "send the patch as application/merge-patch+json")
	}
	var patch map[string]any
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.UseNumber()
	if err := dec.Decode(&patch); err != nil || patch == nil {
		return nil, errs.BadRequest("malformed_json", "the body must be a JSON object (a merge patch)")
	}
	var v errs.Invalid
	for _, f := range ServerOwned {
		if _, ok := patch[f]; ok {
			v.Add(f, "read_only_field", "is set by the server and cannot be patched")
		}
	}
	return patch, v.Err()
}

// splitTags splits an If-Match or If-None-Match list into trimmed entity tags.
func splitTags(h string) []string {
	parts := strings.Split(h, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func trimWeak(tag string) string { return strings.TrimPrefix(tag, "W/") }

// IfNoneMatch reports whether an If-None-Match header names etag (weak comparison, RFC 9110
// §13.1.2): a conditional GET of an unchanged resource answers 304.
func IfNoneMatch(header, etag string) bool {
	for _, t := range splitTags(header) {
		if t == "*" || trimWeak(t) == trimWeak(etag) {
			return true
		}
	}
	return false
}
