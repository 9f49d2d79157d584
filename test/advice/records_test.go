package advice

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestAdvice_Create: a record as the client wrote it, its defaults, headers and event. Catches
// a premium stored as a float ("1234.5"), the advisor not defaulting to the credential's user
// (or set for a company key), a channel without its default, a consultedAt moved off its
// instant, a missing Location/ETag, no advice_record.created.
func TestAdvice_Create(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	agent := env.NewUser(t, co, "agent")
	contact := newContact(t, env, co.ID, "Müller", &agent.ID)
	contract := newContract(t, env, co.Secret, contact)
	key := co.UserKey(t, agent)

	r := env.Do(t, apitest.Request{Method: "POST", Path: "/advice-records", Key: key, Body: body(contact, map[string]any{
		"contractId": contract, "channel": "video", "customerWishes": "Fahrräder mitversichern", "customerNeeds": "85 m²",
		"advice": "Hausrat mit Fahrradbaustein", "reasons": "Leistung", "adviceWaived": false, "notes": "Rückruf im März",
		"products": []map[string]any{
			{"insurer": "Alpha Versicherung AG", "product": "Hausrat Premium", "contractType": "130", "premium": "1234.50", "recommended": true, "chosen": true},
			{"insurer": "Beta AG", "product": "Hausrat Basis"}}})})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var got record
	r.Decode(t, &got)
	if r.Header.Get("Location") != "/api/public/v1/advice-records/"+got.ID || r.Header.Get("ETag") != `"1"` {
		t.Errorf("Location %q ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
	}
	at, _ := time.Parse(time.RFC3339, "2026-11-30T14:30:00+01:00")
	if got.ContactID != contact || *got.ContractID != contract || *got.AdvisorID != agent.ID.String() ||
		*got.CreatorID != agent.ID.String() || !got.ConsultedAt.Equal(at) || got.Channel != "video" || got.Status != "draft" ||
		got.LockedAt != nil || got.DocumentID != nil || got.Notes != "Rückruf im März" || got.CustomerNeeds != "85 m²" {
		t.Errorf("created %+v", got)
	}
	if len(got.Products) != 2 || *got.Products[0].Premium != "1234.50" || !got.Products[0].Chosen || *got.Products[0].ContractType != "130" ||
		got.Products[1].Premium != nil || got.Products[1].ContractType != nil || got.Products[1].Recommended {
		t.Errorf("products %+v", got.Products)
	}
	if n := apitest.EventsAbout(t, env, co.Secret, "advice_record.created", got.ID); n != 1 {
		t.Errorf("%d advice_record.created, want 1", n)
	}
	// A company key: no advisor unless named, no creator; channel defaults to in_person.
	plain := create(t, env, co.Secret, body(contact, nil))
	if plain.AdvisorID != nil || plain.CreatorID != nil || plain.Channel != "in_person" || len(plain.Products) != 0 || plain.ContractID != nil {
		t.Errorf("company key's record %+v", plain)
	}
	named := create(t, env, co.Secret, body(contact, map[string]any{"advisorId": agent.ID.String(), "consultedAt": "2026-11-30T14:30"}))
	if *named.AdvisorID != agent.ID.String() || !named.ConsultedAt.Equal(at) {
		t.Errorf("named advisor, Berlin local time: %+v", named)
	}
	// The same Idempotency-Key replays the first answer instead of a second record.
	idem := apitest.Request{Method: "POST", Path: "/advice-records", Key: co.Secret, Body: body(contact, nil),
		Header: map[string]string{"Idempotency-Key": uuid.NewString()}}
	first, again := env.Do(t, idem), env.Do(t, idem)
	if first.Status != 201 || again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || string(first.Body) != string(again.Body) {
		t.Errorf("idempotent create: %d then %d %s", first.Status, again.Status, again.Header)
	}
}

// TestAdvice_CreateRefused: every error answer of POST /advice-records. Catches a validation
// that stops at the first bad field, a reference checked against the wrong company or contact
// (another company's contact, another contact's contract), a consultation in the future
// accepted, null read as absent, a record written in spite of the 422, the scope and the
// feature not enforced.
func TestAdvice_CreateRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	contact := newContact(t, env, co.ID, "Müller", nil)
	other := newContact(t, env, co.ID, "Anders", nil)
	otherContract := newContract(t, env, co.Secret, other)
	foreign := newContact(t, env, b.ID, "Fremd", nil)
	bUser := env.NewUser(t, b, "agent")
	noFeature := env.NewCompany(t, "leads")
	key := co.Secret
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	soon := time.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339) // within the clock skew allowed

	env.Run(t, []apitest.Case{
		{Name: "every bad field at once", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body: map[string]any{"contactId": "x", "contractId": "y", "consultedAt": "gestern", "channel": "fax", "subject": strings.Repeat("s", 501),
				"reasons": strings.Repeat("r", 20001), "products": []map[string]any{{"insurer": "", "product": "P", "premium": "1,50", "contractType": "999"}}},
			Check: apitest.FieldErrorSet("contactId:invalid_uuid", "contractId:invalid_uuid", "consultedAt:invalid_datetime", "channel:invalid_enum",
				"subject:too_long", "reasons:too_long", "products.0.insurer:required", "products.0.premium:invalid_decimal",
				"products.0.contractType:unknown_type")},
		{Name: "required fields", Key: key, Method: "POST", Path: "/advice-records", Body: `{}`, Status: 422,
			Check: apitest.FieldErrorSet("contactId:required", "consultedAt:required", "subject:required")},
		{Name: "premium as a number", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body: body(contact, map[string]any{"products": []map[string]any{{"insurer": "A", "product": "B", "premium": 12.5}}}),
			// The strict decoder names the member without the index (jsondoc.DecodeError).
			Check: apitest.FieldErrors("products.premium:invalid_type")},
		{Name: "51 products", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body:  body(contact, map[string]any{"products": make([]map[string]any, 51)}),
			Check: apitest.FieldErrors("products:too_long")},
		{Name: "references of another company and contact", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body:  body(foreign, map[string]any{"contractId": otherContract, "advisorId": bUser.ID.String()}),
			Check: apitest.FieldErrorSet("contactId:unknown_contact", "advisorId:unknown_user", "contractId:unknown_contract")},
		{Name: "another contact's contract", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body: body(contact, map[string]any{"contractId": otherContract}), Check: apitest.FieldErrors("contractId:unknown_contract")},
		{Name: "a consultation in the future", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body: body(contact, map[string]any{"consultedAt": future}), Check: apitest.FieldErrors("consultedAt:in_future")},
		{Name: "a clock a little fast", Key: key, Method: "POST", Path: "/advice-records", Status: 201,
			Body: body(contact, map[string]any{"consultedAt": soon})},
		{Name: "null where the schema says no", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body: body(contact, map[string]any{"channel": nil}), Check: apitest.FieldErrors("channel:not_nullable")},
		{Name: "unknown field", Key: key, Method: "POST", Path: "/advice-records", Status: 422,
			Body: body(contact, map[string]any{"status": "locked"}), Check: apitest.FieldErrors("status:unknown_field")},
		{Name: "malformed JSON", Key: key, Method: "POST", Path: "/advice-records", Body: `{"contactId":`, Status: 400, Problem: "malformed_json"},
		{Name: "no key", Method: "POST", Path: "/advice-records", Body: body(contact, nil), Status: 401},
		{Name: "read scope only", Key: co.KeyWithScopes(t, "advice:read"), Method: "POST", Path: "/advice-records",
			Body: body(contact, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "feature not licensed", Key: noFeature.Secret, Method: "POST", Path: "/advice-records",
			Body: body(newContact(t, env, noFeature.ID, "Ohne", nil), nil), Status: 403, Problem: "feature_not_licensed"},
		{Name: "feature not licensed (read)", Key: noFeature.Secret, Path: "/advice-records", Status: 403, Problem: "feature_not_licensed"},
	})
	// Only the one valid request above wrote a record.
	if n := len(list(t, env, key, "limit=200")); n != 1 {
		t.Errorf("%d records after the refused requests, want 1", n)
	}
}

