// Package contacts tests /contacts: create, read, merge patch, delete, list, the field catalog,
// sensitive groups (scope and encryption at rest), custom fields and visibility.
package contacts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// contact is the Contact resource as tests read it.
type contact struct {
	ID           string                    `json:"id"`
	Type         string                    `json:"type"`
	FirstName    string                    `json:"firstName"`
	LastName     string                    `json:"lastName"`
	Email        *string                   `json:"email"`
	OwnerID      *string                   `json:"ownerId"`
	Tags         []string                  `json:"tags"`
	Labels       []string                  `json:"labels"`
	CustomFields map[string]any            `json:"customFields"`
	Phones       []struct{ Number string } `json:"phones"`
	Address      map[string]any            `json:"address"`
	Personal     map[string]any            `json:"personal"`
	Bank         *map[string]any           `json:"bank"`
	Health       *map[string]any           `json:"health"`
	Business     map[string]any            `json:"business"`
	raw          map[string]json.RawMessage
}

func decode(t *testing.T, r *apitest.Response) contact {
	t.Helper()
	var c contact
	r.Decode(t, &c)
	r.Decode(t, &c.raw)
	return c
}

// create is the contact fixture: POST /contacts with key, 201 required; the contact (with its
// raw JSON) and its ETag.
func create(t *testing.T, env *apitest.Env, key string, body any) (contact, string) {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("create contact: %d %s", r.Status, r.Body)
	}
	return decode(t, r), r.Header.Get("ETag")
}

const iban = "DE89370400440532013000"

func anna() map[string]any {
	return map[string]any{"type": "private", "firstName": "Anna", "lastName": "Müller", "email": "Anna.Mueller@Example.com",
		"phones": []map[string]any{{"number": "0170 1234567"}}, "tags": []string{"vip", "kfz"}, "labels": []string{"red"},
		"address":  map[string]any{"street": "Hauptstraße", "houseNumber": "1", "zipCode": "10115", "city": "Berlin", "country": "DE"},
		"personal": map[string]any{"salutation": "Frau", "dateOfBirth": "1985-04-12", "maritalStatus": "verheiratet"},
		"bank":     map[string]any{"iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX"},
		"health":   map[string]any{"smoker": false, "heightCm": 170}}
}

