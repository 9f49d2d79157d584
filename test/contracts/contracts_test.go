// Package contracts tests /contracts, /insurers, /contract-types and the external upsert.
package contracts

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type insurer struct {
	ID       string `json:"id"`
	VUNumber string `json:"vuNumber"`
	Name     string `json:"name"`
}

type contract struct {
	ID               string  `json:"id"`
	ContactID        string  `json:"contactId"`
	InsurerID        string  `json:"insurerId"`
	Insurer          insurer `json:"insurer"`
	PolicyNumber     string  `json:"policyNumber"`
	Type             string  `json:"type"`
	TypeLabel        string  `json:"typeLabel"`
	Status           string  `json:"status"`
	StatusCode       *string `json:"statusCode"`
	StartDate        *string `json:"startDate"`
	EndDate          *string `json:"endDate"`
	Premium          *string `json:"premium"`
	PaymentFrequency *string `json:"paymentFrequency"`
	AnnualPremium    *string `json:"annualPremium"`
	OwnerID          *string `json:"ownerId"`
}

// mustContact stores a private contact in company as the app role (RLS and the ent rules
// apply) and returns its id.
func mustContact(t *testing.T, env *apitest.Env, company uuid.UUID, last string) string {
	t.Helper()
	var id string
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName("Erika").SetLastName(last).Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

func mustInsurer(t *testing.T, env *apitest.Env, key, vu string) insurer {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/insurers?vuNumber=" + vu, Key: key})
	var body struct{ Data []insurer }
	r.Decode(t, &body)
	if r.Status != 200 || len(body.Data) != 1 {
		t.Fatalf("insurer %s: %d %s", vu, r.Status, r.Body)
	}
	return body.Data[0]
}

func TestContracts_Catalogs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	env.Run(t, []apitest.Case{
		{Name: "insurers seeded from the sample files", Key: a.Secret, Method: "GET", Path: "/insurers", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var body struct{ Data []insurer }
				r.Decode(t, &body)
				vus := map[string]string{}
				for _, i := range body.Data {
					vus[i.VUNumber] = i.Name
				}
				for _, vu := range []string{"9999", "1111", "1104", "1234", "5015", "5501", "4711"} {
					if vus[vu] == "" {
						t.Errorf("VU %s missing from %v", vu, vus)
					}
				}
			}},
		{Name: "one insurer by VU number", Key: a.Secret, Method: "GET", Path: "/insurers?vuNumber=5501", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var body struct{ Data []insurer }
				r.Decode(t, &body)
				if len(body.Data) != 1 || !strings.Contains(body.Data[0].Name, "HanseMerkur") {
					t.Errorf("got %+v", body.Data)
				}
			}},
		{Name: "VU number too long", Key: a.Secret, Method: "GET", Path: "/insurers?vuNumber=123456", Status: 422,
			Check: apitest.FieldErrorSet("vuNumber:invalid_length")},
		{Name: "contract types are the GDV Sparten", Key: a.Secret, Method: "GET", Path: "/contract-types", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var body struct {
					Data []struct{ Code, Label, LabelEn string }
				}
				r.Decode(t, &body)
				i := slices.IndexFunc(body.Data, func(x struct{ Code, Label, LabelEn string }) bool { return x.Code == "130" })
				if len(body.Data) < 50 || i < 0 || body.Data[i].Label != "Verbundene Hausratversicherung" {
					t.Errorf("got %d types, 130 at %d", len(body.Data), i)
				}
			}},
		{Name: "no key", Method: "GET", Path: "/contract-types", Status: 401, Problem: "missing_credential"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "leads:read"), Method: "GET", Path: "/insurers", Status: 403,
			Problem: "insufficient_scope"},
	})
}

