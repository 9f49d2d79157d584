package contacts

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestContacts_External(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	b := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	path := "/external/ams/contacts/K-1"
	env.Run(t, []apitest.Case{
		{Name: "unknown reference", Key: a.Secret, Path: path, Status: 404},
		{Name: "created", Key: a.UserKey(t, agentA), Method: "PUT", Path: path, Status: 201,
			Body: map[string]any{"type": "private", "firstName": "Kai", "lastName": "Ext", "phones": []map[string]any{{"number": "0170 1111111"}},
				"address": map[string]any{"city": "Köln", "street": "Ring"}},
			Check: func(t *testing.T, r *apitest.Response) {
				c := decode(t, r)
				if loc := r.Header.Get("Location"); loc != "/api/public/v1/contacts/"+c.ID || r.Header.Get("ETag") != `"1"` {
					t.Errorf("Location %q, ETag %q", loc, r.Header.Get("ETag"))
				}
			}},
		{Name: "read by reference", Key: a.Secret, Path: path, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if c := decode(t, r); c.FirstName != "Kai" || len(c.Phones) != 1 {
				t.Errorf("got %s", r.Body)
			}
		}},
		{Name: "updated: merges, phones replace", Key: a.UserKey(t, agentA), Method: "PUT", Path: path, Status: 200,
			Body: map[string]any{"type": "private", "address": map[string]any{"city": "Bonn"}, "phones": []map[string]any{{"number": "030 2222222"}}},
			Check: func(t *testing.T, r *apitest.Response) {
				c := decode(t, r)
				if c.FirstName != "Kai" || c.Address["city"] != "Bonn" || c.Address["street"] != "Ring" || len(c.Phones) != 1 || c.Phones[0].Number != "030 2222222" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "an update may leave type out", Key: a.Secret, Method: "PUT", Path: path, Status: 200,
			Body: map[string]any{"tags": []string{"sync"}}, Check: func(t *testing.T, r *apitest.Response) {
				if c := decode(t, r); c.Type != "private" || c.FirstName != "Kai" || len(c.Tags) != 1 {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "but may not change it", Key: a.Secret, Method: "PUT", Path: path, Status: 422,
			Body: map[string]any{"type": "business", "business": map[string]any{"companyName": "K GmbH"}}, Check: apitest.FieldErrorSet("type:immutable")},
		{Name: "a create needs type", Key: a.Secret, Method: "PUT", Path: "/external/ams/contacts/K-new", Status: 422,
			Body: map[string]any{"firstName": "A", "lastName": "B"}, Check: apitest.FieldErrorSet("type:invalid_enum")},
		{Name: "fill_empty_only", Key: a.Secret, Method: "PUT", Path: path, Status: 200,
			Body: map[string]any{"type": "private", "writeMode": "fill_empty_only", "firstName": "Other", "email": "kai@example.com"},
			Check: func(t *testing.T, r *apitest.Response) {
				if c := decode(t, r); c.FirstName != "Kai" || c.Email == nil || *c.Email != "kai@example.com" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "another agent cannot take it over: 409, the reference is taken (issue 20 item 8)", Key: a.UserKey(t, agentB), Method: "PUT",
			Path: path, Status: 409, Problem: "external_reference_taken", Body: map[string]any{"type": "private", "firstName": "Take", "lastName": "Over"}},
		{Name: "nor read it", Key: a.UserKey(t, agentB), Path: path, Status: 404},
		{Name: "other company: its own reference space", Key: b.Secret, Path: path, Status: 404},
		{Name: "invalid body", Key: a.Secret, Method: "PUT", Path: "/external/ams/contacts/K-2", Status: 422,
			Body: map[string]any{"type": "private", "firstName": "A"}, Check: apitest.FieldErrorSet("lastName:required")},
		{Name: "invalid phones on update", Key: a.Secret, Method: "PUT", Path: path, Status: 422,
			Body: map[string]any{"type": "private", "phones": []map[string]any{{"number": "x"}}}, Check: apitest.FieldErrorSet("phones.0.number:invalid_phone")},
	})
}

func TestContacts_Match(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	annaC, _ := create(t, env, a.Secret, anna())
	gmbh, _ := create(t, env, a.Secret, map[string]any{"type": "business", "business": map[string]any{"companyName": "Müller Gesellschaft mit beschränkter Haftung"}})
	type result struct {
		Data []struct {
			Contact   contact  `json:"contact"`
			MatchedBy []string `json:"matchedBy"`
			Score     float64  `json:"score"`
		}
	}
	one := func(id string, by ...string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var got result
			r.Decode(t, &got)
			if len(got.Data) == 0 || got.Data[0].Contact.ID != id || len(got.Data[0].MatchedBy) != len(by) || got.Data[0].Score <= 0 || got.Data[0].Score > 1 {
				t.Fatalf("got %s", r.Body)
			}
			for i, b := range by {
				if got.Data[0].MatchedBy[i] != b {
					t.Errorf("matchedBy %v, want %v", got.Data[0].MatchedBy, by)
				}
			}
		}
	}
	hidden := env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contacts/M-hidden", Key: a.Secret,
		Body: map[string]any{"type": "private", "firstName": "Hanna", "lastName": "Hidden"}})
	if hidden.Status != 201 {
		t.Fatalf("seed: %d %s", hidden.Status, hidden.Body)
	}
	if r := env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contacts/M-1", Key: a.Secret,
		Body: map[string]any{"type": "private", "firstName": "Anna", "lastName": "Müller", "email": "anna.mueller@example.com"}}); r.Status != 200 && r.Status != 201 {
		t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
	byRef := decode(t, env.Do(t, apitest.Request{Path: "/external/ams/contacts/M-1", Key: a.Secret}))
	empty := func(t *testing.T, r *apitest.Response) {
		var got result
		r.Decode(t, &got)
		if len(got.Data) != 0 {
			t.Errorf("got %s", r.Body)
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "external reference (ours: the spec's matchedBy names it)", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"externalReference": map[string]string{"source": "ams", "externalId": "M-1"}},
			Check: func(t *testing.T, r *apitest.Response) {
				one(byRef.ID, "external_reference")(t, r)
				var got result
				r.Decode(t, &got)
				if len(got.Data) != 1 || got.Data[0].Score != 1 {
					t.Errorf("got %s, want one candidate with score 1", r.Body)
				}
			}},
		{Name: "best first: email (0.9) before company name (0.6)", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"email": "nobody@example.com", "phone": "+49 170 1234567", "companyName": "Müller GmbH"},
			Check: func(t *testing.T, r *apitest.Response) {
				var got result
				r.Decode(t, &got)
				if len(got.Data) != 2 || got.Data[0].Contact.ID != annaC.ID || got.Data[1].Contact.ID != gmbh.ID ||
					got.Data[0].Score <= got.Data[1].Score {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "an unknown external reference matches nothing", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"externalReference": map[string]string{"source": "ams", "externalId": "nope"}}, Check: empty},
		{Name: "an agent does not match an invisible contact by its reference", Key: a.UserKey(t, agent), Method: "POST", Path: "/contacts/match",
			Status: 200, Body: map[string]any{"externalReference": map[string]string{"source": "ams", "externalId": "M-hidden"}}, Check: empty},
		{Name: "a bad external reference", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 422,
			Body: map[string]any{"externalReference": map[string]string{"source": "", "externalId": "x"}}, Check: apitest.FieldErrorSet("externalReference.source:invalid_length")},
		{Name: "name and birth date, umlauts and case", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"firstName": "anna", "lastName": "MUELLER", "dateOfBirth": "1985-04-12"}, Check: one(annaC.ID, "name_and_birthdate")},
		{Name: "email and phone score higher together", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"email": "anna.mueller@EXAMPLE.com", "phone": "+49 170 1234567"}, Check: one(annaC.ID, "email", "phone")},
		{Name: "GmbH spelled out", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"companyName": "mueller gmbh"}, Check: one(gmbh.ID, "company_name")},
		{Name: "no match", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"email": "nobody@example.com"}, Check: func(t *testing.T, r *apitest.Response) {
				var got result
				r.Decode(t, &got)
				if len(got.Data) != 0 {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "an agent does not match what it may not see", Key: a.UserKey(t, agent), Method: "POST", Path: "/contacts/match", Status: 200,
			Body: map[string]any{"email": "anna.mueller@example.com"}, Check: func(t *testing.T, r *apitest.Response) {
				var got result
				r.Decode(t, &got)
				if len(got.Data) != 0 {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "empty body", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 422, Body: `{}`},
		{Name: "bad values", Key: a.Secret, Method: "POST", Path: "/contacts/match", Status: 422,
			Body:  map[string]any{"email": "x", "dateOfBirth": "12.04.1985", "phone": "1"},
			Check: apitest.FieldErrorSet("email:invalid_email", "dateOfBirth:invalid_date", "phone:invalid_phone")},
	})
}