func TestContacts_Create(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	env.Run(t, []apitest.Case{
		{Name: "full private contact", Key: a.Secret, Method: "POST", Path: "/contacts", Body: anna(), Status: 201,
			Check: func(t *testing.T, r *apitest.Response) {
				c := decode(t, r)
				if c.FirstName != "Anna" || *c.Email != "Anna.Mueller@Example.com" || len(c.Phones) != 1 || c.Address["city"] != "Berlin" ||
					c.Personal["maritalStatus"] != "verheiratet" || c.Bank == nil || (*c.Bank)["iban"] != iban || c.Health == nil ||
					!slices.Equal(c.Tags, []string{"vip", "kfz"}) {
					t.Errorf("got %+v", c)
				}
				if c.OwnerID == nil || *c.OwnerID != a.Admin.ID.String() {
					t.Errorf("owner %v, want the company admin %s", c.OwnerID, a.Admin.ID)
				}
				if string(c.raw["business"]) != "null" {
					t.Errorf("business of a private contact: %s", c.raw["business"])
				}
				if r.Header.Get("Location") != "/api/public/v1/contacts/"+c.ID || r.Header.Get("ETag") != `"1"` {
					t.Errorf("Location %q ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
				}
			}},
		{Name: "business contact", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 201,
			Body: map[string]any{"type": "business", "business": map[string]any{"companyName": "Müller GmbH", "legalForm": "GmbH"}},
			Check: func(t *testing.T, r *apitest.Response) {
				c := decode(t, r)
				if c.Business["companyName"] != "Müller GmbH" || c.Business["legalForm"] != "GmbH" || string(c.raw["health"]) != "null" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "agent key owns what it creates", Key: a.UserKey(t, agent), Method: "POST", Path: "/contacts", Status: 201,
			Body: map[string]any{"type": "private", "firstName": "A", "lastName": "B"},
			Check: func(t *testing.T, r *apitest.Response) {
				if c := decode(t, r); c.OwnerID == nil || *c.OwnerID != agent.ID.String() {
					t.Errorf("owner %v, want %s", c.OwnerID, agent.ID)
				}
			}},
		{Name: "private needs names", Key: a.Secret, Method: "POST", Path: "/contacts", Body: `{"type":"private"}`, Status: 422,
			Problem: "validation_failed", Check: apitest.FieldErrorSet("firstName:required", "lastName:required")},
		{Name: "business needs a company name", Key: a.Secret, Method: "POST", Path: "/contacts", Body: `{"type":"business"}`, Status: 422,
			Check: apitest.FieldErrorSet("business.companyName:required")},
		{Name: "health on a business contact", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422,
			Body:  map[string]any{"type": "business", "business": map[string]any{"companyName": "X"}, "health": map[string]any{"smoker": true}},
			Check: apitest.FieldErrorSet("health:group_not_applicable")},
		{Name: "every bad value is listed", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422,
			Body: map[string]any{"type": "private", "firstName": "A", "lastName": "B", "email": "nope",
				"phones":             []map[string]any{{"number": "12"}},
				"bank":               map[string]any{"iban": "DE00370400440532013000", "bic": "XX"},
				"personal":           map[string]any{"dateOfBirth": "2999-01-01", "salutation": "Mister"},
				"socialInsuranceTax": map[string]any{"taxId": "12345678901", "socialInsuranceNumber": "123"},
				"labels":             []string{"chartreuse"}, "ownerId": uuid.NewString()},
			Check: apitest.FieldErrorSet("email:invalid_email", "phones.0.number:invalid_phone", "bank.iban:invalid_iban", "bank.bic:invalid_bic",
				"personal.dateOfBirth:date_in_future", "personal.salutation:invalid_enum", "socialInsuranceTax.taxId:invalid_tax_id",
				"socialInsuranceTax.socialInsuranceNumber:invalid_social_insurance_number", "labels.0:invalid_enum")},
		{Name: "unknown owner", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422,
			Body: map[string]any{"type": "private", "firstName": "A", "lastName": "B", "ownerId": uuid.NewString()}, Check: apitest.FieldErrorSet("ownerId:unknown_user")},
		{Name: "unknown group key", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422,
			Body:  map[string]any{"type": "private", "firstName": "A", "lastName": "B", "address": map[string]any{"planet": "Mars"}},
			Check: apitest.FieldErrorSet("address.planet:unknown_field")},
		{Name: "unknown field", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422, Body: `{"type":"private","x":1}`,
			Check: apitest.FieldErrorSet("x:unknown_field")},
		{Name: "malformed JSON", Key: a.Secret, Method: "POST", Path: "/contacts", Body: `{"type":`, Status: 400, Problem: "malformed_json"},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "contacts:read"), Method: "POST", Path: "/contacts",
			Body: `{"type":"private","firstName":"A","lastName":"B"}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "no key", Method: "POST", Path: "/contacts", Body: `{"type":"private"}`, Status: 401},
		{Name: "taken external reference", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 201,
			Body: map[string]any{"type": "private", "firstName": "A", "lastName": "B", "externalReferences": []map[string]string{{"source": "ams", "externalId": "1"}}}},
		{Name: "taken external reference again", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 409, Problem: "external_reference_taken",
			Body: map[string]any{"type": "private", "firstName": "C", "lastName": "D", "externalReferences": []map[string]string{{"source": "ams", "externalId": "1"}}}},
	})
}

func TestContacts_CreateIdempotent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	h := map[string]string{"Idempotency-Key": uuid.NewString()}
	var ids []string
	for range 2 {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret, Header: h, Body: `{"type":"private","firstName":"Once","lastName":"Only"}`})
		if r.Status != 201 {
			t.Fatalf("status %d %s", r.Status, r.Body)
		}
		ids = append(ids, decode(t, r).ID)
	}
	if ids[0] != ids[1] {
		t.Errorf("two contacts %v", ids)
	}
}

func TestContacts_Sensitive(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	c, _ := create(t, env, a.Secret, anna())
	plain := a.KeyWithScopes(t, "contacts:read")
	env.Run(t, []apitest.Case{
		{Name: "without contacts.sensitive:read the groups are absent", Key: plain, Method: "GET", Path: "/contacts/" + c.ID, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				for _, g := range []string{"bank", "health", "identity", "income"} {
					if _, ok := got.raw[g]; ok {
						t.Errorf("%s present: %s", g, r.Body)
					}
				}
				if got.Address["city"] != "Berlin" {
					t.Errorf("address missing: %s", r.Body)
				}
			}},
		{Name: "with the scope they are there", Key: a.KeyWithScopes(t, "contacts:read", "contacts.sensitive:read"), Method: "GET",
			Path: "/contacts/" + c.ID, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				if got := decode(t, r); got.Bank == nil || (*got.Bank)["iban"] != iban {
					t.Errorf("bank: %s", r.Body)
				}
			}},
		{Name: "fields selects groups", Key: a.Secret, Method: "GET", Path: "/contacts/" + c.ID + "?fields=bank,personal", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				if _, ok := got.raw["address"]; ok || got.Bank == nil || got.Personal == nil {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "unknown group in fields", Key: a.Secret, Method: "GET", Path: "/contacts/" + c.ID + "?fields=planet", Status: 422,
			Check: apitest.FieldErrorSet("fields:unknown_group")},
		{Name: "fields naming sensitive groups without the scope: absent, never an error", Key: plain, Method: "GET",
			Path: "/contacts/" + c.ID + "?fields=bank,health,address", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				_, bank := got.raw["bank"]
				_, health := got.raw["health"]
				_, personal := got.raw["personal"]
				if bank || health || personal || got.Address["city"] != "Berlin" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "match candidates carry no sensitive groups, whatever the scope", Key: a.Secret, Method: "POST", Path: "/contacts/match",
			Body: map[string]any{"email": "anna.mueller@example.com"}, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				if !strings.Contains(string(r.Body), c.ID) || strings.Contains(string(r.Body), iban) || strings.Contains(string(r.Body), `"bank"`) {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "a write answers without them when the key lacks the scope", Key: a.KeyWithScopes(t, "contacts:write"), Method: "PUT",
			Path: "/external/ams/contacts/S-1", Body: map[string]any{"type": "private", "firstName": "S", "lastName": "Ens",
				"bank": map[string]any{"iban": iban}}, Status: 201, Check: func(t *testing.T, r *apitest.Response) {
				if strings.Contains(string(r.Body), iban) || strings.Contains(string(r.Body), `"bank"`) {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "list leaves them out too", Key: plain, Method: "GET", Path: "/contacts", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if strings.Contains(string(r.Body), iban) || strings.Contains(string(r.Body), `"bank"`) {
					t.Errorf("sensitive data in list: %s", r.Body)
				}
			}},
	})
	// At rest: the raw columns hold no IBAN in clear, and the key id sits beside the value.
	var groups, sensitive string
	err := env.Pinned(context.Background(), a.ID, func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT groups::text, sensitive::text FROM contacts WHERE id = $1`, c.ID).Scan(&groups, &sensitive)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{iban, "DE89 3704", "COBADEFF", "heightCm"} {
		if strings.Contains(groups+sensitive, s) {
			t.Errorf("%q in clear at rest: %s %s", s, groups, sensitive)
		}
	}
	var sealed map[string]struct {
		Kid string `json:"kid"`
		CT  []byte `json:"ct"`
	}
	if err := json.Unmarshal([]byte(sensitive), &sealed); err != nil || sealed["bank"].Kid == "" || len(sealed["bank"].CT) == 0 || sealed["health"].Kid == "" {
		t.Errorf("sealed groups %s (%v)", sensitive, err)
	}
	// Events never carry the sensitive groups.
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/events", Key: a.Secret})
	if r.Status != 200 || strings.Contains(string(r.Body), iban) || !strings.Contains(string(r.Body), "contact.created") {
		t.Errorf("events: %d %s", r.Status, r.Body)
	}
}

func TestContacts_Patch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	other := env.NewCompany(t)
	c, etag := create(t, env, a.Secret, anna())
	path := "/contacts/" + c.ID
	im := func(tag string) map[string]string {
		return map[string]string{"If-Match": tag, "Content-Type": "application/merge-patch+json"}
	}
	env.Run(t, []apitest.Case{
		{Name: "without If-Match", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"firstName":"X"}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Status: 428, Problem: "if_match_required"},
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"firstName":"X"}`, Header: im(`"9"`),
			Status: 412, Problem: "etag_mismatch"},
		{Name: "groups merge key by key, tags replace, null clears", Key: a.Secret, Method: "PATCH", Path: path, Header: im(etag), Status: 200,
			Body: `{"address":{"city":"Hamburg","zipCode":"20095"},"personal":{"maritalStatus":null},"tags":["neu"],"email":null,"bank":{"bic":null}}`,
			Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				if got.Address["city"] != "Hamburg" || got.Address["street"] != "Hauptstraße" || got.Personal["maritalStatus"] != nil ||
					got.Personal["salutation"] != "Frau" || !slices.Equal(got.Tags, []string{"neu"}) || got.Email != nil ||
					(*got.Bank)["iban"] != iban || (*got.Bank)["bic"] != nil || len(got.Phones) != 1 {
					t.Errorf("got %s", r.Body)
				}
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("ETag %s", r.Header.Get("ETag"))
				}
			}},
		{Name: "fill_empty_only keeps values set today", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"2"`), Status: 200,
			Body: `{"writeMode":"fill_empty_only","firstName":"Berta","email":"new@example.com","personal":{"salutation":"Herr","maritalStatus":"ledig"}}`,
			Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				if got.FirstName != "Anna" || got.Email == nil || *got.Email != "new@example.com" ||
					got.Personal["salutation"] != "Frau" || got.Personal["maritalStatus"] != "ledig" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "a patch that changes nothing keeps the version", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 200,
			Body: `{"firstName":"Anna"}`, Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("ETag") != `"3"` {
					t.Errorf("ETag %s", r.Header.Get("ETag"))
				}
			}},
		{Name: "phones are not patchable", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 422,
			Body: `{"phones":[{"number":"030 123456"}]}`, Check: apitest.FieldErrorSet("phones:not_patchable")},
		{Name: "type cannot change", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 422,
			Body: `{"type":"business","business":{"companyName":"X"}}`, Check: apitest.FieldErrorSet("type:immutable")},
		{Name: "invalid values", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 422,
			Body:  `{"bank":{"iban":"DE00"},"lastName":null,"health":{"weightKg":-1}}`,
			Check: apitest.FieldErrorSet("bank.iban:invalid_iban", "lastName:required", "health.weightKg:out_of_range")},
		{Name: "server-owned field", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 422,
			Body: `{"id":"x"}`, Check: apitest.FieldErrorSet("id:read_only_field")},
		{Name: "other company gets 404", Key: other.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 404, Body: `{"firstName":"X"}`},
		{Name: "unknown contact", Key: a.Secret, Method: "PATCH", Path: "/contacts/" + uuid.NewString(), Header: im(`"1"`), Status: 404, Body: `{}`},
		{Name: "bad id", Key: a.Secret, Method: "PATCH", Path: "/contacts/x", Header: im(`"1"`), Status: 400, Body: `{}`},
	})
}

