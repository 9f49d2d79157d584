package leads

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	entlead "github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestLeads_Create(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	portal := env.NewCompany(t, "customer_portal")
	stages := mustStages(t, env, a.Secret)
	agent := env.NewUser(t, a, "agent")

	env.Run(t, []apitest.Case{
		{Name: "full lead", Key: a.Secret, Method: "POST", Path: "/leads", Status: 201,
			Body: map[string]any{"firstName": "Anna", "lastName": "Berger", "email": " Anna.Berger@Example.com ",
				"phone": "0170 1234567", "source": "website", "notes": "Hausrat", "additionalFields": map[string]string{"product": "Hausrat"},
				"ownerId": agent.ID.String(), "externalReferences": []map[string]string{{"source": "ams", "externalId": "L-1"}}},
			Check: func(t *testing.T, r *apitest.Response) {
				var l lead
				r.Decode(t, &l)
				if l.FirstName != "Anna" || *l.Email != "Anna.Berger@Example.com" || *l.Phone != "0170 1234567" ||
					*l.Source != "website" || l.AdditionalFields["product"] != "Hausrat" || *l.OwnerID != agent.ID.String() ||
					l.StageID != stages["new"].ID || l.Converted || l.Test || len(l.ExternalReferences) != 1 {
					t.Errorf("got %+v", l)
				}
				if r.Header.Get("Location") != "/api/public/v1/leads/"+l.ID || r.Header.Get("ETag") != `"1"` {
					t.Errorf("Location %q, ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
				}
			}},
		{Name: "phone alone is enough", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"phone":"+49 30 1234567"}`, Status: 201},
		{Name: "e-mail alone is enough", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"email":"x@example.com"}`, Status: 201},
		{Name: "neither e-mail nor phone", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"firstName":"Anna"}`,
			Status: 422, Problem: "validation_failed", Check: apitest.FieldErrors("email:email_or_phone_required", "phone:email_or_phone_required")},
		{Name: "every bad field is listed", Key: a.Secret, Method: "POST", Path: "/leads", Status: 422,
			Body: map[string]any{"firstName": strings.Repeat("x", 101), "email": "nope", "phone": "12", "source": "tv",
				"ownerId": "x", "stageId": "y", "externalReferences": []map[string]string{{"source": "", "externalId": "1"}}},
			Check: apitest.FieldErrors("firstName:too_long", "email:invalid_email", "phone:invalid_phone", "source:invalid_enum",
				"ownerId:invalid_uuid", "stageId:invalid_uuid", "externalReferences.0.source:invalid_length")},
		{Name: "unknown stage and owner", Key: a.Secret, Method: "POST", Path: "/leads", Status: 422,
			Body:  map[string]any{"email": "a@example.com", "stageId": uuid.NewString(), "ownerId": uuid.NewString()},
			Check: apitest.FieldErrors("stageId:unknown_stage", "ownerId:unknown_user")},
		{Name: "not straight into converted", Key: a.Secret, Method: "POST", Path: "/leads", Status: 422,
			Body: map[string]any{"email": "a@example.com", "stageId": stages["converted"].ID}, Check: apitest.FieldErrors("stageId:conversion_required")},
		{Name: "unknown field", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"email":"a@example.com","test":true}`,
			Status: 422, Check: apitest.FieldErrors("test:unknown_field")},
		{Name: "wrong type", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"email":42}`, Status: 422,
			Check: apitest.FieldErrors("email:invalid_type")},
		{Name: "malformed JSON", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"email":`, Status: 400, Problem: "malformed_json"},
		{Name: "not JSON", Key: a.Secret, Method: "POST", Path: "/leads", Body: `email=a`, Status: 415,
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Problem: "unsupported_media_type"},
		{Name: "taken external reference", Key: a.Secret, Method: "POST", Path: "/leads", Status: 409, Problem: "external_reference_taken",
			Body: map[string]any{"email": "b@example.com", "externalReferences": []map[string]string{{"source": "ams", "externalId": "L-1"}}}},
		{Name: "no key", Method: "POST", Path: "/leads", Body: `{"email":"a@example.com"}`, Status: 401, Problem: "missing_credential"},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "leads:read"), Method: "POST", Path: "/leads",
			Body: `{"email":"a@example.com"}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "feature not licensed", Key: portal.Secret, Method: "POST", Path: "/leads", Body: `{"email":"a@example.com"}`,
			Status: 403, Problem: "feature_not_licensed"},
		{Name: "bad idempotency key", Key: a.Secret, Method: "POST", Path: "/leads", Body: `{"email":"a@example.com"}`,
			Header: map[string]string{"Idempotency-Key": "ä"}, Status: 400, Problem: "invalid_idempotency_key"},
	})
}

func TestLeads_CreateIdempotent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	body := `{"firstName":"Once","email":"once@example.com"}`
	const n = 50
	res := make([]*apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: a.Secret, Body: body,
				Header: map[string]string{"Idempotency-Key": "lead-once"}})
		}()
	}
	wg.Wait()
	var original *apitest.Response
	for _, r := range res {
		if r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "" {
			if original != nil {
				t.Fatal("two requests executed")
			}
			original = r
		}
	}
	if original == nil {
		t.Fatal("no request executed")
	}
	replayed, inUse := 0, 0
	for _, r := range res {
		switch {
		case r == original:
		case r.Status == 409 && r.Problem(t).Code == "idempotency_key_in_use":
			inUse++
		case r.Status == 201 && bytes.Equal(r.Body, original.Body) && r.Header.Get("Idempotent-Replayed") == "true" &&
			r.Header.Get("Location") == original.Header.Get("Location") && r.Header.Get("ETag") == original.Header.Get("ETag"):
			replayed++
		default:
			t.Errorf("answer %d %s is neither the original nor 409", r.Status, r.Body)
		}
	}
	t.Logf("1 created, %d replayed, %d in use", replayed, inUse)
	var created int
	env.InCompany(t, a.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		created, err = db.Lead.Query().Where(entlead.EmailKey("once@example.com")).Count(ctx)
		return err
	})
	if created != 1 {
		t.Errorf("%d leads created, want 1", created)
	}
	if got := len(events(t, env, a.Secret, "lead.created")); got != 1 {
		t.Errorf("%d lead.created events, want 1", got)
	}
	env.Run(t, []apitest.Case{
		{Name: "a retry later replays the original", Key: a.Secret, Method: "POST", Path: "/leads", Body: body,
			Header: map[string]string{"Idempotency-Key": "lead-once"}, Status: 201, Check: func(t *testing.T, r *apitest.Response) {
				if !bytes.Equal(r.Body, original.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("replay %s", r.Body)
				}
			}},
		{Name: "another body with the key is 422", Key: a.Secret, Method: "POST", Path: "/leads",
			Body: `{"firstName":"Twice","email":"once@example.com"}`, Header: map[string]string{"Idempotency-Key": "lead-once"},
			Status: 422, Problem: "idempotency_key_reused"},
	})
}

func TestLeads_Get(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	portal := env.NewCompany(t, "customer_portal")
	l := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Anna", "email": "anna@example.com"})

	env.Run(t, []apitest.Case{
		{Name: "owner reads it", Key: a.Secret, Path: "/leads/" + l.ID, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var got lead
			r.Decode(t, &got)
			if got.ID != l.ID || got.FirstName != "Anna" || r.Header.Get("ETag") != `"1"` {
				t.Errorf("got %+v, ETag %q", got, r.Header.Get("ETag"))
			}
		}},
		{Name: "read scope is enough", Key: a.KeyWithScopes(t, "leads:read"), Path: "/leads/" + l.ID, Status: 200},
		{Name: "other company gets 404", Key: b.Secret, Path: "/leads/" + l.ID, Status: 404, Problem: "not_found"},
		{Name: "own sandbox gets 404", Key: a.TestSecret, Path: "/leads/" + l.ID, Status: 404, Problem: "not_found"},
		{Name: "unknown id", Key: a.Secret, Path: "/leads/" + uuid.NewString(), Status: 404, Problem: "not_found"},
		{Name: "bad id", Key: a.Secret, Path: "/leads/42", Status: 400, Problem: "invalid_id"},
		{Name: "no key", Path: "/leads/" + l.ID, Status: 401, Problem: "missing_credential"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: "/leads/" + l.ID, Status: 403, Problem: "insufficient_scope"},
		{Name: "feature not licensed", Key: portal.Secret, Path: "/leads/" + l.ID, Status: 403, Problem: "feature_not_licensed"},
	})
}

func TestLeads_Update(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	stages := mustStages(t, env, a.Secret)
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/lead-stages", Key: a.Secret, Body: `{"name":"Termin vereinbart"}`})
	if r.Status != 201 {
		t.Fatalf("create stage: %d %s", r.Status, r.Body)
	}
	var termin stage
	r.Decode(t, &termin)
	l := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Anna", "email": "anna@example.com", "phone": "0170 1234567",
		"additionalFields": map[string]string{"a": "1", "b": "2"}, "ownerId": agent.ID.String()})
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for x, y := range h {
			out[x] = y
		}
		return out
	}

	env.Run(t, []apitest.Case{
		{Name: "moves the stage, clears the owner, merges fields", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID,
			Header: with(merge, "If-Match", `"1"`), Status: 200,
			Body: map[string]any{"stageId": termin.ID, "ownerId": nil, "lastName": "Berger", "additionalFields": map[string]any{"a": nil, "c": "3"}},
			Check: func(t *testing.T, r *apitest.Response) {
				var got lead
				r.Decode(t, &got)
				if got.StageID != termin.ID || got.OwnerID != nil || got.LastName != "Berger" || got.FirstName != "Anna" ||
					len(got.AdditionalFields) != 2 || got.AdditionalFields["c"] != "3" || got.AdditionalFields["b"] != "2" {
					t.Errorf("got %+v", got)
				}
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("ETag %q, want \"2\"", r.Header.Get("ETag"))
				}
			}},
		{Name: "a patch that changes nothing keeps the version", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID,
			Header: merge, Body: `{"lastName":"Berger"}`, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("ETag %q, want \"2\"", r.Header.Get("ETag"))
				}
			}},
		{Name: "application/json is accepted too", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID,
			Body: `{"notes":"called back"}`, Status: 200},
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: with(merge, "If-Match", `"1"`),
			Body: `{"notes":"x"}`, Status: 412, Problem: "etag_mismatch"},
		{Name: "clearing both e-mail and phone", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{"email":null,"phone":null}`, Status: 422, Check: apitest.FieldErrors("email:email_or_phone_required", "phone:email_or_phone_required")},
		{Name: "stageId cannot be cleared", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{"stageId":null}`, Status: 422, Check: apitest.FieldErrors("stageId:required")},
		{Name: "unknown stage", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: map[string]any{"stageId": uuid.NewString()}, Status: 422, Check: apitest.FieldErrors("stageId:unknown_stage")},
		{Name: "another company's stage", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: map[string]any{"stageId": mustStages(t, env, b.Secret)["new"].ID}, Status: 422, Check: apitest.FieldErrors("stageId:unknown_stage")},
		{Name: "converted only by converting", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: map[string]any{"stageId": stages["converted"].ID}, Status: 422, Check: apitest.FieldErrors("stageId:conversion_required")},
		{Name: "read-only field", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{"id":"x","createdAt":"2020-01-01T00:00:00Z"}`, Status: 422, Check: apitest.FieldErrors("id:read_only_field", "createdAt:read_only_field")},
		{Name: "unknown field", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{"converted":true}`, Status: 422, Check: apitest.FieldErrors("converted:unknown_field")},
		{Name: "bad values listed", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{"email":"x","source":"tv","ownerId":"1"}`, Status: 422,
			Check: apitest.FieldErrors("email:invalid_email", "source:invalid_enum", "ownerId:invalid_uuid")},
		{Name: "not a merge patch", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Body: `notes=x`,
			Header: map[string]string{"Content-Type": "text/plain"}, Status: 415, Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("Accept-Patch") != "application/merge-patch+json" {
					t.Errorf("Accept-Patch %q", r.Header.Get("Accept-Patch"))
				}
			}},
		{Name: "malformed patch", Key: a.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge, Body: `[`, Status: 400,
			Problem: "malformed_json"},
		{Name: "other company gets 404", Key: b.Secret, Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{"notes":"mine now"}`, Status: 404, Problem: "not_found"},
		{Name: "bad id", Key: a.Secret, Method: "PATCH", Path: "/leads/nope", Header: merge, Body: `{}`, Status: 400, Problem: "invalid_id"},
		{Name: "no key", Method: "PATCH", Path: "/leads/" + l.ID, Header: merge, Body: `{}`, Status: 401},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "leads:read"), Method: "PATCH", Path: "/leads/" + l.ID, Header: merge,
			Body: `{}`, Status: 403, Problem: "insufficient_scope"},
	})
	if got := apitest.Get[lead](t, env, a.Secret, "/leads/"+l.ID); got.Notes != "called back" {
		t.Errorf("notes %q: B's patch or a refused one changed the lead", got.Notes)
	}
	updates := events(t, env, a.Secret, "lead.updated")
	if len(updates) != 2 || updates[0].Data["stageId"] != termin.ID {
		t.Errorf("lead.updated events %+v, want 2 (the no-op patch records none)", updates)
	}
}

func TestLeads_Delete(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	l := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Gone", "email": "gone@example.com",
		"externalReferences": []map[string]string{{"source": "ams", "externalId": "G-1"}}})
	kept := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"email": "kept@example.com"})

	env.Run(t, []apitest.Case{
		{Name: "other company gets 404", Key: b.Secret, Method: "DELETE", Path: "/leads/" + l.ID, Status: 404, Problem: "not_found"},
		{Name: "stale If-Match", Key: a.Secret, Method: "DELETE", Path: "/leads/" + l.ID, Header: map[string]string{"If-Match": `"7"`},
			Status: 412, Problem: "etag_mismatch"},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "leads:read"), Method: "DELETE", Path: "/leads/" + l.ID, Status: 403},
		{Name: "no key", Method: "DELETE", Path: "/leads/" + l.ID, Status: 401},
		{Name: "bad id", Key: a.Secret, Method: "DELETE", Path: "/leads/x", Status: 400, Problem: "invalid_id"},
		{Name: "deletes", Key: a.Secret, Method: "DELETE", Path: "/leads/" + l.ID, Header: map[string]string{"If-Match": `"1"`}, Status: 204},
		{Name: "gone afterwards", Key: a.Secret, Path: "/leads/" + l.ID, Status: 404},
		{Name: "deleting again is 404", Key: a.Secret, Method: "DELETE", Path: "/leads/" + l.ID, Status: 404},
		{Name: "its external reference is free again", Key: a.Secret, Method: "POST", Path: "/leads", Status: 201,
			Body: map[string]any{"email": "again@example.com", "externalReferences": []map[string]string{{"source": "ams", "externalId": "G-1"}}}},
	})
	apitest.Get[lead](t, env, a.Secret, "/leads/"+kept.ID)
	deleted := events(t, env, a.Secret, "lead.deleted")
	if len(deleted) != 1 || deleted[0].Data["id"] != l.ID || deleted[0].Data["firstName"] != "Gone" {
		t.Errorf("lead.deleted events %+v, want the lead as it was", deleted)
	}
}

func TestLeads_DeleteTest(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	real := apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"email": "real@example.com"})
	testIDs := addTestLeads(t, env, a.ID, 3)
	bTest := addTestLeads(t, env, b.ID, 2)

	count := func(want int) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[lead]
			r.Decode(t, &p)
			if len(p.Data) != want {
				t.Errorf("%d leads, want %d", len(p.Data), want)
			}
		}
	}
	deleted := func(want int) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var got struct {
				Deleted int  `json:"deleted"`
				HasMore bool `json:"hasMore"`
			}
			r.Decode(t, &got)
			if got.Deleted != want || got.HasMore {
				t.Errorf("got %+v, want %d deleted", got, want)
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "test leads are hidden by default", Key: a.Secret, Path: "/leads", Status: 200, Check: count(1)},
		{Name: "includeTest shows them", Key: a.Secret, Path: "/leads?includeTest=true", Status: 200, Check: count(4)},
		{Name: "test=true is required", Key: a.Secret, Method: "DELETE", Path: "/leads", Status: 422, Check: apitest.FieldErrors("test:required")},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "leads:read"), Method: "DELETE", Path: "/leads?test=true", Status: 403},
		{Name: "no key", Method: "DELETE", Path: "/leads?test=true", Status: 401},
		{Name: "deletes A's test leads only", Key: a.Secret, Method: "DELETE", Path: "/leads?test=true", Status: 200, Check: deleted(3)},
		{Name: "nothing left", Key: a.Secret, Method: "DELETE", Path: "/leads?test=true", Status: 200, Check: deleted(0)},
		{Name: "the real lead stays", Key: a.Secret, Path: "/leads?includeTest=true", Status: 200, Check: count(1)},
		{Name: "B's test leads stay", Key: b.Secret, Path: "/leads?includeTest=true", Status: 200, Check: count(2)},
	})
	_ = real
	var ids []string
	for _, e := range events(t, env, a.Secret, "lead.deleted") {
		ids = append(ids, e.Data["id"].(string))
	}
	if strings.Join(ids, ",") != strings.Join(testIDs, ",") {
		t.Errorf("lead.deleted for %v, want %v", ids, testIDs)
	}
	if len(events(t, env, b.Secret, "lead.deleted")) != 0 || len(bTest) != 2 {
		t.Errorf("B got lead.deleted events")
	}
}
