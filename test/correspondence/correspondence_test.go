// Package correspondence tests the insurer correspondence: the transaction-type catalog,
// correspondence cases (one per insurer, prefilled), their state rules, visibility, isolation
// and sending.
package correspondence

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/correspondencecase"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type ccase struct {
	ID                    string         `json:"id"`
	ContactID             string         `json:"contactId"`
	InsurerID             string         `json:"insurerId"`
	InsurerName           string         `json:"insurerName"`
	ContractIDs           []string       `json:"contractIds"`
	TransactionType       string         `json:"transactionType"`
	Subject               string         `json:"subject"`
	Body                  string         `json:"body"`
	RecipientEmail        *string        `json:"recipientEmail"`
	FormData              map[string]any `json:"formData"`
	Status                string         `json:"status"`
	MailboxID             *string        `json:"mailboxId"`
	EmailID               *string        `json:"emailId"`
	ThreadID              *string        `json:"threadId"`
	AttachmentDocumentIDs []string       `json:"attachmentDocumentIds"`
	SentAt                *string        `json:"sentAt"`
}

type created struct {
	Data []ccase `json:"data"`
}

type insurer struct {
	ID, VUNumber, Name string
}

// vuSeq hands each test its own VU numbers: the insurer catalog is platform data shared by the
// package's parallel tests.
var vuSeq atomic.Int64

// newInsurer adds an insurer to the catalog (the operator's SetInsurer) and returns it as the
// API lists it.
func newInsurer(t *testing.T, env *apitest.Env, key, name string) insurer {
	t.Helper()
	vu := fmt.Sprintf("7%04d", vuSeq.Add(1))
	if _, err := env.Ops.SetInsurer(context.Background(), vu, name); err != nil {
		t.Fatal(err)
	}
	r := env.Do(t, apitest.Request{Path: "/insurers?vuNumber=" + vu, Key: key})
	var body struct{ Data []insurer }
	r.Decode(t, &body)
	if r.Status != 200 || len(body.Data) != 1 {
		t.Fatalf("insurer %s: %d %s", vu, r.Status, r.Body)
	}
	return body.Data[0]
}

// newContact stores a private contact with an address and a date of birth (owner optional).
func newContact(t *testing.T, env *apitest.Env, company uuid.UUID, last string, owner *uuid.UUID) string {
	t.Helper()
	var id string
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName("Erika").SetLastName(last).SetNillableOwnerID(owner).
			SetGroups(schematype.ContactGroups{"address": {"street": "Alter Weg", "houseNumber": "3", "zipCode": "10115", "city": "Berlin"},
				"personal": {"dateOfBirth": "1980-02-01"}}).Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

// newContract creates a contract through the API.
func newContract(t *testing.T, env *apitest.Env, key, contact, insurerID, policy, typ string) string {
	t.Helper()
	c := apitest.Create[struct{ ID string }](t, env, key, "/contracts", map[string]any{"contactId": contact,
		"insurerId": insurerID, "policyNumber": policy, "type": typ, "status": "active"})
	return c.ID
}

func createCases(t *testing.T, env *apitest.Env, key string, body any) []ccase {
	t.Helper()
	return apitest.Create[created](t, env, key, "/correspondence-cases", body).Data
}

func get(t *testing.T, env *apitest.Env, key, id string) ccase {
	t.Helper()
	return apitest.Get[ccase](t, env, key, "/correspondence-cases/"+id)
}

func list(t *testing.T, env *apitest.Env, key, query string) []ccase {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/correspondence-cases?" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("list cases: %d %s", r.Status, r.Body)
	}
	var p apitest.Page[ccase]
	r.Decode(t, &p)
	return p.Data
}

func ids(cs []ccase) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	slices.Sort(out)
	return out
}

type event struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

func events(t *testing.T, env *apitest.Env, key, types string) []event {
	t.Helper()
	var p apitest.Page[event]
	r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=" + types, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &p)
	return p.Data
}

// eventsAbout counts the events of type typ whose data is the case id.
func eventsAbout(t *testing.T, env *apitest.Env, key, typ, id string) int {
	t.Helper()
	n := 0
	for _, e := range events(t, env, key, typ) {
		if e.Data["id"] == id {
			n++
		}
	}
	return n
}