func TestContacts_Delete(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	other := env.NewCompany(t)
	c, etag := create(t, env, a.Secret, anna())
	path := "/contacts/" + c.ID
	env.Run(t, []apitest.Case{
		{Name: "without If-Match", Key: a.Secret, Method: "DELETE", Path: path, Status: 428, Problem: "if_match_required"},
		{Name: "stale", Key: a.Secret, Method: "DELETE", Path: path, Header: map[string]string{"If-Match": `"7"`}, Status: 412},
		{Name: "other company", Key: other.Secret, Method: "DELETE", Path: path, Header: map[string]string{"If-Match": etag}, Status: 404},
		{Name: "deleted", Key: a.Secret, Method: "DELETE", Path: path, Header: map[string]string{"If-Match": etag}, Status: 204},
		{Name: "gone", Key: a.Secret, Method: "GET", Path: path, Status: 404},
		{Name: "phones gone with it", Key: a.Secret, Method: "GET", Path: "/contacts?phone=0170%201234567", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[contact]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "contact.deleted recorded", Key: a.Secret, Method: "GET", Path: "/events", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if !strings.Contains(string(r.Body), "contact.deleted") || strings.Contains(string(r.Body), iban) {
					t.Errorf("events %s", r.Body)
				}
			}},
	})
}

