package leads

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// convertedContact is the contact of a conversion's answer as JSON values.
func convertedContact(t *testing.T, r *apitest.Response) map[string]any {
	t.Helper()
	var res struct{ Contact map[string]any }
	r.Decode(t, &res)
	return res.Contact
}

// has fails unless got[path...] equals want (compared as JSON).
func has(t *testing.T, got map[string]any, want any, path ...string) {
	t.Helper()
	var v any = got
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	w, _ := json.Marshal(want)
	var wv any
	_ = json.Unmarshal(w, &wv)
	if !reflect.DeepEqual(v, wv) {
		t.Errorf("%v = %#v, want %#v", path, v, wv)
	}
}

// TestLeads_ConvertOverrides: overrides take the whole ContactPatch shape (groups, tags,
// labels, customFields, ownerId...) with merge-patch semantics, checked by the contact rules
// with errors named overrides.<path>; into an existing contact they apply as a PATCH.
func TestLeads_ConvertOverrides(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/custom-fields", Key: a.Secret,
		Body: map[string]any{"key": "hobby", "label": "Hobby", "dataType": "string"}}); r.Status != 201 {
		t.Fatalf("custom field: %d %s", r.Status, r.Body)
	}
	path := func(id string) string { return "/leads/" + id + "/convert" }
	newLead := func() string {
		return apitest.Create[lead](t, env, a.Secret, "/leads", map[string]any{"firstName": "Nina", "lastName": "Neu",
			"email": "nina@example.com", "phone": "0170 2223334"}).ID
	}
	full := map[string]any{"contactType": "private", "overrides": map[string]any{
		"email": nil, "ownerId": agent.ID.String(), "tags": []string{"vip"}, "labels": []string{"green"},
		"customFields": map[string]any{"hobby": "Segeln"},
		"address":      map[string]any{"street": "Hauptstr.", "houseNumber": "1", "zipCode": "10115", "city": "Berlin"},
		"personal":     map[string]any{"dateOfBirth": "1980-02-29", "maritalStatus": "verheiratet", "numberOfChildren": 2},
		"bank":         map[string]any{"iban": "DE89 3704 0044 0532 0130 00"}}}
	lead := newLead()
	env.Run(t, []apitest.Case{
		{Name: "a dry run checks the overrides too", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body:  map[string]any{"contactType": "private", "dryRun": true, "overrides": map[string]any{"bank": map[string]any{"iban": "DE00"}}},
			Check: apitest.FieldErrors("overrides.bank.iban:invalid_iban")},
		{Name: "a new contact with every kind of field", Key: a.Secret, Method: "POST", Path: path(lead), Body: full, Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				c := convertedContact(t, r)
				has(t, c, nil, "email") // null cleared the lead's e-mail
				has(t, c, agent.ID.String(), "ownerId")
				has(t, c, []string{"vip"}, "tags")
				has(t, c, []string{"green"}, "labels")
				has(t, c, map[string]any{"hobby": "Segeln"}, "customFields")
				has(t, c, "Berlin", "address", "city")
				has(t, c, 2, "personal", "numberOfChildren")
				has(t, c, "DE89370400440532013000", "bank", "iban") // normalised, shown with contacts.sensitive:read
				has(t, c, "Nina", "firstName")
				if ph, _ := c["phones"].([]any); len(ph) != 1 {
					t.Errorf("phones %v: the lead's number", c["phones"])
				}
			}},
	})
	// Without contacts.sensitive:read the sensitive groups are absent from the answer, as on GET.
	noSensitive := a.KeyWithScopes(t, "leads:write", "contacts:write", "contacts:read")
	env.Run(t, []apitest.Case{{Name: "no sensitive scope: no bank group", Key: noSensitive, Method: "POST", Path: path(newLead()),
		Body: full, Status: 201, Check: func(t *testing.T, r *apitest.Response) {
			c := convertedContact(t, r)
			if _, ok := c["bank"]; ok {
				t.Errorf("bank returned without contacts.sensitive:read: %v", c["bank"])
			}
			has(t, c, "Berlin", "address", "city")
		}}})

	// Every error case names its override, by the rules of PATCH /contacts.
	bad := func(overrides any) map[string]any {
		return map[string]any{"contactType": "private", "overrides": overrides}
	}
	lead = newLead()
	env.Run(t, []apitest.Case{
		{Name: "bad values of groups", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad(map[string]any{"bank": map[string]any{"iban": "DE89370400440532013001", "bic": "x"},
				"personal": map[string]any{"dateOfBirth": "2999-01-01"}, "address": map[string]any{"planet": "Mars"}}),
			Check: apitest.FieldErrorSet("overrides.bank.iban:invalid_iban", "overrides.bank.bic:invalid_bic",
				"overrides.personal.dateOfBirth:date_in_future", "overrides.address.planet:unknown_field")},
		{Name: "a German postcode", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad(map[string]any{"address": map[string]any{"zipCode": "1234"}}), Check: apitest.FieldErrors("overrides.address.zipCode:invalid_zip_code")},
		{Name: "tags and labels", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body:  bad(map[string]any{"tags": []string{" "}, "labels": []string{"mauve"}}),
			Check: apitest.FieldErrors("overrides.tags.0:invalid_length", "overrides.labels.0:invalid_enum")},
		{Name: "a group of the other type", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: map[string]any{"contactType": "business", "overrides": map[string]any{"business": map[string]any{"companyName": "N GmbH"},
				"health": map[string]any{"smoker": true}}}, Check: apitest.FieldErrors("overrides.health:group_not_applicable")},
		{Name: "phones are not patchable", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad(map[string]any{"phones": []map[string]any{{"number": "0170 1234567"}}}), Check: apitest.FieldErrors("overrides.phones:not_patchable")},
		{Name: "server-owned fields and the type", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body:  bad(map[string]any{"id": "x", "createdAt": "2020-01-01T00:00:00Z", "type": "business"}),
			Check: apitest.FieldErrorSet("overrides.id:read_only_field", "overrides.createdAt:read_only_field", "overrides.type:immutable")},
		{Name: "a wrong JSON type", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad(map[string]any{"tags": "vip"}), Check: apitest.FieldErrors("overrides.tags:invalid_type")},
		{Name: "overrides must be an object", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad("x"), Check: apitest.FieldErrors("overrides:invalid_type")},
		{Name: "an unknown custom field", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad(map[string]any{"customFields": map[string]any{"golf": "ja"}}), Check: apitest.FieldErrors("overrides.customFields.golf:unknown_custom_field")},
		{Name: "writeMode applies to existing contacts only", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: bad(map[string]any{"writeMode": "fill_empty_only"}), Check: apitest.FieldErrors("overrides.writeMode:not_allowed")},
		{Name: "null clears the lead's first name, which a private contact needs", Key: a.Secret, Method: "POST", Path: path(lead),
			Status: 422, Body: bad(map[string]any{"firstName": nil}), Check: apitest.FieldErrors("overrides.firstName:required")},
		{Name: "the lead is still open after every refusal", Key: a.Secret, Path: "/leads/" + lead, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var l struct{ Converted bool }
				r.Decode(t, &l)
				if l.Converted {
					t.Error("converted")
				}
			}},
	})

	// Into an existing contact the overrides apply as a PATCH of it: groups merge key by key,
	// null clears, tags replace, writeMode fill_empty_only keeps what is set.
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret, Body: map[string]any{
		"type": "private", "firstName": "Nina", "lastName": "Neu", "tags": []string{"alt"},
		"address":  map[string]any{"street": "Altweg", "houseNumber": "5", "city": "Köln", "zipCode": "50667"},
		"personal": map[string]any{"maritalStatus": "ledig"}}})
	if r.Status != 201 {
		t.Fatalf("contact: %d %s", r.Status, r.Body)
	}
	var existing struct{ ID string }
	r.Decode(t, &existing)
	into := func(overrides map[string]any) map[string]any {
		return map[string]any{"contactType": "private", "existingContactId": existing.ID, "overrides": overrides}
	}
	lead = newLead()
	env.Run(t, []apitest.Case{
		{Name: "into existing: a bad value is named", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: into(map[string]any{"bank": map[string]any{"iban": "DE00"}}), Check: apitest.FieldErrors("overrides.bank.iban:invalid_iban")},
		{Name: "into existing: null may not clear what the contact needs", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: into(map[string]any{"lastName": nil}), Check: apitest.FieldErrors("overrides.lastName:required")},
		{Name: "into existing: unknown owner", Key: a.Secret, Method: "POST", Path: path(lead), Status: 422,
			Body: into(map[string]any{"ownerId": "00000000-0000-4000-8000-000000000000"}), Check: apitest.FieldErrors("overrides.ownerId:unknown_user")},
		{Name: "into existing: a patch", Key: a.Secret, Method: "POST", Path: path(lead), Status: 201,
			Body: into(map[string]any{"tags": []string{"neu"}, "address": map[string]any{"city": "Berlin", "zipCode": "10115", "street": nil},
				"personal": map[string]any{"numberOfChildren": 1}}),
			Check: func(t *testing.T, r *apitest.Response) {
				c := convertedContact(t, r)
				has(t, c, existing.ID, "id")
				has(t, c, []string{"neu"}, "tags")
				has(t, c, map[string]any{"houseNumber": "5", "city": "Berlin", "zipCode": "10115"}, "address")
				has(t, c, map[string]any{"maritalStatus": "ledig", "numberOfChildren": 1}, "personal")
				has(t, c, "nina@example.com", "email") // the lead filled the empty e-mail
			}},
	})
	env.Run(t, []apitest.Case{{Name: "into existing with fill_empty_only", Key: a.Secret, Method: "POST", Path: path(newLead()),
		Status: 201, Body: into(map[string]any{"writeMode": "fill_empty_only", "address": map[string]any{"city": "München", "street": "Neuweg"},
			"personal": map[string]any{"maritalStatus": "verheiratet", "nationality": "DE"}}),
		Check: func(t *testing.T, r *apitest.Response) {
			c := convertedContact(t, r)
			has(t, c, map[string]any{"houseNumber": "5", "city": "Berlin", "zipCode": "10115", "street": "Neuweg"}, "address")
			has(t, c, map[string]any{"maritalStatus": "ledig", "numberOfChildren": 1, "nationality": "DE"}, "personal")
		}}})
	if got := events(t, env, a.Secret, "contact.updated"); len(got) != 2 {
		t.Errorf("%d contact.updated, want one per conversion into the contact", len(got))
	}
}