// markSent puts a case in status as if it had been sent (for the state rules that do not
// depend on the mail machinery).
func markSent(t *testing.T, env *apitest.Env, company uuid.UUID, id, status string) {
	t.Helper()
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		return db.CorrespondenceCase.UpdateOneID(uuid.MustParse(id)).SetStatus(correspondencecase.Status(status)).Exec(ctx)
	})
}

// fixture is a company with a contact, an insurer with a correspondence address and one
// without, and contracts with both.
type fixture struct {
	co                    *apitest.Company
	contact               string
	alpha, beta           insurer // alpha has a correspondence address
	hr1, hr2, kv1, kfz    string  // contracts: hr1, hr2 and kfz with alpha, kv1 with beta
	alphaMail             string
	otherContact, foreign string // a contract of another contact; one of another company
}

func newFixture(t *testing.T, env *apitest.Env) *fixture {
	t.Helper()
	f := &fixture{co: env.NewCompany(t)}
	f.alpha = newInsurer(t, env, f.co.Secret, "Alpha Versicherung AG")
	f.beta = newInsurer(t, env, f.co.Secret, "Beta Leben AG")
	f.alphaMail = "vertrag-" + f.alpha.VUNumber + "@alpha.example"
	// The operator command sets the routing address (the CLI, as an operator would).
	if out := env.CLI(t, "insurer", "set-email", "--vu", f.alpha.VUNumber, "--email", f.alphaMail); !strings.Contains(out, f.alphaMail) {
		t.Fatalf("set-email printed %q", out)
	}
	f.contact = newContact(t, env, f.co.ID, "Mustermann", nil)
	f.hr1 = newContract(t, env, f.co.Secret, f.contact, f.alpha.ID, "HR-"+f.alpha.VUNumber+"-1", "130")
	f.hr2 = newContract(t, env, f.co.Secret, f.contact, f.alpha.ID, "HR-"+f.alpha.VUNumber+"-2", "140")
	f.kv1 = newContract(t, env, f.co.Secret, f.contact, f.beta.ID, "LV-"+f.beta.VUNumber+"-1", "010")
	f.kfz = newContract(t, env, f.co.Secret, f.contact, f.alpha.ID, "KFZ-"+f.alpha.VUNumber, "051")
	other := newContact(t, env, f.co.ID, "Andere", nil)
	f.otherContact = newContract(t, env, f.co.Secret, other, f.alpha.ID, "HR-OTHER-"+f.alpha.VUNumber, "130")
	b := env.NewCompany(t)
	bContact := newContact(t, env, b.ID, "Fremd", nil)
	f.foreign = newContract(t, env, b.Secret, bContact, f.alpha.ID, "HR-B-"+f.alpha.VUNumber, "130")
	return f
}

func (f *fixture) addressChange(contracts ...string) map[string]any {
	return map[string]any{"contactId": f.contact, "contractIds": append([]string{}, contracts...), "transactionType": "address_change",
		"formData": map[string]any{"street": "Neue Straße 5", "zipCode": "20095", "city": "Hamburg", "validFrom": "2026-12-01"}}
}