func TestContacts_List(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	create(t, env, a.Secret, anna())
	create(t, env, a.Secret, map[string]any{"type": "business", "business": map[string]any{"companyName": "Zeppelin AG"},
		"email": "info@zeppelin.example", "tags": []string{"kfz"}, "address": map[string]any{"city": "Friedrichshafen"}})
	create(t, env, a.Secret, map[string]any{"type": "private", "firstName": "Bernd", "lastName": "Adler", "ownerId": agent.ID.String(),
		"phones": []map[string]any{{"number": "+49 30 1234567"}}, "profession": map[string]any{"profession": "Müllwerker"}})
	names := func(want ...string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[contact]
			r.Decode(t, &p)
			var got []string
			for _, c := range p.Data {
				if c.Type == "business" {
					got = append(got, c.Business["companyName"].(string))
				} else {
					got = append(got, c.LastName)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "newest first by default", Key: a.Secret, Method: "GET", Path: "/contacts", Status: 200, Check: names("Adler", "Zeppelin AG", "Müller")},
		{Name: "by name", Key: a.Secret, Method: "GET", Path: "/contacts?sort=name", Status: 200, Check: names("Adler", "Müller", "Zeppelin AG")},
		{Name: "by name descending", Key: a.Secret, Method: "GET", Path: "/contacts?sort=-name", Status: 200, Check: names("Zeppelin AG", "Müller", "Adler")},
		{Name: "oldest first", Key: a.Secret, Method: "GET", Path: "/contacts?sort=createdAt", Status: 200, Check: names("Müller", "Zeppelin AG", "Adler")},
		{Name: "q over names and profession", Key: a.Secret, Method: "GET", Path: "/contacts?q=MÜLL&sort=name", Status: 200, Check: names("Adler", "Müller")},
		{Name: "q over city", Key: a.Secret, Method: "GET", Path: "/contacts?q=friedrichs", Status: 200, Check: names("Zeppelin AG")},
		{Name: "q over street", Key: a.Secret, Method: "GET", Path: "/contacts?q=hauptstr", Status: 200, Check: names("Müller")},
		{Name: "q over a tag", Key: a.Secret, Method: "GET", Path: "/contacts?q=vip", Status: 200, Check: names("Müller")},
		{Name: "q over a phone", Key: a.Secret, Method: "GET", Path: "/contacts?q=030%201234567", Status: 200, Check: names("Adler")},
		{Name: "q is not a pattern", Key: a.Secret, Method: "GET", Path: "/contacts?q=%25%25", Status: 200, Check: names()},
		{Name: "email exact, case-insensitive", Key: a.Secret, Method: "GET", Path: "/contacts?email=anna.mueller@example.COM", Status: 200, Check: names("Müller")},
		{Name: "email is exact", Key: a.Secret, Method: "GET", Path: "/contacts?email=anna", Status: 200, Check: names()},
		{Name: "phone after E.164", Key: a.Secret, Method: "GET", Path: "/contacts?phone=%2B491701234567", Status: 200, Check: names("Müller")},
		{Name: "every tag", Key: a.Secret, Method: "GET", Path: "/contacts?tag=kfz,vip", Status: 200, Check: names("Müller")},
		{Name: "one tag", Key: a.Secret, Method: "GET", Path: "/contacts?tag=kfz&sort=name", Status: 200, Check: names("Müller", "Zeppelin AG")},
		{Name: "label", Key: a.Secret, Method: "GET", Path: "/contacts?label=red", Status: 200, Check: names("Müller")},
		{Name: "type", Key: a.Secret, Method: "GET", Path: "/contacts?type=business", Status: 200, Check: names("Zeppelin AG")},
		{Name: "owner", Key: a.Secret, Method: "GET", Path: "/contacts?ownerId=" + agent.ID.String(), Status: 200, Check: names("Adler")},
		{Name: "the agent sees its own only", Key: a.UserKey(t, agent), Method: "GET", Path: "/contacts", Status: 200, Check: names("Adler")},
		{Name: "bad parameters, all listed", Key: a.Secret, Method: "GET", Path: "/contacts?q=x&type=robot&sort=age&ownerId=1&phone=12&label=mauve&limit=0&fields=x",
			Status: 422, Check: apitest.FieldErrorSet("q:too_short", "type:invalid_enum", "sort:invalid_enum", "ownerId:invalid_uuid", "phone:invalid_phone",
				"label:invalid_enum", "limit:out_of_range", "fields:unknown_group")},
		{Name: "no key", Method: "GET", Path: "/contacts", Status: 401},
		{Name: "no scope", Key: a.KeyWithScopes(t, "leads:read"), Method: "GET", Path: "/contacts", Status: 403, Problem: "insufficient_scope"},
	})
}