func TestContracts_CRUD(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	ins := mustInsurer(t, env, a.Secret, "5501")
	contact := mustContact(t, env, a.ID, "Mustermann")
	otherContact := mustContact(t, env, b.ID, "Fremd")
	base := func(policy string) map[string]any {
		return map[string]any{"contactId": contact, "insurerId": ins.ID, "policyNumber": policy, "type": "130",
			"status": "active", "startDate": "2024-01-01", "premium": "12.50", "paymentFrequency": "monthly"}
	}
	first := apitest.Create[contract](t, env, a.Secret, "/contracts", base("HR-1"))
	if first.AnnualPremium == nil || *first.AnnualPremium != "150.00" || first.TypeLabel != "Verbundene Hausratversicherung" ||
		first.Insurer.VUNumber != "5501" {
		t.Fatalf("created %+v", first)
	}
	with := func(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }
	without := func(m map[string]any, k string) map[string]any { delete(m, k); return m }

	env.Run(t, []apitest.Case{
		{Name: "single premium has no annual premium", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 201,
			Body: with(base("HR-2"), "paymentFrequency", "single"),
			Check: func(t *testing.T, r *apitest.Response) {
				var c contract
				r.Decode(t, &c)
				if c.AnnualPremium != nil || *c.Premium != "12.50" {
					t.Errorf("got %+v", c)
				}
			}},
		{Name: "same insurer, policy number and type", Key: a.Secret, Method: "POST", Path: "/contracts", Body: base("HR-1"),
			Status: 409, Problem: "contract_exists"},
		{Name: "every bad field is listed", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 422,
			Body: map[string]any{"contactId": "x", "policyNumber": strings.Repeat("p", 51), "type": "999", "status": "alive",
				"startDate": "2024-02-30", "premium": "1.234", "paymentFrequency": "weekly", "statusCode": "xyz"},
			Check: apitest.FieldErrorSet("contactId:invalid_uuid", "insurerId:required", "policyNumber:too_long", "type:unknown_type",
				"status:invalid_enum", "startDate:invalid_date", "premium:invalid_decimal", "paymentFrequency:invalid_enum",
				"statusCode:invalid_code")},
		{Name: "negative premium, end before start", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 422,
			Body:  with(with(base("HR-3"), "premium", "-1.00"), "endDate", "2023-12-31"),
			Check: apitest.FieldErrorSet("premium:negative", "endDate:before_start")},
		{Name: "premium as a number", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 422,
			Body: with(base("HR-3"), "premium", 12.5), Check: apitest.FieldErrorSet("premium:invalid_type")},
		{Name: "required fields", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 422,
			Body:  without(without(base("HR-3"), "type"), "status"),
			Check: apitest.FieldErrorSet("type:required", "status:required")},
		{Name: "another company's contact is unknown", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 422,
			Body: with(base("HR-3"), "contactId", otherContact), Check: apitest.FieldErrorSet("contactId:unknown_contact")},
		{Name: "unknown insurer and owner", Key: a.Secret, Method: "POST", Path: "/contracts", Status: 422,
			Body:  with(with(base("HR-3"), "insurerId", uuid.NewString()), "ownerId", uuid.NewString()),
			Check: apitest.FieldErrorSet("insurerId:unknown_insurer", "ownerId:unknown_user")},
		{Name: "malformed JSON", Key: a.Secret, Method: "POST", Path: "/contracts", Body: `{"type":`, Status: 400, Problem: "malformed_json"},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "contracts:read"), Method: "POST", Path: "/contracts",
			Body: base("HR-4"), Status: 403, Problem: "insufficient_scope"},
		{Name: "no key", Method: "POST", Path: "/contracts", Body: base("HR-4"), Status: 401, Problem: "missing_credential"},
		{Name: "owner reads it", Key: a.Secret, Method: "GET", Path: "/contracts/" + first.ID, Status: 200},
		{Name: "other company gets 404", Key: b.Secret, Method: "GET", Path: "/contracts/" + first.ID, Status: 404},
		{Name: "bad id", Key: a.Secret, Method: "GET", Path: "/contracts/nope", Status: 400, Problem: "invalid_id"},
		{Name: "patch with a stale ETag", Key: a.Secret, Method: "PATCH", Path: "/contracts/" + first.ID,
			Header: map[string]string{"If-Match": `"7"`, "Content-Type": "application/merge-patch+json"},
			Body:   `{"status":"cancelled"}`, Status: 412, Problem: "etag_mismatch"},
		{Name: "patch cancels and clears the premium", Key: a.Secret, Method: "PATCH", Path: "/contracts/" + first.ID,
			Header: map[string]string{"If-Match": `"1"`, "Content-Type": "application/merge-patch+json"},
			Body:   `{"status":"cancelled","endDate":"2026-12-31","premium":null}`, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var c contract
				r.Decode(t, &c)
				if c.Status != "cancelled" || *c.EndDate != "2026-12-31" || c.Premium != nil || c.AnnualPremium != nil ||
					r.Header.Get("ETag") != `"2"` {
					t.Errorf("got %+v etag %s", c, r.Header.Get("ETag"))
				}
			}},
		{Name: "patch that changes nothing keeps the version", Key: a.Secret, Method: "PATCH", Path: "/contracts/" + first.ID,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: `{"status":"cancelled"}`, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("ETag") != `"2"` {
					t.Errorf("etag %s", r.Header.Get("ETag"))
				}
			}},
		{Name: "patch cannot clear a required field", Key: a.Secret, Method: "PATCH", Path: "/contracts/" + first.ID,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: `{"policyNumber":null}`,
			Status: 422, Check: apitest.FieldErrorSet("policyNumber:required")},
		{Name: "other company cannot patch", Key: b.Secret, Method: "PATCH", Path: "/contracts/" + first.ID,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: `{"status":"ended"}`, Status: 404},
		{Name: "other company cannot delete", Key: b.Secret, Method: "DELETE", Path: "/contracts/" + first.ID, Status: 404},
		{Name: "delete with a stale ETag", Key: a.Secret, Method: "DELETE", Path: "/contracts/" + first.ID,
			Header: map[string]string{"If-Match": `"1"`}, Status: 412, Problem: "etag_mismatch"},
		{Name: "delete", Key: a.Secret, Method: "DELETE", Path: "/contracts/" + first.ID, Status: 204},
		{Name: "gone", Key: a.Secret, Method: "GET", Path: "/contracts/" + first.ID, Status: 404},
	})

	r := env.Do(t, apitest.Request{Path: "/events?limit=100", Key: a.Secret})
	var evs apitest.Page[struct{ Type string }]
	r.Decode(t, &evs)
	var types []string
	for _, e := range evs.Data {
		if strings.HasPrefix(e.Type, "contract.") {
			types = append(types, e.Type)
		}
	}
	want := []string{"contract.created", "contract.created", "contract.updated", "contract.deleted"}
	if !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
}