// TestCorrespondence_Catalog: the catalog's shape and language. Catches a missing or renamed
// transaction type, a form field without its type, labels that ignore Accept-Language, and a
// route without its scope.
func TestCorrespondence_Catalog(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	type field struct {
		Key, Label, Type string
		Required         bool
		MaxLength        *int
		Options          []struct{ Value, Label string }
	}
	type typ struct {
		Key, Label, Description string
		FormFields              []field
		ApplicableContractTypes []string
	}
	read := func(t *testing.T, r *apitest.Response) map[string]typ {
		var body struct{ Data []typ }
		r.Decode(t, &body)
		out := map[string]typ{}
		for _, x := range body.Data {
			if x.Label == "" || x.Description == "" || x.FormFields == nil || x.ApplicableContractTypes == nil {
				t.Errorf("incomplete type %+v", x)
			}
			out[x.Key] = x
		}
		return out
	}
	env.Run(t, []apitest.Case{
		{Name: "German by default", Key: a.Secret, Path: "/correspondence/transaction-types", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				types := read(t, r)
				for _, k := range []string{"address_change", "bank_details_change", "termination", "document_request",
					"name_change", "payment_frequency_change", "broker_mandate", "contract_change"} {
					if _, ok := types[k]; !ok {
						t.Errorf("type %s missing", k)
					}
				}
				term := types["termination"]
				if term.Label != "Kündigung" || len(term.ApplicableContractTypes) != 0 {
					t.Errorf("termination %+v", term)
				}
				i := slices.IndexFunc(term.FormFields, func(f field) bool { return f.Key == "terminationDate" })
				j := slices.IndexFunc(term.FormFields, func(f field) bool { return f.Key == "reason" })
				if i < 0 || term.FormFields[i].Type != "date" || j < 0 || term.FormFields[j].Type != "string" ||
					term.FormFields[j].MaxLength == nil || *term.FormFields[j].MaxLength != 1000 {
					t.Errorf("termination fields %+v", term.FormFields)
				}
				bank := types["bank_details_change"]
				if k := slices.IndexFunc(bank.FormFields, func(f field) bool { return f.Key == "iban" }); k < 0 ||
					bank.FormFields[k].Type != "iban" || !bank.FormFields[k].Required {
					t.Errorf("bank fields %+v", bank.FormFields)
				}
				if !slices.Contains(types["vehicle_change"].ApplicableContractTypes, "051") {
					t.Errorf("vehicle_change applies to %v", types["vehicle_change"].ApplicableContractTypes)
				}
				pf := types["payment_frequency_change"].FormFields[0]
				if len(pf.Options) != 4 || pf.Options[0].Label != "monatlich" {
					t.Errorf("payment frequency options %+v", pf.Options)
				}
				if r.Header.Get("Content-Language") != "de" {
					t.Errorf("Content-Language %q", r.Header.Get("Content-Language"))
				}
			}},
		{Name: "English on request", Key: a.Secret, Path: "/correspondence/transaction-types", Status: 200,
			Header: map[string]string{"Accept-Language": "en-GB,en;q=0.9"},
			Check: func(t *testing.T, r *apitest.Response) {
				types := read(t, r)
				if types["termination"].Label != "Contract termination" || types["payment_frequency_change"].FormFields[0].Options[0].Label != "monthly" {
					t.Errorf("termination %+v", types["termination"])
				}
				if r.Header.Get("Content-Language") != "en" {
					t.Errorf("Content-Language %q", r.Header.Get("Content-Language"))
				}
			}},
		{Name: "no key", Path: "/correspondence/transaction-types", Status: 401, Problem: "missing_credential"},
		{Name: "scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: "/correspondence/transaction-types",
			Status: 403, Problem: "insufficient_scope"},
		{Name: "write implies read", Key: a.KeyWithScopes(t, "correspondence:write"), Path: "/correspondence/transaction-types", Status: 200},
	})
}

