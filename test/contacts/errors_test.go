package contacts

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContacts_ErrorCases: the error answers of the contact endpoints the other tests leave
// out: bad path segments of the external routes, missing scopes, malformed bodies, unknown and
// foreign ids, and the conflicts and preconditions of PATCH and DELETE.
func TestContacts_ErrorCases(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	c, etag := create(t, env, a.Secret, map[string]any{"type": "private", "firstName": "Eva", "lastName": "Fehler",
		"externalReferences": []map[string]any{{"source": "ams", "externalId": "E-1"}}})
	taken, _ := create(t, env, a.Secret, map[string]any{"type": "private", "firstName": "Tom", "lastName": "Besetzt",
		"externalReferences": []map[string]any{{"source": "ams", "externalId": "T-1"}}})
	path := "/contacts/" + c.ID
	readOnly := a.KeyWithScopes(t, "contacts:read")
	noContacts := a.KeyWithScopes(t, "leads:read", "leads:write")
	merge := func(tag string) map[string]string {
		return map[string]string{"If-Match": tag, "Content-Type": "application/merge-patch+json"}
	}
	long := func(n int) string { return strings.Repeat("a", n) }
	upsert := map[string]any{"type": "private", "firstName": "Eva", "lastName": "Fehler"}

	env.Run(t, []apitest.Case{
		// GET /external/{source}/contacts/{externalId}: path segments are checked like body references.
		{Name: "external get works", Key: a.Secret, Path: "/external/ams/contacts/E-1", Status: 200},
		{Name: "source too long", Key: a.Secret, Path: "/external/" + long(101) + "/contacts/E-1", Status: 422,
			Check: apitest.FieldErrorSet("path.source:invalid_length")},
		{Name: "external id too long", Key: a.Secret, Path: "/external/ams/contacts/" + long(256), Status: 422,
			Check: apitest.FieldErrorSet("path.externalId:invalid_length")},
		{Name: "longest allowed segments are a plain 404", Key: a.Secret, Path: "/external/" + long(100) + "/contacts/" + long(255), Status: 404},
		{Name: "blank source", Key: a.Secret, Path: "/external/%20/contacts/E-1", Status: 422, Check: apitest.FieldErrorSet("path.source:invalid_length")},
		{Name: "blank external id", Key: a.Secret, Path: "/external/ams/contacts/%20%20", Status: 422,
			Check: apitest.FieldErrorSet("path.externalId:invalid_length")},
		{Name: "both bad, both listed", Key: a.Secret, Path: "/external/%20/contacts/" + long(256), Status: 422,
			Check: apitest.FieldErrorSet("path.source:invalid_length", "path.externalId:invalid_length")},
		{Name: "a NUL character", Key: a.Secret, Path: "/external/ams/contacts/E%00", Status: 422,
			Check: apitest.FieldErrorSet("path.externalId:invalid_character")},
		{Name: "invalid UTF-8 (was 500 from PostgreSQL)", Key: a.Secret, Path: "/external/ams/contacts/E%ff", Status: 422,
			Check: apitest.FieldErrorSet("path.externalId:invalid_character")},
		{Name: "an escaped slash is part of the id", Key: a.Secret, Path: "/external/ams/contacts/E%2F1", Status: 404},
		{Name: "empty source: no such route", Key: a.Secret, Path: "/external//contacts/E-1", Status: 404},
		{Name: "empty external id: no such route", Key: a.Secret, Path: "/external/ams/contacts/", Status: 404},
		{Name: "external get needs contacts:read", Key: noContacts, Path: "/external/ams/contacts/E-1", Status: 403,
			Problem: "insufficient_scope"},
		{Name: "external get of another company", Key: b.Secret, Path: "/external/ams/contacts/E-1", Status: 404},
		{Name: "external get without key", Path: "/external/ams/contacts/E-1", Status: 401},

		// PUT /external/{source}/contacts/{externalId}
		{Name: "external put: a bad segment is refused before the body is read", Key: a.Secret, Method: "PUT",
			Path: "/external/ams/contacts/" + long(256), Body: map[string]any{"type": "private"}, Status: 422,
			Check: apitest.FieldErrorSet("path.externalId:invalid_length")},
		{Name: "external put: a NUL in the source", Key: a.Secret, Method: "PUT", Path: "/external/a%00/contacts/E-1", Body: upsert,
			Status: 422, Check: apitest.FieldErrorSet("path.source:invalid_character")},
		{Name: "external put: malformed", Key: a.Secret, Method: "PUT", Path: "/external/ams/contacts/E-1", Body: `{"type":`,
			Status: 400, Problem: "malformed_json"},
		{Name: "external put: a reference another contact carries", Key: a.Secret, Method: "PUT", Path: "/external/ams/contacts/E-1",
			Body: map[string]any{"externalReferences": []map[string]any{{"source": "ams", "externalId": "T-1"}}}, Status: 409,
			Problem: "external_reference_taken"},
		{Name: "external put needs contacts:write", Key: readOnly, Method: "PUT", Path: "/external/ams/contacts/E-1", Body: upsert,
			Status: 403, Problem: "insufficient_scope"},
		{Name: "external put without key", Method: "PUT", Path: "/external/ams/contacts/E-1", Body: upsert, Status: 401},

		// GET /contacts/{contactId}
		{Name: "get: bad id", Key: a.Secret, Path: "/contacts/x", Status: 400, Problem: "invalid_id"},
		{Name: "get: unknown", Key: a.Secret, Path: "/contacts/" + uuid.NewString(), Status: 404, Problem: "not_found"},
		{Name: "get: another company's", Key: b.Secret, Path: path, Status: 404, Problem: "not_found"},
		{Name: "get: scope", Key: noContacts, Path: path, Status: 403, Problem: "insufficient_scope"},
		{Name: "get: no key", Path: path, Status: 401},

		// PATCH /contacts/{contactId}
		{Name: "patch: needs contacts:write", Key: readOnly, Method: "PATCH", Path: path, Header: merge(etag), Body: `{"firstName":"X"}`,
			Status: 403, Problem: "insufficient_scope"},
		{Name: "patch: malformed", Key: a.Secret, Method: "PATCH", Path: path, Header: merge(etag), Body: `{"firstName":`,
			Status: 400, Problem: "malformed_json"},
		{Name: "patch: not an object", Key: a.Secret, Method: "PATCH", Path: path, Header: merge(etag), Body: `[1]`,
			Status: 400, Problem: "malformed_json"},
		{Name: "patch: another media type", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"firstName":"X"}`,
			Header: map[string]string{"If-Match": etag, "Content-Type": "text/plain"}, Status: 415},
		{Name: "patch: unknown field", Key: a.Secret, Method: "PATCH", Path: path, Header: merge(etag), Body: `{"nickname":"E"}`,
			Status: 422, Check: apitest.FieldErrorSet("nickname:unknown_field")},
		{Name: "patch: unknown owner", Key: a.Secret, Method: "PATCH", Path: path, Header: merge(etag),
			Body: map[string]any{"ownerId": uuid.NewString()}, Status: 422, Check: apitest.FieldErrorSet("ownerId:unknown_user")},
		{Name: "patch: unknown custom field", Key: a.Secret, Method: "PATCH", Path: path, Header: merge(etag),
			Body: `{"customFields":{"golf":"ja"}}`, Status: 422, Check: apitest.FieldErrorSet("customFields.golf:unknown_custom_field")},
		{Name: "patch: null may not clear a name a private contact needs", Key: a.Secret, Method: "PATCH", Path: path,
			Header: merge(etag), Body: `{"lastName":null}`, Status: 422, Check: apitest.FieldErrorSet("lastName:required")},
		{Name: "patch: a reference another contact carries", Key: a.Secret, Method: "PATCH", Path: path, Header: merge(etag),
			Body: map[string]any{"externalReferences": []map[string]any{{"source": "ams", "externalId": "T-1"}}}, Status: 409,
			Problem: "external_reference_taken"},
		{Name: "patch: a weak ETag never matches", Key: a.Secret, Method: "PATCH", Path: path, Header: merge("W/" + etag),
			Body: `{"firstName":"X"}`, Status: 412, Problem: "etag_mismatch"},
		{Name: "patch: no key", Method: "PATCH", Path: path, Header: merge(etag), Body: `{}`, Status: 401},

		// DELETE /contacts/{contactId}
		{Name: "delete: bad id", Key: a.Secret, Method: "DELETE", Path: "/contacts/x", Header: map[string]string{"If-Match": "*"},
			Status: 400, Problem: "invalid_id"},
		{Name: "delete: unknown", Key: a.Secret, Method: "DELETE", Path: "/contacts/" + uuid.NewString(),
			Header: map[string]string{"If-Match": "*"}, Status: 404},
		{Name: "delete: needs contacts:write", Key: readOnly, Method: "DELETE", Path: path, Header: map[string]string{"If-Match": etag},
			Status: 403, Problem: "insufficient_scope"},
		{Name: "delete: sandbox twin", Key: a.TestSecret, Method: "DELETE", Path: path, Header: map[string]string{"If-Match": etag},
			Status: 404},
		{Name: "delete: no key", Method: "DELETE", Path: path, Header: map[string]string{"If-Match": etag}, Status: 401},

		// GET /contact-fields, /custom-fields
		{Name: "contact-fields needs contacts:read", Key: noContacts, Path: "/contact-fields", Status: 403, Problem: "insufficient_scope"},
		{Name: "custom-fields needs contacts:read", Key: noContacts, Path: "/custom-fields", Status: 403, Problem: "insufficient_scope"},
		{Name: "custom-fields without key", Path: "/custom-fields", Status: 401},
		{Name: "custom field: malformed", Key: a.Secret, Method: "POST", Path: "/custom-fields", Body: `{"key":`, Status: 400,
			Problem: "malformed_json"},
		{Name: "custom field: needs admin:write", Key: a.KeyWithScopes(t, "contacts:read", "contacts:write"), Method: "POST",
			Path: "/custom-fields", Body: map[string]any{"key": "golf", "label": "Golf", "dataType": "string"}, Status: 403,
			Problem: "insufficient_scope"},

		// POST /contacts/match, /contacts/bulk
		{Name: "match: malformed", Key: a.Secret, Method: "POST", Path: "/contacts/match", Body: `{`, Status: 400, Problem: "malformed_json"},
		{Name: "match: needs contacts:read", Key: noContacts, Method: "POST", Path: "/contacts/match", Body: `{"lastName":"Fehler"}`,
			Status: 403, Problem: "insufficient_scope"},
		{Name: "match: no key", Method: "POST", Path: "/contacts/match", Body: `{"lastName":"Fehler"}`, Status: 401},
		{Name: "bulk: more than 100 items", Key: a.Secret, Method: "POST", Path: "/contacts/bulk", Status: 422,
			Body: map[string]any{"items": make([]map[string]any, 101)}, Check: apitest.FieldErrorSet("items:invalid_length")},
		{Name: "bulk: malformed", Key: a.Secret, Method: "POST", Path: "/contacts/bulk", Body: `{"items":`, Status: 400,
			Problem: "malformed_json"},
		{Name: "bulk: no key", Method: "POST", Path: "/contacts/bulk", Body: `{"items":[{}]}`, Status: 401},
	})
	// Nothing of the refusals changed the contacts.
	env.Run(t, []apitest.Case{
		{Name: "unchanged", Key: a.Secret, Path: path, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if got := decode(t, r); got.LastName != "Fehler" || r.Header.Get("ETag") != etag {
				t.Errorf("%+v %s", got, r.Header.Get("ETag"))
			}
		}},
		{Name: "the other still carries its reference", Key: a.Secret, Path: "/external/ams/contacts/T-1", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if decode(t, r).ID != taken.ID {
					t.Error("another contact")
				}
			}},
	})
}

// TestContacts_BodyTooLarge: a body over 10 MiB is 413 payload_too_large on the contact
// operations that take one (the OpenAPI document lists it for each).
func TestContacts_BodyTooLarge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	big := `{"type":"private","firstName":"` + strings.Repeat("x", 11<<20) + `"}`
	for _, r := range []apitest.Request{
		{Method: "POST", Path: "/contacts", Key: a.Secret, Body: big},
		{Method: "PUT", Path: "/external/ams/contacts/X-1", Key: a.Secret, Body: big},
		{Method: "POST", Path: "/contacts/bulk", Key: a.Secret, Body: big},
	} {
		got := env.Do(t, r)
		if got.Status != 413 || got.Problem(t).Code != "payload_too_large" {
			t.Errorf("%s %s: %d %.200s", r.Method, r.Path, got.Status, got.Body)
		}
	}
}