// TestContacts_Walk walks 10,000 contacts 200 at a time in each sort while others are inserted:
// every contact that existed before the walk comes exactly once.
func TestContacts_Walk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	const n = 10000
	err := env.Pinned(context.Background(), a.ID, func(tx *sql.Tx) error {
		// 97 sort names ("n042 p": the database derives sort_name from the names), so the id
		// decides between many equals.
		_, err := tx.Exec(`INSERT INTO contacts (id, company_id, type, first_name, last_name, created_at, updated_at, version, tags, labels, custom_fields, groups, sensitive)
			SELECT gen_random_uuid(), $1, 'private', 'P', 'N' || lpad((i % 97)::text, 3, '0'), now() - (i % 50) * interval '1 second', now(), 1, '[]', '[]', '{}', '{}', '{}'
			FROM generate_series(1, $2) i`, a.ID, n)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, sort := range []string{"-createdAt", "name", "-updatedAt"} {
		t.Run(sort, func(t *testing.T) {
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Add(1)
			inserted := 0
			go func() { // inserts while the walk runs, into every part of each order
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					err := env.Pinned(context.Background(), a.ID, func(tx *sql.Tx) error {
						_, err := tx.Exec(`INSERT INTO contacts (id, company_id, type, first_name, last_name, created_at, updated_at, version, tags, labels, custom_fields, groups, sensitive)
							VALUES (gen_random_uuid(), $1, 'private', 'P', 'N' || lpad(($2 % 97)::text, 3, '0'), now(), now(), 1, '[]', '[]', '{}', '{}', '{}')`, a.ID, i)
						return err
					})
					if err != nil {
						t.Errorf("insert: %v", err)
						return
					}
					inserted++
				}
			}()
			seen := map[string]int{}
			cursor := ""
			for {
				path := "/contacts?limit=200&sort=" + sort
				if cursor != "" {
					path += "&cursor=" + cursor
				}
				r := env.Do(t, apitest.Request{Method: "GET", Path: path, Key: a.Secret})
				if r.Status != 200 {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				var p apitest.Page[contact]
				r.Decode(t, &p)
				for _, c := range p.Data {
					seen[c.ID]++
				}
				if !p.Pagination.HasMore {
					break
				}
				cursor = p.Pagination.NextCursor
			}
			close(stop)
			wg.Wait()
			t.Logf("%d contacts inserted during the walk", inserted)
			old := 0
			for id, k := range seen {
				if k != 1 {
					t.Errorf("contact %s came %d times", id, k)
				}
				old++
			}
			if old < n {
				t.Errorf("walk saw %d contacts, want at least %d", old, n)
			}
		})
	}
}

func TestContacts_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	b := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	keyA, keyB := a.UserKey(t, agentA), a.UserKey(t, agentB)
	c, etag := create(t, env, keyA, map[string]any{"type": "private", "firstName": "Own", "lastName": "ByA"})
	path := "/contacts/" + c.ID
	im := map[string]string{"If-Match": etag, "Content-Type": "application/merge-patch+json"}
	env.Run(t, []apitest.Case{
		{Name: "owner reads it", Key: keyA, Method: "GET", Path: path, Status: 200},
		{Name: "other agent gets 404", Key: keyB, Method: "GET", Path: path, Status: 404},
		{Name: "other agent cannot patch", Key: keyB, Method: "PATCH", Path: path, Header: im, Body: `{"firstName":"X"}`, Status: 404},
		{Name: "other agent cannot delete", Key: keyB, Method: "DELETE", Path: path, Header: im, Status: 404},
		{Name: "other agent's list lacks it", Key: keyB, Method: "GET", Path: "/contacts", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if strings.Contains(string(r.Body), c.ID) {
					t.Errorf("list shows it: %s", r.Body)
				}
			}},
		{Name: "company key reads it", Key: a.Secret, Method: "GET", Path: path, Status: 200},
		{Name: "other company gets 404", Key: b.Secret, Method: "GET", Path: path, Status: 404},
		{Name: "sandbox gets 404", Key: a.TestSecret, Method: "GET", Path: path, Status: 404},
		{Name: "owner gives it away and sees the answer once", Key: keyA, Method: "PATCH", Path: path, Header: im, Status: 200,
			Body: map[string]any{"ownerId": agentB.ID.String()}, Check: func(t *testing.T, r *apitest.Response) {
				if got := decode(t, r); got.OwnerID == nil || *got.OwnerID != agentB.ID.String() {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "then it is 404 for A", Key: keyA, Method: "GET", Path: path, Status: 404},
		{Name: "and B's", Key: keyB, Method: "GET", Path: path, Status: 200},
	})
	a.Delegate(t, agentB.ID, agentA.ID, nil)
	env.Run(t, []apitest.Case{{Name: "a delegation from B shows it to A again", Key: keyA, Method: "GET", Path: path, Status: 200}})
}

func TestContacts_CustomFields(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	b := env.NewCompany(t)
	agent := env.NewUser(t, a, "agent")
	env.Run(t, []apitest.Case{
		{Name: "enum field", Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 201,
			Body: map[string]any{"key": "hobby", "label": "Hobby", "dataType": "enum", "options": []string{"Segeln", "Reiten"}, "position": 5},
			Check: func(t *testing.T, r *apitest.Response) {
				if etag := r.Header.Get("ETag"); etag != `"1"` { // a definition never changes
					t.Errorf("ETag %q, want \"1\"", etag)
				}
			}},
		{Name: "number field first", Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 201,
			Body: map[string]any{"key": "score", "label": "Score", "dataType": "number", "position": 0}},
		{Name: "taken key", Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 409, Problem: "custom_field_key_taken",
			Body: map[string]any{"key": "hobby", "label": "H", "dataType": "string"}},
		{Name: "another company may use the key", Key: b.Secret, Method: "POST", Path: "/custom-fields", Status: 201,
			Body: map[string]any{"key": "hobby", "label": "H", "dataType": "string"}},
		{Name: "bad definition", Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 422,
			Body:  map[string]any{"key": "1x", "label": "", "dataType": "color", "options": []string{"a"}},
			Check: apitest.FieldErrorSet("key:invalid_key", "label:invalid_length", "dataType:invalid_enum", "options:not_allowed")},
		{Name: "agents may not define fields", Key: a.UserKey(t, agent), Method: "POST", Path: "/custom-fields", Status: 403,
			Body: map[string]any{"key": "x", "label": "X", "dataType": "string"}},
		{Name: "display order", Key: a.Secret, Method: "GET", Path: "/custom-fields", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var got struct{ Data []struct{ Key string } }
				r.Decode(t, &got)
				if len(got.Data) != 2 || got.Data[0].Key != "score" || got.Data[1].Key != "hobby" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "values validated by definition", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422,
			Body:  map[string]any{"type": "private", "firstName": "A", "lastName": "B", "customFields": map[string]any{"hobby": "Golf", "score": "high", "x": 1}},
			Check: apitest.FieldErrorSet("customFields.hobby:invalid_enum", "customFields.score:invalid_type", "customFields.x:unknown_custom_field")},
		{Name: "valid values", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 201,
			Body: map[string]any{"type": "private", "firstName": "A", "lastName": "B", "customFields": map[string]any{"hobby": "Segeln", "score": 7.5}}},
	})
	for i := 2; i < 10; i++ {
		env.Run(t, []apitest.Case{{Name: fmt.Sprintf("field %d", i+1), Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 201,
			Body: map[string]any{"key": fmt.Sprintf("f%d", i), "label": "F", "dataType": "boolean"}}})
	}
	env.Run(t, []apitest.Case{{Name: "the eleventh is refused", Key: a.Secret, Method: "POST", Path: "/custom-fields", Status: 409,
		Problem: "custom_field_limit", Body: map[string]any{"key": "eleven", "label": "F", "dataType": "boolean"}}})
}

func TestContacts_Catalog(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		{Name: "catalog", Key: a.Secret, Method: "GET", Path: "/contact-fields", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var got struct {
				Data []struct {
					Key, Group, Label string
					Options           []string
					Sensitive         bool
					ContactTypes      []string
				}
			}
			r.Decode(t, &got)
			find := func(k string) (int, bool) {
				for i, f := range got.Data {
					if f.Key == k {
						return i, true
					}
				}
				return 0, false
			}
			i, ok := find("employmentStatus")
			if !ok || !slices.Contains(got.Data[i].Options, "Beamter") || !slices.Contains(got.Data[i].Options, "Selbstständig") {
				t.Errorf("employmentStatus %+v", got.Data[i])
			}
			i, ok = find("legalForm")
			if !ok || !slices.Contains(got.Data[i].Options, "GmbH") || !slices.Contains(got.Data[i].Options, "e.K.") || got.Data[i].ContactTypes[0] != "business" {
				t.Errorf("legalForm %+v", got.Data[i])
			}
			i, ok = find("iban")
			if !ok || !got.Data[i].Sensitive || got.Data[i].Label != "IBAN" {
				t.Errorf("iban %+v", got.Data[i])
			}
		}},
		{Name: "no key", Method: "GET", Path: "/contact-fields", Status: 401},
	})
}