// TestAdvice_GetList: reads, filters and paging. Catches a filter ignored, a cursor that skips
// or repeats, a bad parameter accepted, another company's record readable (404, never 403).
func TestAdvice_GetList(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	c1, c2 := newContact(t, env, co.ID, "Eins", nil), newContact(t, env, co.ID, "Zwei", nil)
	r1 := create(t, env, co.Secret, body(c1, nil))
	r2 := create(t, env, co.Secret, body(c2, nil))
	r3 := create(t, env, co.Secret, body(c1, nil))
	create(t, env, b.Secret, body(newContact(t, env, b.ID, "Fremd", nil), nil))
	for _, tc := range []struct{ query, want string }{
		{"", strings.Join([]string{r1.ID, r2.ID, r3.ID}, ",")},
		{"contactId=" + c1, r1.ID + "," + r3.ID},
		{"contactId=" + uuid.NewString(), ""},
		{"updatedSince=2999-01-01T00:00:00Z", ""},
		{"updatedSince=2000-01-01T00:00:00&contactId=" + c2, r2.ID},
	} {
		if got := strings.Join(ids(list(t, env, co.Secret, tc.query+"&limit=200")), ","); got != tc.want {
			t.Errorf("?%s: %s, want %s", tc.query, got, tc.want)
		}
	}
	r := env.Do(t, apitest.Request{Path: "/advice-records?limit=2", Key: co.Secret})
	var p1, p2 apitest.Page[record]
	r.Decode(t, &p1)
	r = env.Do(t, apitest.Request{Path: "/advice-records?limit=2&cursor=" + p1.Pagination.NextCursor, Key: co.Secret})
	r.Decode(t, &p2)
	if got := strings.Join(ids(append(p1.Data, p2.Data...)), ","); !p1.Pagination.HasMore || p2.Pagination.HasMore ||
		got != strings.Join([]string{r1.ID, r2.ID, r3.ID}, ",") {
		t.Errorf("pages %v then %v", ids(p1.Data), ids(p2.Data))
	}
	env.Run(t, []apitest.Case{
		{Name: "owner reads it", Key: co.Secret, Path: "/advice-records/" + r1.ID, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if r.Header.Get("ETag") != `"1"` {
				t.Errorf("ETag %q", r.Header.Get("ETag"))
			}
		}},
		{Name: "other company gets 404", Key: b.Secret, Path: "/advice-records/" + r1.ID, Status: 404, Problem: "not_found"},
		{Name: "sandbox key gets 404", Key: co.TestSecret, Path: "/advice-records/" + r1.ID, Status: 404},
		{Name: "unknown id", Key: co.Secret, Path: "/advice-records/" + uuid.NewString(), Status: 404},
		{Name: "malformed id", Key: co.Secret, Path: "/advice-records/nope", Status: 400, Problem: "invalid_id"},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "contacts:read"), Path: "/advice-records/" + r1.ID, Status: 403, Problem: "insufficient_scope"},
		{Name: "bad parameters", Key: co.Secret, Path: "/advice-records?contactId=x&updatedSince=bald&limit=0", Status: 422,
			Check: apitest.FieldErrorSet("contactId:invalid_uuid", "updatedSince:invalid_datetime", "limit:out_of_range")},
		{Name: "cursor of other filters", Key: co.Secret, Path: "/advice-records?limit=2&contactId=" + c1 + "&cursor=" + p1.Pagination.NextCursor,
			Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "other company lists only its own", Key: b.Secret, Path: "/advice-records?contactId=" + c1, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[record]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("company B lists %v", ids(p.Data))
				}
			}},
	})
}