func TestContacts_Bulk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	ref := func(id string) map[string]string { return map[string]string{"source": "ams", "externalId": id} }
	if r := env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contacts/B-hidden", Key: a.UserKey(t, agentA),
		Body: map[string]any{"type": "private", "firstName": "H", "lastName": "Idden"}}); r.Status != 201 {
		t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
	type result struct {
		Data []struct {
			Index  int
			Status string
			ID     *string
			Error  *struct {
				Status int
				Code   string
				Errors []struct{ Field, Code string }
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "items are independent and in order", Key: a.UserKey(t, agentB), Method: "POST", Path: "/contacts/bulk", Status: 200,
			Body: map[string]any{"items": []map[string]any{
				{"externalReference": ref("B-1"), "type": "private", "firstName": "Eins", "lastName": "X"},
				{"externalReference": ref("B-2"), "type": "private", "firstName": "Zwei"},
				{"externalReference": ref("B-1"), "type": "private", "lastName": "Y"},
				{"externalReference": ref("B-hidden"), "type": "private", "firstName": "Take", "lastName": "Over"},
				{"type": "private", "firstName": "No", "lastName": "Ref"},
			}},
			Check: func(t *testing.T, r *apitest.Response) {
				var got result
				r.Decode(t, &got)
				want := []string{"created", "failed", "updated", "failed", "failed"}
				for i, d := range got.Data {
					if d.Index != i || d.Status != want[i] {
						t.Errorf("item %d: %+v, want %s", i, d, want[i])
					}
				}
				if len(got.Data) != 5 || got.Data[1].Error.Status != 422 || got.Data[3].Error.Status != 409 || got.Data[4].Error.Errors[0].Field != "externalReference" {
					t.Errorf("got %s", r.Body)
				}
				if *got.Data[0].ID != *got.Data[2].ID {
					t.Errorf("B-1 twice: %s", r.Body)
				}
			}},
		{Name: "the failed item left nothing", Key: a.Secret, Path: "/external/ams/contacts/B-2", Status: 404},
		{Name: "the update landed", Key: a.Secret, Path: "/external/ams/contacts/B-1", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if c := decode(t, r); c.FirstName != "Eins" || c.LastName != "Y" {
				t.Errorf("got %s", r.Body)
			}
		}},
		{Name: "the hidden contact is untouched", Key: a.Secret, Path: "/external/ams/contacts/B-hidden", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if c := decode(t, r); c.FirstName != "H" {
				t.Errorf("got %s", r.Body)
			}
		}},
		{Name: "no items", Key: a.Secret, Method: "POST", Path: "/contacts/bulk", Status: 422, Body: `{"items":[]}`, Check: apitest.FieldErrorSet("items:invalid_length")},
		{Name: "read scope", Key: a.KeyWithScopes(t, "contacts:read"), Method: "POST", Path: "/contacts/bulk", Status: 403, Body: `{"items":[{}]}`},
	})
}

