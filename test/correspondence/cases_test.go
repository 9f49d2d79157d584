package correspondence

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func patch(key, id string, body any) apitest.Request {
	return apitest.Request{Method: "PATCH", Path: "/correspondence-cases/" + id, Key: key, Body: body,
		Header: map[string]string{"Content-Type": "application/merge-patch+json"}}
}

// TestCorrespondence_PatchDraft: a draft's letter is edited by merge patch. Catches a patch
// that drops what it does not name, form data replaced instead of merged (or not checked
// against the type), a no-op that bumps the version or records an event, an empty patch
// accepted, a draft's status changed by PATCH (it is sent by /send), a stale If-Match ignored.
func TestCorrespondence_PatchDraft(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	key := f.co.Secret
	c := createCases(t, env, key, f.addressChange(f.hr1))[0]
	path := "/correspondence-cases/" + c.ID

	r := env.Do(t, patch(key, c.ID, map[string]any{"subject": "Neue Anschrift Erika Mustermann", "recipientEmail": "post@alpha.example",
		"formData": map[string]any{"city": "Bremen", "country": "Deutschland", "zipCode": nil}}))
	// zipCode is required: removing it is refused, and nothing is written.
	if r.Status != 422 || !strings.Contains(string(r.Body), "formData.zipCode") {
		t.Fatalf("removing a required field: %d %s", r.Status, r.Body)
	}
	r = env.Do(t, patch(key, c.ID, map[string]any{"subject": "Neue Anschrift Erika Mustermann", "recipientEmail": "post@alpha.example",
		"formData": map[string]any{"city": "Bremen", "country": "Deutschland"}}))
	if r.Status != 200 || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("patch: %d %s (ETag %s)", r.Status, r.Body, r.Header.Get("ETag"))
	}
	var got ccase
	r.Decode(t, &got)
	if got.Subject != "Neue Anschrift Erika Mustermann" || got.Body != c.Body || *got.RecipientEmail != "post@alpha.example" ||
		got.FormData["city"] != "Bremen" || got.FormData["country"] != "Deutschland" || got.FormData["street"] != "Neue Straße 5" ||
		got.Status != "draft" {
		t.Errorf("patched %+v", got)
	}
	// The same values again: no new version, no event.
	r = env.Do(t, patch(key, c.ID, map[string]any{"subject": "Neue Anschrift Erika Mustermann", "formData": map[string]any{"city": "Bremen"}}))
	if r.Status != 200 || r.Header.Get("ETag") != `"2"` {
		t.Errorf("no-op patch: %d ETag %s", r.Status, r.Header.Get("ETag"))
	}
	if n := eventsAbout(t, env, key, "correspondence_case.updated", c.ID); n != 1 {
		t.Errorf("%d correspondence_case.updated, want 1", n)
	}
	env.Run(t, []apitest.Case{
		{Name: "body and a cleared recipient", Key: key, Method: "PATCH", Path: path, Status: 200,
			Body: map[string]any{"body": "Sehr geehrte Damen und Herren,\n\nkurz und knapp.", "recipientEmail": nil},
			Check: func(t *testing.T, r *apitest.Response) {
				var x ccase
				r.Decode(t, &x)
				if x.RecipientEmail != nil || !strings.Contains(x.Body, "kurz und knapp") || x.Subject != "Neue Anschrift Erika Mustermann" {
					t.Errorf("got %+v", x)
				}
			}},
		{Name: "empty patch", Key: key, Method: "PATCH", Path: path, Body: `{}`, Status: 422, Check: apitest.FieldErrors("subject:empty_patch")},
		{Name: "a draft's status is not patched", Key: key, Method: "PATCH", Path: path, Body: `{"status":"sent"}`, Status: 409, Problem: "case_not_sent"},
		{Name: "draft is not a status to set", Key: key, Method: "PATCH", Path: path, Body: `{"status":"draft"}`, Status: 422,
			Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "bad values", Key: key, Method: "PATCH", Path: path, Status: 422,
			Body:  map[string]any{"subject": strings.Repeat("s", 501), "recipientEmail": "not an address", "formData": map[string]any{"planet": "Mars"}},
			Check: apitest.FieldErrorSet("subject:too_long", "recipientEmail:invalid_email", "formData.planet:unknown_field")},
		{Name: "subject on two lines (header injection)", Key: key, Method: "PATCH", Path: path, Body: map[string]any{"subject": "a\r\nBcc: x@evil.example"},
			Status: 422, Check: apitest.FieldErrors("subject:invalid_character")},
		{Name: "null subject", Key: key, Method: "PATCH", Path: path, Body: `{"subject":null}`, Status: 422, Check: apitest.FieldErrors("subject:not_nullable")},
		{Name: "server-owned and unknown members", Key: key, Method: "PATCH", Path: path, Body: `{"id":"x","contactId":"y"}`, Status: 422,
			Check: apitest.FieldErrorSet("id:read_only_field")},
		{Name: "members that are not patched", Key: key, Method: "PATCH", Path: path, Body: `{"contactId":"y","transactionType":"termination"}`, Status: 422,
			Check: apitest.FieldErrors("contactId:unknown_field", "transactionType:unknown_field")},
		{Name: "stale If-Match", Key: key, Method: "PATCH", Path: path, Body: `{"body":"x"}`, Header: map[string]string{"If-Match": `"1"`},
			Status: 412, Problem: "etag_mismatch"},
		{Name: "malformed id", Key: key, Method: "PATCH", Path: "/correspondence-cases/nope", Body: `{"body":"x"}`, Status: 400, Problem: "invalid_id"},
		{Name: "unknown case", Key: key, Method: "PATCH", Path: "/correspondence-cases/" + uuid.NewString(), Body: `{"body":"x"}`, Status: 404},
		{Name: "read scope only", Key: f.co.KeyWithScopes(t, "correspondence:read"), Method: "PATCH", Path: path, Body: `{"body":"x"}`,
			Status: 403, Problem: "insufficient_scope"},
	})
}