func TestContracts_ListAndExternal(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	hm := mustInsurer(t, env, a.Secret, "5501")
	nv := mustInsurer(t, env, a.Secret, "5015")
	c1, c2 := mustContact(t, env, a.ID, "Eins"), mustContact(t, env, a.ID, "Zwei")
	mustContact(t, env, b.ID, "Fremd")
	mk := func(contact, ins, policy, typ, status string) map[string]any {
		return map[string]any{"contactId": contact, "insurerId": ins, "policyNumber": policy, "type": typ, "status": status}
	}
	apitest.Create[contract](t, env, a.Secret, "/contracts", mk(c1, hm.ID, "K-1", "020", "active"))
	apitest.Create[contract](t, env, a.Secret, "/contracts", mk(c1, nv.ID, "H-1", "130", "cancelled"))
	apitest.Create[contract](t, env, a.Secret, "/contracts", mk(c2, nv.ID, "H-2", "130", "active"))
	count := func(n int) func(t *testing.T, r *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var p apitest.Page[contract]
			r.Decode(t, &p)
			if len(p.Data) != n {
				t.Errorf("got %d contracts, want %d", len(p.Data), n)
			}
		}
	}
	ext := mk(c2, hm.ID, "K-9", "020", "active")
	env.Run(t, []apitest.Case{
		{Name: "all", Key: a.Secret, Method: "GET", Path: "/contracts", Status: 200, Check: count(3)},
		{Name: "other company sees none", Key: b.Secret, Method: "GET", Path: "/contracts", Status: 200, Check: count(0)},
		{Name: "by contact", Key: a.Secret, Method: "GET", Path: "/contracts?contactId=" + c1, Status: 200, Check: count(2)},
		{Name: "by insurer and type", Key: a.Secret, Method: "GET", Path: "/contracts?insurerId=" + nv.ID + "&type=130", Status: 200, Check: count(2)},
		{Name: "by status", Key: a.Secret, Method: "GET", Path: "/contracts?status=active", Status: 200, Check: count(2)},
		{Name: "updated since the future", Key: a.Secret, Method: "GET", Path: "/contracts?updatedSince=2999-01-01T00:00:00Z", Status: 200, Check: count(0)},
		{Name: "paged", Key: a.Secret, Method: "GET", Path: "/contracts?limit=2", Status: 200, Check: count(2)},
		{Name: "bad filters listed", Key: a.Secret, Method: "GET", Path: "/contracts?contactId=x&type=999&status=alive&updatedSince=x",
			Status: 422, Check: apitest.FieldErrorSet("contactId:invalid_uuid", "type:unknown_type", "status:invalid_enum", "updatedSince:invalid_datetime")},
		{Name: "external create", Key: a.Secret, Method: "PUT", Path: "/external/ams/contracts/V-1", Body: ext, Status: 201},
		{Name: "external update", Key: a.Secret, Method: "PUT", Path: "/external/ams/contracts/V-1",
			Body: mk(c2, hm.ID, "K-9", "020", "suspended"), Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var c contract
				r.Decode(t, &c)
				if c.Status != "suspended" || r.Header.Get("ETag") != `"2"` {
					t.Errorf("got %+v", c)
				}
			}},
		{Name: "external in another company creates its own", Key: b.Secret, Method: "PUT", Path: "/external/ams/contracts/V-1",
			Body: ext, Status: 422, Check: apitest.FieldErrorSet("contactId:unknown_contact")},
		{Name: "external key of another contract", Key: a.Secret, Method: "PUT", Path: "/external/ams/contracts/V-2",
			Body: ext, Status: 409, Problem: "contract_exists"},
		{Name: "external bad path and body", Key: a.Secret, Method: "PUT", Path: "/external/ams/contracts/" + strings.Repeat("x", 256),
			Body: map[string]any{"type": "1"}, Status: 422,
			Check: apitest.FieldErrorSet("path.externalId:invalid_length", "contactId:required", "insurerId:required", "policyNumber:required",
				"type:unknown_type", "status:required")},
	})
}

func TestContracts_OperatorAddsInsurers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	vu := "7" + strings.ReplaceAll(uuid.NewString()[:4], "-", "0")
	env.CLI(t, "insurer", "set", "--vu", vu, "--name", "Neue Versicherung AG")
	if got := mustInsurer(t, env, a.Secret, vu); got.Name != "Neue Versicherung AG" {
		t.Errorf("got %+v", got)
	}
	env.CLI(t, "insurer", "set", "--vu", vu, "--name", "Neue Versicherung AG (umbenannt)")
	if got := mustInsurer(t, env, a.Secret, vu); got.Name != "Neue Versicherung AG (umbenannt)" {
		t.Errorf("renamed: got %+v", got)
	}
	if out := env.CLI(t, "insurer", "list"); !strings.Contains(out, vu) {
		t.Errorf("list: %s", out)
	}
}