// TestContacts_BulkIdempotent: POST /contacts/bulk is Idem: the same Idempotency-Key within 24
// hours returns the original response (marked Idempotent-Replayed) and writes nothing again.
func TestContacts_BulkIdempotent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	h := map[string]string{"Idempotency-Key": uuid.NewString()}
	body := map[string]any{"items": []map[string]any{
		{"externalReference": map[string]string{"source": "ams", "externalId": "I-1"}, "type": "private", "firstName": "Ida", "lastName": "Em"},
	}}
	var bodies []string
	for i := range 2 {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/bulk", Key: a.Secret, Header: h, Body: body})
		if r.Status != 200 {
			t.Fatalf("status %d %s", r.Status, r.Body)
		}
		if got, want := r.Header.Get("Idempotent-Replayed"), map[int]string{0: "", 1: "true"}[i]; got != want {
			t.Errorf("request %d: Idempotent-Replayed %q, want %q", i, got, want)
		}
		bodies = append(bodies, string(r.Body))
	}
	if bodies[0] != bodies[1] {
		t.Errorf("the replay differs:\n%s\n%s", bodies[0], bodies[1])
	}
	r := env.Do(t, apitest.Request{Path: "/external/ams/contacts/I-1", Key: a.Secret})
	if r.Status != 200 || r.Header.Get("ETag") != `"1"` {
		t.Errorf("the contact after a replay: %d, ETag %q (want version 1: written once)", r.Status, r.Header.Get("ETag"))
	}
}

// TestContacts_BulkLimit: 100 items are the most one request takes (spec: Limits, 1-100).
func TestContacts_BulkLimit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	items := make([]map[string]any, 100)
	for i := range items {
		items[i] = map[string]any{"externalReference": map[string]string{"source": "ams", "externalId": fmt.Sprintf("L-%d", i)},
			"type": "private", "firstName": "L", "lastName": fmt.Sprint(i)}
	}
	env.Run(t, []apitest.Case{
		{Name: "100 items", Key: a.Secret, Method: "POST", Path: "/contacts/bulk", Body: map[string]any{"items": items}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var got struct {
					Data []struct {
						Index  int
						Status string
					}
				}
				r.Decode(t, &got)
				if len(got.Data) != 100 || got.Data[99].Index != 99 || got.Data[99].Status != "created" {
					t.Errorf("got %d results", len(got.Data))
				}
			}},
		{Name: "101 items", Key: a.Secret, Method: "POST", Path: "/contacts/bulk", Body: map[string]any{"items": append(items, items[0])}, Status: 422,
			Check: apitest.FieldErrorSet("items:invalid_length")},
	})
}