// TestCorrespondence_SentCase: after sending only the status moves, among sent, completed and
// follow_up; the letter, the deletion and a second send are refused with 409. Catches edits
// of a letter that went out and a sent case deleted.
func TestCorrespondence_SentCase(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	key := f.co.Secret
	c := createCases(t, env, key, f.addressChange(f.hr1))[0]
	markSent(t, env, f.co.ID, c.ID, "sent")
	path := "/correspondence-cases/" + c.ID
	status := func(want string) func(*testing.T, *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var x ccase
			r.Decode(t, &x)
			if x.Status != want {
				t.Errorf("status %s, want %s", x.Status, want)
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "subject of a sent case", Key: key, Method: "PATCH", Path: path, Body: `{"subject":"x"}`, Status: 409, Problem: "case_not_draft"},
		{Name: "form data of a sent case", Key: key, Method: "PATCH", Path: path, Body: `{"formData":{"city":"Kiel"}}`, Status: 409, Problem: "case_not_draft"},
		{Name: "status with an edit", Key: key, Method: "PATCH", Path: path, Body: `{"status":"completed","body":"x"}`, Status: 409, Problem: "case_not_draft"},
		{Name: "to follow_up", Key: key, Method: "PATCH", Path: path, Body: `{"status":"follow_up"}`, Status: 200, Check: status("follow_up")},
		{Name: "to completed", Key: key, Method: "PATCH", Path: path, Body: `{"status":"completed"}`, Status: 200, Check: status("completed")},
		{Name: "back to sent", Key: key, Method: "PATCH", Path: path, Body: `{"status":"sent"}`, Status: 200, Check: status("sent")},
		{Name: "not back to draft", Key: key, Method: "PATCH", Path: path, Body: `{"status":"draft"}`, Status: 422, Check: apitest.FieldErrors("status:invalid_enum")},
		{Name: "delete a sent case", Key: key, Method: "DELETE", Path: path, Status: 409, Problem: "case_not_draft"},
		{Name: "send again", Key: key, Method: "POST", Path: path + "/send", Body: map[string]any{"mailboxId": uuid.NewString()},
			Status: 409, Problem: "case_not_draft"},
	})
	if n := eventsAbout(t, env, key, "correspondence_case.updated", c.ID); n != 3 {
		t.Errorf("%d correspondence_case.updated, want 3", n)
	}
	if got := get(t, env, key, c.ID); got.Status != "sent" || got.Body != c.Body {
		t.Errorf("after the refused edits %+v", got)
	}
}