// TestCorrespondence_Create: one case per insurer, prefilled. Catches cases not split by
// insurer, a letter without the policy numbers or the form data, a recipient not routed from
// the insurer's correspondence address (or invented where none is known), a missing event.
func TestCorrespondence_Create(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	admin := env.NewUser(t, f.co, "admin")
	key := f.co.UserKey(t, admin, "correspondence:write", "events:read")
	body := f.addressChange(f.hr1, f.kv1, f.hr2)
	cases := createCases(t, env, key, body)
	if len(cases) != 2 {
		t.Fatalf("%d cases, want 2 (one per insurer): %+v", len(cases), cases)
	}
	alpha, beta := cases[0], cases[1] // the order of the first contract of each insurer
	if alpha.InsurerID != f.alpha.ID || alpha.InsurerName != "Alpha Versicherung AG" ||
		!slices.Equal(alpha.ContractIDs, []string{f.hr1, f.hr2}) || alpha.RecipientEmail == nil || *alpha.RecipientEmail != f.alphaMail {
		t.Errorf("alpha case %+v", alpha)
	}
	if beta.InsurerID != f.beta.ID || !slices.Equal(beta.ContractIDs, []string{f.kv1}) || beta.RecipientEmail != nil {
		t.Errorf("beta case %+v (no correspondence address: recipient null)", beta)
	}
	for _, c := range cases {
		if c.Status != "draft" || c.ContactID != f.contact || c.TransactionType != "address_change" || c.EmailID != nil ||
			c.SentAt != nil || len(c.AttachmentDocumentIDs) != 0 || c.FormData["city"] != "Hamburg" {
			t.Errorf("case %+v", c)
		}
		for _, want := range []string{"Erika Mustermann", "Neue Straße 5", "20095 Hamburg", "01.12.2026", "01.02.1980",
			"Alter Weg 3, 10115 Berlin", "Test admin", "Makler"} {
			if !strings.Contains(c.Body, want) {
				t.Errorf("body of %s lacks %q:\n%s", c.InsurerName, want, c.Body)
			}
		}
		if !strings.HasPrefix(c.Subject, "Adressänderung – Erika Mustermann – Vers.-Nr. ") {
			t.Errorf("subject %q", c.Subject)
		}
	}
	for _, p := range []string{"HR-" + f.alpha.VUNumber + "-1", "HR-" + f.alpha.VUNumber + "-2"} {
		if !strings.Contains(alpha.Subject, p) || !strings.Contains(alpha.Body, p) || strings.Contains(beta.Body, p) {
			t.Errorf("policy %s: alpha subject %q; only alpha's letter names it", p, alpha.Subject)
		}
	}
	if lv := "LV-" + f.beta.VUNumber + "-1"; !strings.Contains(beta.Body, lv) || strings.Contains(alpha.Body, lv) {
		t.Errorf("beta's letter names %s, alpha's does not:\n%s", lv, beta.Body)
	}
	if got := get(t, env, f.co.Secret, alpha.ID); got.Body != alpha.Body || got.InsurerName != alpha.InsurerName {
		t.Errorf("read back %+v", got)
	}
	for _, c := range cases {
		if n := eventsAbout(t, env, key, "correspondence_case.created", c.ID); n != 1 {
			t.Errorf("%d correspondence_case.created for %s, want 1", n, c.ID)
		}
	}

	bad := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for a, b := range m {
			out[a] = b
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	form := func(kv ...any) map[string]any {
		m := map[string]any{"street": "Neue Straße 5", "zipCode": "20095", "city": "Hamburg", "validFrom": "2026-12-01"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return bad(f.addressChange(f.hr1), "formData", m)
	}
	post := func(name string, body any, check func(*testing.T, *apitest.Response)) apitest.Case {
		return apitest.Case{Name: name, Key: f.co.Secret, Method: "POST", Path: "/correspondence-cases", Body: body,
			Status: 422, Problem: "validation_failed", Check: check}
	}
	env.Run(t, []apitest.Case{
		post("contractIds missing", bad(f.addressChange(), "contractIds", nil), apitest.FieldErrors("contractIds:required")),
		post("contractIds empty", f.addressChange(), apitest.FieldErrors("contractIds:too_short")),
		post("everything missing", `{}`, apitest.FieldErrors("contactId:required", "contractIds:required", "transactionType:required")),
		post("bad ids, a repeat", bad(f.addressChange("x", f.hr1, f.hr1), "contactId", "y"),
			apitest.FieldErrors("contactId:invalid_uuid", "contractIds.0:invalid_uuid", "contractIds.2:duplicate")),
		post("a contract of another contact and one of another company, by index", f.addressChange(f.hr1, f.otherContact, f.foreign),
			apitest.FieldErrors("contractIds.1:unknown_contract", "contractIds.2:unknown_contract")),
		post("unknown contract", f.addressChange(uuid.NewString()), apitest.FieldErrors("contractIds.0:unknown_contract")),
		post("unknown contact", bad(f.addressChange(f.hr1), "contactId", uuid.NewString()), apitest.FieldErrors("contactId:unknown_contact")),
		post("unknown transaction type", bad(f.addressChange(f.hr1), "transactionType", "lottery"),
			apitest.FieldErrors("transactionType:unknown_transaction_type")),
		post("required form field missing, null and blank", form("street", nil, "city", nil, "zipCode", "  "),
			apitest.FieldErrors("formData.street:required", "formData.zipCode:required", "formData.city:required")),
		post("form values of the wrong type and unknown keys", form("city", 5, "validFrom", "1.12.2026", "planet", "Mars", "zipCode", true),
			apitest.FieldErrors("formData.planet:unknown_field", "formData.zipCode:invalid_type", "formData.city:invalid_type",
				"formData.validFrom:invalid_date")),
		post("form string too long", form("street", strings.Repeat("x", 201)), apitest.FieldErrors("formData.street:too_long")),
		post("bad IBAN and option", map[string]any{"contactId": f.contact, "contractIds": []string{f.hr1}, "transactionType": "bank_details_change",
			"formData": map[string]any{"accountHolder": "Erika", "iban": "DE00123"}}, apitest.FieldErrors("formData.iban:invalid_iban")),
		post("payment frequency not an option", map[string]any{"contactId": f.contact, "contractIds": []string{f.hr1},
			"transactionType": "payment_frequency_change", "formData": map[string]any{"paymentFrequency": "daily"}},
			apitest.FieldErrors("formData.paymentFrequency:invalid_enum")),
		post("type not applicable to a contract", map[string]any{"contactId": f.contact, "contractIds": []string{f.kfz, f.hr1},
			"transactionType": "vehicle_change", "formData": map[string]any{"changeDate": "2026-12-01", "licensePlate": "B-XY 1"}},
			apitest.FieldErrors("contractIds.1:not_applicable")),
		post("formData not an object", bad(f.addressChange(f.hr1), "formData", []string{"x"}), apitest.FieldErrors("formData:invalid_type")),
		{Name: "unknown member", Key: f.co.Secret, Method: "POST", Path: "/correspondence-cases", Status: 422,
			Body: bad(f.addressChange(f.hr1), "status", "sent"), Check: apitest.FieldErrors("status:unknown_field")},
		{Name: "malformed JSON", Key: f.co.Secret, Method: "POST", Path: "/correspondence-cases", Body: `{"contactId":`,
			Status: 400, Problem: "malformed_json"},
		{Name: "no key", Method: "POST", Path: "/correspondence-cases", Body: f.addressChange(f.hr1), Status: 401, Problem: "missing_credential"},
		{Name: "read scope only", Key: f.co.KeyWithScopes(t, "correspondence:read"), Method: "POST", Path: "/correspondence-cases",
			Body: f.addressChange(f.hr1), Status: 403, Problem: "insufficient_scope"},
	})
	// Nothing half-written: the refused requests made no case.
	if got := list(t, env, f.co.Secret, "limit=200"); len(got) != 2 {
		t.Errorf("%d cases, want 2", len(got))
	}
	// A type that applies: vehicle change on the motor contract, routed to alpha.
	v := createCases(t, env, f.co.Secret, map[string]any{"contactId": f.contact, "contractIds": []string{f.kfz},
		"transactionType": "vehicle_change", "formData": map[string]any{"changeDate": "2026-12-01", "licensePlate": "B-XY 1", "vin": nil}})
	if len(v) != 1 || !strings.Contains(v[0].Body, "B-XY 1") || !strings.Contains(v[0].Body, "KFZ-"+f.alpha.VUNumber) {
		t.Errorf("vehicle change %+v", v)
	}
	if _, ok := v[0].FormData["vin"]; ok {
		t.Errorf("a null form value is stored: %v", v[0].FormData)
	}
}

// TestCorrespondence_CreateIdempotent: a replayed POST answers the stored cases and makes no
// new ones. Catches the route missing the idempotency middleware.
func TestCorrespondence_CreateIdempotent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newFixture(t, env)
	h := map[string]string{"Idempotency-Key": "cc-once"}
	r1 := env.Do(t, apitest.Request{Method: "POST", Path: "/correspondence-cases", Key: f.co.Secret, Body: f.addressChange(f.hr1, f.kv1), Header: h})
	r2 := env.Do(t, apitest.Request{Method: "POST", Path: "/correspondence-cases", Key: f.co.Secret, Body: f.addressChange(f.hr1, f.kv1), Header: h})
	if r1.Status != 201 || r2.Status != 201 || string(r1.Body) != string(r2.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("first %d, second %d %q", r1.Status, r2.Status, r2.Header.Get("Idempotent-Replayed"))
	}
	env.Run(t, []apitest.Case{{Name: "the key again with another body", Key: f.co.Secret, Method: "POST", Path: "/correspondence-cases",
		Body: f.addressChange(f.hr1), Header: h, Status: 422, Problem: "idempotency_key_reused"}})
	if n := len(list(t, env, f.co.Secret, "")); n != 2 {
		t.Errorf("%d cases, want 2", n)
	}
}