// TestContacts_PatchCustomFieldsLabels: customFields merge by key (null clears one), labels
// replace the whole list, writeMode overwrite (the default, named) writes and fill_empty_only
// fills only empty custom fields; any other writeMode is 422.
func TestContacts_PatchCustomFieldsLabels(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	for _, d := range []map[string]any{{"key": "hobby", "label": "Hobby", "dataType": "string"},
		{"key": "score", "label": "Score", "dataType": "number"}, {"key": "vip", "label": "VIP", "dataType": "boolean"}} {
		if r := env.Do(t, apitest.Request{Method: "POST", Path: "/custom-fields", Key: a.Secret, Body: d}); r.Status != 201 {
			t.Fatalf("custom field: %d %s", r.Status, r.Body)
		}
	}
	c, etag := create(t, env, a.Secret, map[string]any{"type": "private", "firstName": "Cu", "lastName": "Stom",
		"labels": []string{"red", "blue"}, "customFields": map[string]any{"hobby": "Segeln", "score": 3}})
	path := "/contacts/" + c.ID
	im := func(tag string) map[string]string {
		return map[string]string{"If-Match": tag, "Content-Type": "application/merge-patch+json"}
	}
	env.Run(t, []apitest.Case{
		{Name: "customFields merge by key, labels replace", Key: a.Secret, Method: "PATCH", Path: path, Header: im(etag), Status: 200,
			Body: `{"customFields":{"score":4,"vip":true},"labels":["green"]}`, Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				if got.CustomFields["hobby"] != "Segeln" || got.CustomFields["score"] != 4.0 || got.CustomFields["vip"] != true ||
					!slices.Equal(got.Labels, []string{"green"}) {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "null clears one custom field", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"2"`), Status: 200,
			Body: `{"customFields":{"vip":null}}`, Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				if _, ok := got.CustomFields["vip"]; ok || got.CustomFields["hobby"] != "Segeln" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "fill_empty_only fills empty custom fields only", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"3"`), Status: 200,
			Body: `{"writeMode":"fill_empty_only","customFields":{"hobby":"Golf","vip":false},"labels":["red"]}`,
			Check: func(t *testing.T, r *apitest.Response) {
				got := decode(t, r)
				if got.CustomFields["hobby"] != "Segeln" || got.CustomFields["vip"] != false || !slices.Equal(got.Labels, []string{"green"}) {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "writeMode overwrite is the default, named", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"4"`), Status: 200,
			Body: `{"writeMode":"overwrite","customFields":{"hobby":"Golf"}}`, Check: func(t *testing.T, r *apitest.Response) {
				if got := decode(t, r); got.CustomFields["hobby"] != "Golf" {
					t.Errorf("got %s", r.Body)
				}
			}},
		{Name: "another writeMode", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"5"`), Status: 422,
			Body: `{"writeMode":"merge"}`, Check: apitest.FieldErrorSet("writeMode:invalid_enum")},
		{Name: "writeMode on create", Key: a.Secret, Method: "POST", Path: "/contacts", Status: 422,
			Body: `{"type":"private","firstName":"A","lastName":"B","writeMode":"overwrite"}`, Check: apitest.FieldErrorSet("writeMode:not_allowed")},
		{Name: "a label that is no colour", Key: a.Secret, Method: "PATCH", Path: path, Header: im(`"5"`), Status: 422,
			Body: `{"labels":["mauve"]}`, Check: apitest.FieldErrorSet("labels.0:invalid_enum")},
	})
}

// TestContacts_ListUpdatedSinceAndFields: updatedSince keeps contacts changed at or after the
// time (without offset: Europe/Berlin), fields narrows the groups of every listed contact.
func TestContacts_ListUpdatedSinceAndFields(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	old, oldETag := create(t, env, a.Secret, map[string]any{"type": "private", "firstName": "Alt", "lastName": "Eins",
		"address": map[string]any{"city": "Kiel"}, "personal": map[string]any{"maritalStatus": "ledig"}})
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret, Body: map[string]any{"type": "private", "firstName": "Neu", "lastName": "Zwei"}})
	var fresh struct {
		ID        string `json:"id"`
		UpdatedAt string `json:"updatedAt"`
	}
	r.Decode(t, &fresh)
	since := url.QueryEscape(fresh.UpdatedAt)
	ids := func(want ...string) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[contact]
			r.Decode(t, &p)
			var got []string
			for _, c := range p.Data {
				got = append(got, c.ID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "updatedSince keeps what changed at or after it", Key: a.Secret, Path: "/contacts?updatedSince=" + since, Status: 200, Check: ids(fresh.ID)},
		{Name: "without offset it is Berlin time", Key: a.Secret, Path: "/contacts?updatedSince=2020-01-01T00:00:00", Status: 200, Check: ids(old.ID, fresh.ID)},
		{Name: "bad updatedSince", Key: a.Secret, Path: "/contacts?updatedSince=gestern", Status: 422, Check: apitest.FieldErrorSet("updatedSince:invalid_datetime")},
		{Name: "a change brings the older one in", Key: a.Secret, Method: "PATCH", Path: "/contacts/" + old.ID, Body: `{"firstName":"Älter"}`,
			Header: map[string]string{"If-Match": oldETag, "Content-Type": "application/merge-patch+json"}, Status: 200},
		{Name: "updatedSince after the change", Key: a.Secret, Path: "/contacts?updatedSince=" + since, Status: 200, Check: ids(old.ID, fresh.ID)},
		{Name: "fields narrows every listed contact", Key: a.Secret, Path: "/contacts?fields=address", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[map[string]json.RawMessage]
				r.Decode(t, &p)
				for _, c := range p.Data {
					_, personal := c["personal"]
					if _, ok := c["address"]; !ok || personal {
						t.Errorf("listed contact %s", r.Body)
					}
				}
			}},
	})
}