// TestCorrespondence_Delete: a draft is deleted with its event. Catches a delete without the
// event and a deleted case still readable.
func TestCorrespondence_Delete(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	c := createCases(t, env, f.co.Secret, f.addressChange(f.hr1))[0]
	path := "/correspondence-cases/" + c.ID
	env.Run(t, []apitest.Case{
		{Name: "stale If-Match", Key: f.co.Secret, Method: "DELETE", Path: path, Header: map[string]string{"If-Match": `"7"`}, Status: 412},
		{Name: "read scope only", Key: f.co.KeyWithScopes(t, "correspondence:read"), Method: "DELETE", Path: path, Status: 403},
		{Name: "draft", Key: f.co.Secret, Method: "DELETE", Path: path, Status: 204},
		{Name: "gone", Key: f.co.Secret, Method: "GET", Path: path, Status: 404, Problem: "not_found"},
		{Name: "again", Key: f.co.Secret, Method: "DELETE", Path: path, Status: 404},
	})
	if n := eventsAbout(t, env, f.co.Secret, "correspondence_case.deleted", c.ID); n != 1 {
		t.Errorf("%d correspondence_case.deleted, want 1", n)
	}
}

// TestCorrespondence_List: the filters. Catches a filter ignored (contractId matches an element
// of the case's contract list), a bad parameter accepted, pages that skip or repeat.
func TestCorrespondence_List(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	key := f.co.Secret
	first := createCases(t, env, key, f.addressChange(f.hr1, f.kv1)) // alpha [hr1], beta [kv1]
	second := createCases(t, env, key, f.addressChange(f.hr2))       // alpha [hr2]
	other := newContact(t, env, f.co.ID, "Zweite", nil)
	hr3 := newContract(t, env, key, other, f.alpha.ID, "HR-Z-"+f.alpha.VUNumber, "130")
	third := createCases(t, env, key, map[string]any{"contactId": other, "contractIds": []string{hr3}, "transactionType": "termination"})
	markSent(t, env, f.co.ID, second[0].ID, "follow_up")
	all := append(append(append([]ccase{}, first...), second...), third...)
	want := func(cs ...ccase) []string { return ids(cs) }
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", want(all...)},
		{"contactId=" + f.contact, want(first[0], first[1], second[0])},
		{"contractId=" + f.hr2, want(second[0])},
		{"contractId=" + f.kv1, want(first[1])},
		{"contractId=" + f.kfz, want()},
		{"status=follow_up,sent", want(second[0])},
		{"status=draft&contactId=" + other, want(third[0])},
		{"updatedSince=2999-01-01T00:00:00Z", want()},
	} {
		if got := ids(list(t, env, key, tc.query+"&limit=200")); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("?%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	// Paging: two pages of two, oldest first, nothing skipped or repeated.
	r := env.Do(t, apitest.Request{Path: "/correspondence-cases?limit=2", Key: key})
	var p1 apitest.Page[ccase]
	r.Decode(t, &p1)
	r = env.Do(t, apitest.Request{Path: "/correspondence-cases?limit=2&cursor=" + p1.Pagination.NextCursor, Key: key})
	var p2 apitest.Page[ccase]
	r.Decode(t, &p2)
	if got := ids(append(p1.Data, p2.Data...)); !p1.Pagination.HasMore || p2.Pagination.HasMore || strings.Join(got, ",") != strings.Join(want(all...), ",") {
		t.Errorf("pages %v then %v", ids(p1.Data), ids(p2.Data))
	}
	env.Run(t, []apitest.Case{
		{Name: "bad parameters", Key: key, Path: "/correspondence-cases?contactId=x&contractId=y&status=lost&updatedSince=soon", Status: 422,
			Check: apitest.FieldErrorSet("contactId:invalid_uuid", "contractId:invalid_uuid", "status:invalid_enum", "updatedSince:invalid_datetime")},
		{Name: "cursor of other filters", Key: key, Path: "/correspondence-cases?limit=2&status=draft&cursor=" + p1.Pagination.NextCursor,
			Status: 422, Check: apitest.FieldErrors("cursor:cursor_mismatch")},
		{Name: "no key", Path: "/correspondence-cases", Status: 401},
		{Name: "scope missing", Key: f.co.KeyWithScopes(t, "contracts:read"), Path: "/correspondence-cases", Status: 403, Problem: "insufficient_scope"},
	})
}

// TestCorrespondence_OtherCompany: another company's case is 404 on every operation and never
// listed; its events stay in its company. Catches a lookup outside the tenant.
func TestCorrespondence_OtherCompany(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	c := createCases(t, env, f.co.Secret, f.addressChange(f.hr1))[0]
	b := env.NewCompany(t)
	path := "/correspondence-cases/" + c.ID
	env.Run(t, []apitest.Case{
		{Name: "get", Key: b.Secret, Path: path, Status: 404, Problem: "not_found"},
		{Name: "patch", Key: b.Secret, Method: "PATCH", Path: path, Body: `{"body":"x"}`, Status: 404},
		{Name: "delete", Key: b.Secret, Method: "DELETE", Path: path, Status: 404},
		{Name: "send", Key: b.Secret, Method: "POST", Path: path + "/send", Body: map[string]any{"mailboxId": uuid.NewString(),
			"recipientEmail": "x@example.com"}, Status: 404},
		{Name: "sandbox twin", Key: f.co.TestSecret, Path: path, Status: 404},
		{Name: "B's contact is unknown to B's own create with A's contracts", Key: b.Secret, Method: "POST", Path: "/correspondence-cases",
			Body: f.addressChange(f.hr1), Status: 422, Check: apitest.FieldErrors("contactId:unknown_contact")},
	})
	if got := list(t, env, b.Secret, ""); len(got) != 0 {
		t.Errorf("B lists %d cases", len(got))
	}
	if n := eventsAbout(t, env, b.Secret, "correspondence_case.created", c.ID); n != 0 {
		t.Errorf("B sees %d of A's events", n)
	}
	if got := get(t, env, f.co.Secret, c.ID); got.Body != c.Body {
		t.Errorf("A's case changed: %+v", got)
	}
}

// TestCorrespondence_Visibility: a case is as visible as its contact. An agent that may not
// see the contact gets 404 on every operation, does not list the case, cannot create one for
// the contact and receives none of its events; the owner does all of it. Catches a case read
// or written past the contact's visibility.
func TestCorrespondence_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	anna, ben := env.NewUser(t, f.co, "agent"), env.NewUser(t, f.co, "agent")
	annas := newContact(t, env, f.co.ID, "Annas", &anna.ID)
	contract := newContract(t, env, f.co.Secret, annas, f.alpha.ID, "HR-A-"+f.alpha.VUNumber, "130")
	annaKey := f.co.UserKey(t, anna, "correspondence:write", "events:read")
	benKey := f.co.UserKey(t, ben, "correspondence:write", "events:read")
	body := map[string]any{"contactId": annas, "contractIds": []string{contract}, "transactionType": "document_request",
		"formData": map[string]any{"policyCopy": true}}
	c := createCases(t, env, annaKey, body)[0]
	if !strings.Contains(c.Body, "Kopie des Versicherungsscheins") {
		t.Errorf("body %s", c.Body)
	}
	path := "/correspondence-cases/" + c.ID
	env.Run(t, []apitest.Case{
		{Name: "ben cannot read", Key: benKey, Path: path, Status: 404},
		{Name: "ben cannot patch", Key: benKey, Method: "PATCH", Path: path, Body: `{"body":"x"}`, Status: 404},
		{Name: "ben cannot delete", Key: benKey, Method: "DELETE", Path: path, Status: 404},
		{Name: "ben cannot send", Key: benKey, Method: "POST", Path: path + "/send", Body: map[string]any{"mailboxId": uuid.NewString()}, Status: 404},
		{Name: "ben cannot write to anna's contact", Key: benKey, Method: "POST", Path: "/correspondence-cases", Body: body,
			Status: 422, Check: apitest.FieldErrors("contactId:unknown_contact")},
		{Name: "ben cannot name anna's contract for a contact he sees", Key: benKey, Method: "POST", Path: "/correspondence-cases",
			Body: map[string]any{"contactId": newContact(t, env, f.co.ID, "Bens", &ben.ID), "contractIds": []string{contract},
				"transactionType": "termination"}, Status: 422, Check: apitest.FieldErrors("contractIds.0:unknown_contract")},
		{Name: "anna reads", Key: annaKey, Path: path, Status: 200},
		{Name: "anna patches", Key: annaKey, Method: "PATCH", Path: path, Body: `{"body":"Bitte Kopie senden."}`, Status: 200},
	})
	if got := list(t, env, benKey, "limit=200"); len(got) != 0 {
		t.Errorf("ben lists %d cases", len(got))
	}
	if got := list(t, env, annaKey, "limit=200"); len(got) != 1 || got[0].ID != c.ID {
		t.Errorf("anna lists %v", ids(got))
	}
	if n := eventsAbout(t, env, benKey, "correspondence_case.created", c.ID) + eventsAbout(t, env, benKey, "correspondence_case.updated", c.ID); n != 0 {
		t.Errorf("ben receives %d events of anna's case", n)
	}
	if n := eventsAbout(t, env, annaKey, "correspondence_case.created", c.ID) + eventsAbout(t, env, annaKey, "correspondence_case.updated", c.ID); n != 2 {
		t.Errorf("anna receives %d events of her case, want 2", n)
	}
	env.Run(t, []apitest.Case{{Name: "anna deletes", Key: annaKey, Method: "DELETE", Path: path, Status: 204}})
	if n := eventsAbout(t, env, benKey, "correspondence_case.deleted", c.ID); n != 0 {
		t.Errorf("ben receives the deletion")
	}
}