// TestAdvice_Patch: a merge patch of the record. Catches fields the patch does not name being
// changed or cleared, products merged instead of replaced, a no-op that bumps the version or
// emits, a stale If-Match ignored, the contact moved, a change that keeps the stale protocol
// as documentId, invalid values written.
func TestAdvice_Patch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	agent := env.NewUser(t, co, "agent")
	contact := newContact(t, env, co.ID, "Müller", nil)
	other := newContact(t, env, co.ID, "Anders", nil)
	key := co.Secret
	rec := create(t, env, key, body(contact, map[string]any{"advisorId": agent.ID.String(), "customerWishes": "Schutz", "notes": "n",
		"products": []map[string]any{{"insurer": "A", "product": "P1", "premium": "10.00"}, {"insurer": "B", "product": "P2"}}}))
	doc := apitest.UploadPDF(t, env, key, contact, "Beratungsprotokoll.pdf")
	setDocument(t, env, co.ID, rec.ID, doc) // version 2
	path := "/advice-records/" + rec.ID

	r := env.Do(t, patch(key, rec.ID, map[string]any{"advice": "Hausrat Premium", "notes": nil, "advisorId": nil,
		"products": []map[string]any{{"insurer": "C", "product": "P3", "chosen": true}}}))
	if r.Status != 200 || r.Header.Get("ETag") != `"3"` {
		t.Fatalf("patch: %d %s (ETag %s)", r.Status, r.Body, r.Header.Get("ETag"))
	}
	var got record
	r.Decode(t, &got)
	if got.Advice != "Hausrat Premium" || got.Notes != "" || got.AdvisorID != nil || got.CustomerWishes != "Schutz" ||
		got.Subject != rec.Subject || !got.ConsultedAt.Equal(rec.ConsultedAt) || got.DocumentID != nil ||
		len(got.Products) != 1 || got.Products[0].Product != "P3" || !got.Products[0].Chosen {
		t.Errorf("patched %+v", got)
	}
	// The same values again: no new version, no event.
	r = env.Do(t, patch(key, rec.ID, map[string]any{"advice": "Hausrat Premium", "products": []map[string]any{{"insurer": "C", "product": "P3", "chosen": true}}}))
	if r.Status != 200 || r.Header.Get("ETag") != `"3"` {
		t.Errorf("no-op patch: %d ETag %s", r.Status, r.Header.Get("ETag"))
	}
	if n := apitest.EventsAbout(t, env, key, "advice_record.updated", rec.ID); n != 1 {
		t.Errorf("%d advice_record.updated, want 1", n)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	env.Run(t, []apitest.Case{
		{Name: "contact cannot move", Key: key, Method: "PATCH", Path: path, Body: map[string]any{"contactId": other}, Status: 422,
			Check: apitest.FieldErrors("contactId:immutable")},
		{Name: "bad values", Key: key, Method: "PATCH", Path: path, Status: 422,
			Body:  map[string]any{"subject": "", "channel": "fax", "products": []map[string]any{{"insurer": "A"}}, "contractId": "x"},
			Check: apitest.FieldErrorSet("subject:required", "channel:invalid_enum", "products.0.product:required", "contractId:invalid_uuid")},
		{Name: "subject cannot be cleared", Key: key, Method: "PATCH", Path: path, Body: `{"subject":null}`, Status: 422,
			Check: apitest.FieldErrors("subject:required")},
		{Name: "consultedAt moved into the future", Key: key, Method: "PATCH", Path: path, Body: map[string]any{"consultedAt": future},
			Status: 422, Check: apitest.FieldErrors("consultedAt:in_future")},
		{Name: "another contact's contract", Key: key, Method: "PATCH", Path: path, Status: 422,
			Body: map[string]any{"contractId": newContract(t, env, key, other)}, Check: apitest.FieldErrors("contractId:unknown_contract")},
		{Name: "server-owned field", Key: key, Method: "PATCH", Path: path, Body: `{"id":"x"}`, Status: 422,
			Check: apitest.FieldErrors("id:read_only_field")},
		{Name: "status is not patched", Key: key, Method: "PATCH", Path: path, Body: `{"status":"locked"}`, Status: 422,
			Check: apitest.FieldErrors("status:unknown_field")},
		{Name: "stale If-Match", Key: key, Method: "PATCH", Path: path, Body: `{"notes":"x"}`, Header: map[string]string{"If-Match": `"1"`},
			Status: 412, Problem: "etag_mismatch"},
		{Name: "current If-Match", Key: key, Method: "PATCH", Path: path, Body: `{"notes":"x"}`, Header: map[string]string{"If-Match": `"3"`},
			Status: 200},
		{Name: "not a JSON object", Key: key, Method: "PATCH", Path: path, Body: `[1]`, Status: 400, Problem: "malformed_json"},
		{Name: "malformed id", Key: key, Method: "PATCH", Path: "/advice-records/nope", Body: `{"notes":"x"}`, Status: 400, Problem: "invalid_id"},
		{Name: "unknown record", Key: key, Method: "PATCH", Path: "/advice-records/" + uuid.NewString(), Body: `{"notes":"x"}`, Status: 404},
		{Name: "other company gets 404", Key: b.Secret, Method: "PATCH", Path: path, Body: `{"notes":"x"}`, Status: 404},
		{Name: "read scope only", Key: co.KeyWithScopes(t, "advice:read"), Method: "PATCH", Path: path, Body: `{"notes":"x"}`,
			Status: 403, Problem: "insufficient_scope"},
	})
	if got := get(t, env, key, rec.ID); got.Notes != "x" || got.Subject != rec.Subject || got.Channel != "in_person" {
		t.Errorf("after the refused patches %+v", got)
	}
}
