package webhooks

import (
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestWebhooks_Endpoints: create, read, list, patch, rotate, delete, with their error cases.
func TestWebhooks_Endpoints(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, a.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"lead.updated", "lead.created", "lead.created"},
		"description": "CRM sync"})
	one := "/webhook-endpoints/" + ep.ID
	readOnly := a.KeyWithScopes(t, "webhooks:read")
	leadsOnly := a.KeyWithScopes(t, "webhooks:write", "leads:read")
	otherAdmin := a.KeyWithScopes(t, "*")
	valid := map[string]any{"url": "https://hooks.example.com/x", "events": []string{"*"}}

	env.Run(t, []apitest.Case{
		{Name: "created: sorted events without duplicates, bound to the key", Key: a.Secret, Path: one, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var got endpoint
				r.Decode(t, &got)
				if strings.Join(got.Events, ",") != "lead.created,lead.updated" || !got.Enabled || got.CredentialID == nil ||
					got.Description == nil || *got.Description != "CRM sync" || got.Secret != "" {
					t.Errorf("endpoint %+v", got)
				}
				if r.Header.Get("ETag") != `"1"` {
					t.Errorf("ETag %q", r.Header.Get("ETag"))
				}
			}},
		{Name: "list", Key: a.Secret, Path: "/webhook-endpoints?limit=1", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var page apitest.Page[endpoint]
			r.Decode(t, &page)
			if len(page.Data) != 1 || page.Data[0].ID != ep.ID {
				t.Errorf("list %s", r.Body)
			}
		}},
		{Name: "no credential", Path: "/webhook-endpoints", Status: 401, Problem: "missing_credential"},
		{Name: "read scope cannot create", Key: readOnly, Method: "POST", Path: "/webhook-endpoints", Body: valid, Status: 403, Problem: "insufficient_scope"},
		{Name: "another credential's read-only key gets 404 (endpoints belong to their credential)", Key: readOnly, Path: one,
			Status: 404, Problem: "not_found"},
		{Name: "other company gets 404", Key: b.Secret, Path: one, Status: 404, Problem: "not_found"},
		{Name: "sandbox key gets 404 for a live endpoint", Key: a.TestSecret, Path: one, Status: 404, Problem: "not_found"},
		{Name: "bad id", Key: a.Secret, Path: "/webhook-endpoints/nope", Status: 400, Problem: "invalid_id"},
		{Name: "malformed JSON", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints", Body: "{", Status: 400, Problem: "malformed_json"},
		{Name: "every invalid field at once", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "ftp://x", "events": []string{"nope.nope"}, "description": strings.Repeat("x", 501)},
			Status: 422, Problem: "validation_failed", Check: apitest.FieldErrors("url:https_required", "events:invalid_event_type", "description:too_long")},
		{Name: "url and events required", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints", Body: map[string]any{},
			Status: 422, Check: apitest.FieldErrors("url:required", "events:required")},
		{Name: "wildcard not alone", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "https://hooks.example.com", "events": []string{"*", "lead.created"}},
			Status: 422, Check: apitest.FieldErrors("events:wildcard_not_alone")},
		{Name: "unknown field", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "https://hooks.example.com", "events": []string{"*"}, "secret": "mine"},
			Status: 422, Check: apitest.FieldErrors("secret:unknown_field")},
		{Name: "a type the key may not receive", Key: leadsOnly, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "https://hooks.example.com", "events": []string{"lead.created", "user.created"}},
			Status: 422, Check: apitest.FieldErrors("events:event_type_forbidden")},
		{Name: "user info in the url", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "https://u:p@hooks.example.com", "events": []string{"*"}},
			Status: 422, Check: apitest.FieldErrors("url:url_credentials_not_allowed")},
		{Name: "private address", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "https://10.0.0.1/hook", "events": []string{"*"}},
			Status: 422, Check: apitest.FieldErrors("url:url_not_allowed")},
		{Name: "decimal IP", Key: a.Secret, Method: "POST", Path: "/webhook-endpoints",
			Body:   map[string]any{"url": "https://2130706433/hook", "events": []string{"*"}},
			Status: 422, Check: apitest.FieldErrors("url:invalid_host")},
		{Name: "patch needs a body that is an object", Key: a.Secret, Method: "PATCH", Path: one, Body: "[]", Status: 400},
		{Name: "patch cannot clear url", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"url": nil},
			Status: 422, Check: apitest.FieldErrors("url:required")},
		{Name: "patch server-owned field", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"id": ep.ID},
			Status: 422, Check: apitest.FieldErrors("id:read_only_field")},
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"enabled": false},
			Header: map[string]string{"If-Match": `"7"`}, Status: 412, Problem: "etag_mismatch"},
		{Name: "other company cannot patch", Key: b.Secret, Method: "PATCH", Path: one, Body: map[string]any{"enabled": false}, Status: 404},
		{Name: "other company cannot rotate", Key: b.Secret, Method: "POST", Path: one + "/rotate-secret", Status: 404},
		{Name: "other company cannot test", Key: b.Secret, Method: "POST", Path: one + "/test", Status: 404},
		{Name: "other company cannot read the log", Key: b.Secret, Path: one + "/deliveries", Status: 404},
		{Name: "other company cannot delete", Key: b.Secret, Method: "DELETE", Path: one, Status: 404},
		{Name: "bad status filter", Key: a.Secret, Path: one + "/deliveries?status=done", Status: 422, Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "retry of an unknown delivery", Key: a.Secret, Method: "POST", Path: one + "/deliveries/" + ep.ID + "/retry", Status: 404},
		{Name: "retry with a bad delivery id", Key: a.Secret, Method: "POST", Path: one + "/deliveries/x/retry", Status: 400, Problem: "invalid_id"},
		{Name: "disable", Key: a.Secret, Method: "PATCH", Path: one, Body: map[string]any{"enabled": false},
			Header: map[string]string{"If-Match": `"1"`}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var got endpoint
				r.Decode(t, &got)
				if got.Enabled || got.DisabledReason != nil || r.Header.Get("ETag") != `"2"` {
					t.Errorf("disabled endpoint %+v, ETag %s", got, r.Header.Get("ETag"))
				}
			}},
		{Name: "a patch that changes nothing keeps the version", Key: a.Secret, Method: "PATCH", Path: one,
			Body: map[string]any{"enabled": false}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("ETag %s, want \"2\"", r.Header.Get("ETag"))
				}
			}},
		{Name: "another credential cannot re-point it", Key: leadsOnly, Method: "PATCH", Path: one,
			Body: map[string]any{"url": rcv.URL + "/v2", "enabled": true}, Status: 404, Problem: "not_found"},
		{Name: "a new url binds the endpoint to the patching admin key", Key: otherAdmin, Method: "PATCH", Path: one,
			Body: map[string]any{"url": rcv.URL + "/v2", "enabled": true}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var got endpoint
				r.Decode(t, &got)
				if got.CredentialID == nil || *got.CredentialID == *ep.CredentialID || !got.Enabled {
					t.Errorf("after the url change %+v (was bound to %s)", got, *ep.CredentialID)
				}
			}},
		{Name: "rotate", Key: a.Secret, Method: "POST", Path: one + "/rotate-secret", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var rot struct {
				Secret                  string    `json:"secret"`
				PreviousSecretExpiresAt time.Time `json:"previousSecretExpiresAt"`
			}
			r.Decode(t, &rot)
			if !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == ep.Secret {
				t.Errorf("rotated secret %q", rot.Secret)
			}
			if d := time.Until(rot.PreviousSecretExpiresAt); d < 23*time.Hour || d > 25*time.Hour {
				t.Errorf("previous secret expires in %s, want 24 h", d)
			}
			if r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
			}
		}},
		{Name: "the endpoint shows the overlap", Key: a.Secret, Path: one, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var got endpoint
			r.Decode(t, &got)
			if got.PreviousSecretExpiresAt == nil {
				t.Errorf("previousSecretExpiresAt missing: %s", r.Body)
			}
		}},
		{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 204},
		{Name: "deleted is gone", Key: a.Secret, Path: one, Status: 404},
	})

	t.Run("idempotent create answers the same secret", func(t *testing.T) {
		h := map[string]string{"Idempotency-Key": "wh-" + ep.ID}
		r1 := env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints", Key: a.Secret, Body: valid, Header: h})
		r2 := env.Do(t, apitest.Request{Method: "POST", Path: "/webhook-endpoints", Key: a.Secret, Body: valid, Header: h})
		var e1, e2 endpoint
		r1.Decode(t, &e1)
		r2.Decode(t, &e2)
		if r1.Status != 201 || r2.Status != 201 || e1.ID != e2.ID || e1.Secret != e2.Secret || r2.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %d %s %s", r1.Status, r2.Status, r1.Body, r2.Body)
		}
	})

	t.Run("at most 20 endpoints per company", func(t *testing.T) {
		c := env.NewCompany(t)
		for range 20 {
			apitest.Create[endpoint](t, env, c.Secret, "/webhook-endpoints", valid)
		}
		env.Run(t, []apitest.Case{{Name: "21st", Key: c.Secret, Method: "POST", Path: "/webhook-endpoints", Body: valid,
			Status: 409, Problem: "endpoint_limit"}})
	})
}