// TestCorrespondence_SendRefused: the checks of POST …/send before anything is sent. Catches
// a send without a mailbox, with more than five attachments, with documents of another
// contact, or without any recipient (an insurer without a correspondence address), and a
// refused send that changes the case.
func TestCorrespondence_SendRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	cases := createCases(t, env, f.co.Secret, f.addressChange(f.hr1, f.kv1))
	routed, unrouted := cases[0], cases[1] // beta has no correspondence address
	send := func(id string) string { return "/correspondence-cases/" + id + "/send" }
	six := []string{}
	for range 6 {
		six = append(six, uuid.NewString())
	}
	env.Run(t, []apitest.Case{
		{Name: "mailbox missing", Key: f.co.Secret, Method: "POST", Path: send(routed.ID), Body: `{}`, Status: 422,
			Check: apitest.FieldErrors("mailboxId:required")},
		{Name: "bad ids and address, six attachments", Key: f.co.Secret, Method: "POST", Path: send(routed.ID), Status: 422,
			Body:  map[string]any{"mailboxId": "x", "recipientEmail": "a@b@c", "attachmentDocumentIds": six},
			Check: apitest.FieldErrorSet("mailboxId:invalid_uuid", "recipientEmail:invalid_email", "attachmentDocumentIds:too_long")},
		{Name: "recipient with a line break", Key: f.co.Secret, Method: "POST", Path: send(routed.ID), Status: 422,
			Body:  map[string]any{"mailboxId": uuid.NewString(), "recipientEmail": "a@example.com\r\nBcc: x@evil.example"},
			Check: apitest.FieldErrors("recipientEmail:invalid_email")},
		{Name: "no recipient: routed address missing and none given", Key: f.co.Secret, Method: "POST", Path: send(unrouted.ID),
			Body: map[string]any{"mailboxId": uuid.NewString()}, Status: 422, Check: apitest.FieldErrors("recipientEmail:required")},
		{Name: "documents that are not the contact's", Key: f.co.Secret, Method: "POST", Path: send(routed.ID), Status: 422,
			Body:  map[string]any{"mailboxId": uuid.NewString(), "attachmentDocumentIds": []string{uuid.NewString()}},
			Check: apitest.FieldErrors("attachmentDocumentIds.0:unknown_document")},
		{Name: "a mailbox the caller cannot send from (the e-mail area's answer, passed through)", Key: f.co.Secret, Method: "POST",
			Path: send(routed.ID), Body: map[string]any{"mailboxId": uuid.NewString()}, Status: 422,
			Check: apitest.FieldErrors("mailboxId:unknown_mailbox")},
		{Name: "malformed case id", Key: f.co.Secret, Method: "POST", Path: send("nope"), Body: map[string]any{"mailboxId": uuid.NewString()},
			Status: 400, Problem: "invalid_id"},
		{Name: "unknown case", Key: f.co.Secret, Method: "POST", Path: send(uuid.NewString()), Body: map[string]any{"mailboxId": uuid.NewString()},
			Status: 404},
		{Name: "read scope only", Key: f.co.KeyWithScopes(t, "correspondence:read"), Method: "POST", Path: send(routed.ID),
			Body: map[string]any{"mailboxId": uuid.NewString()}, Status: 403, Problem: "insufficient_scope"},
	})
	for _, c := range cases {
		if got := get(t, env, f.co.Secret, c.ID); got.Status != "draft" || got.EmailID != nil {
			t.Errorf("refused sends changed %+v", got)
		}
	}
}

// TestCorrespondence_InsurerEmail: the operator's routing address is checked and clearable.
// Catches an invalid address stored (it would become a case's recipient) and an unknown VU
// number silently ignored.
func TestCorrespondence_InsurerEmail(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	ins := newInsurer(t, env, a.Secret, "Gamma AG")
	ctx := context.Background()
	if _, err := env.Ops.SetInsurerEmail(ctx, ins.VUNumber, "kein-postfach"); err == nil {
		t.Error("an invalid address was accepted")
	}
	if _, err := env.Ops.SetInsurerEmail(ctx, "99998", "post@gamma.example"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown VU number: %v", err)
	}
	if got, err := env.Ops.SetInsurerEmail(ctx, ins.VUNumber, " post@gamma.example "); err != nil || got.CorrespondenceEmail != "post@gamma.example" {
		t.Errorf("set: %+v %v", got, err)
	}
	if got, err := env.Ops.SetInsurerEmail(ctx, ins.VUNumber, ""); err != nil || got.CorrespondenceEmail != "" {
		t.Errorf("clear: %+v %v", got, err)
	}
	contact := newContact(t, env, a.ID, "Gamma", nil)
	c := createCases(t, env, a.Secret, map[string]any{"contactId": contact, "transactionType": "termination",
		"contractIds": []string{newContract(t, env, a.Secret, contact, ins.ID, "G-1", "130")}})
	if len(c) != 1 || c[0].RecipientEmail != nil {
		t.Errorf("a cleared address still routes: %+v", c)
	}
}
