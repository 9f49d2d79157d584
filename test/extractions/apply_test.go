package extractions

import (
	"context"
	"database/sql"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestExtraction_Apply writes extracted fields to the target contract and to a new one, and
// covers apply's errors, visibility and isolation.
func TestExtraction_Apply(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, contact := company(t, env, 10)
	b, _ := company(t, env, 10)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	keyA, keyB := a.UserKey(t, agentA), a.UserKey(t, agentB)
	ofB := apitest.Create[idOnly](t, env, a.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Bea", "lastName": "B",
		"ownerId": agentB.ID.String()})
	ins := insurerID(t, env, a, "HanseMerkur Allgemeine Versicherung AG")
	target := apitest.Create[contract](t, env, a.Secret, "/contracts", map[string]any{"contactId": contact,
		"insurerId": ins, "policyNumber": "ALT-1", "type": "041", "status": "active"})
	doc := upload(t, env, a.Secret, contact, "police.pdf", "application/pdf", Policies[0].Render(t))
	toTarget := await(t, env, a.Secret, start(t, env, a.Secret, doc, map[string]any{"contractId": target.ID}).ID)
	// A second policy of the contact: a new contract (the first one's key is the target's after the first apply).
	rente := upload(t, env, a.Secret, contact, "rente.pdf", "application/pdf", Policies[2].Render(t))
	fresh := await(t, env, a.Secret, start(t, env, a.Secret, rente, map[string]any{}).ID)
	stutt := insurerID(t, env, a, "Stuttgarter Lebensversicherung a.G.")
	docB := upload(t, env, a.Secret, ofB.ID, "police.pdf", "application/pdf", Policies[1].Render(t))
	ofAgentB := await(t, env, a.Secret, start(t, env, a.Secret, docB, map[string]any{}).ID)
	for _, e := range []extraction{toTarget, fresh, ofAgentB} {
		if e.Status != "completed" {
			t.Fatalf("extraction %+v, want completed", e)
		}
	}
	apply := func(id string) string { return "/extractions/" + id + "/apply" }
	all := map[string]any{"fields": []string{"insurerId", "policyNumber", "type", "startDate", "endDate", "premium", "paymentFrequency"}}

	env.Run(t, []apitest.Case{
		// Catches: apply ignoring the chosen fields, or values not overriding the extracted ones.
		{Name: "chosen fields to the target contract", Key: a.Secret, Method: "POST", Path: apply(toTarget.ID),
			Body: map[string]any{"fields": []string{"policyNumber", "premium", "paymentFrequency", "startDate"},
				"values": map[string]any{"premium": "90.00"}}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var c contract
				r.Decode(t, &c)
				if c.ID != target.ID || c.PolicyNumber != "PHV-2026-004711" || c.Premium != "90.00" ||
					c.PaymentFrequency == nil || *c.PaymentFrequency != "yearly" || c.StartDate == nil || *c.StartDate != "2026-02-01" {
					t.Errorf("contract %+v", c)
				}
			}},
		// Catches: apply creating a contract for another contact, or without the contract events.
		{Name: "a new contract of the document's contact", Key: a.Secret, Method: "POST", Path: apply(fresh.ID), Body: all, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var c contract
				r.Decode(t, &c)
				if c.ContactID != contact || c.InsurerID != stutt || c.Type != "010" || c.Status != "active" || c.EndDate == nil ||
					*c.EndDate != "2060-12-01" {
					t.Errorf("contract %+v", c)
				}
				if n := apitest.EventsAbout(t, env, a.Secret, "contract.created", c.ID); n != 1 {
					t.Errorf("%d contract.created events, want 1", n)
				}
			}},
		// Catches: an empty field list accepted.
		{Name: "no fields is 422", Key: a.Secret, Method: "POST", Path: apply(fresh.ID), Body: map[string]any{"fields": []string{}},
			Status: 422, Check: apitest.FieldErrors("fields:required")},
		// Catches: unknown keys silently dropped.
		{Name: "unknown key is 422", Key: a.Secret, Method: "POST", Path: apply(fresh.ID), Body: map[string]any{"fields": []string{"colour"}},
			Status: 422, Check: apitest.FieldErrors("fields:unknown_field")},
		// Catches: the holder written to a contract (its contact is not a document's to change).
		{Name: "holder is not applicable", Key: a.Secret, Method: "POST", Path: apply(fresh.ID),
			Body: map[string]any{"fields": []string{"holder.name"}}, Status: 422, Check: apitest.FieldErrors("fields:not_applicable")},
		// Catches: a value for a field not chosen applied anyway.
		{Name: "value not in fields is 422", Key: a.Secret, Method: "POST", Path: apply(fresh.ID),
			Body: map[string]any{"fields": []string{"premium"}, "values": map[string]any{"type": "010"}}, Status: 422,
			Check: apitest.FieldErrors("values.type:not_in_fields")},
		// Catches: values bypassing the contracts validation.
		{Name: "invalid value is 422 naming the contract field", Key: a.Secret, Method: "POST", Path: apply(toTarget.ID),
			Body: map[string]any{"fields": []string{"premium"}, "values": map[string]any{"premium": "viel"}}, Status: 422,
			Check: apitest.FieldErrors("premium:invalid_decimal")},
		// Catches: a field the document did not hold written as null.
		{Name: "field neither extracted nor given is 422", Key: a.Secret, Method: "POST", Path: apply(fresh.ID),
			Body: map[string]any{"fields": []string{"mainRenewalDate"}}, Status: 422, Check: apitest.FieldErrors("fields:not_extracted")},
		// Catches: the route under the wrong scope.
		{Name: "documents:write only is 403", Key: a.KeyWithScopes(t, "documents:write"), Method: "POST", Path: apply(fresh.ID),
			Body: all, Status: 403},
		// Catches: isolation: another company's extraction applied or read.
		{Name: "other company apply is 404", Key: b.Secret, Method: "POST", Path: apply(fresh.ID), Body: all, Status: 404},
		{Name: "other company read is 404", Key: b.Secret, Method: "GET", Path: "/extractions/" + fresh.ID, Status: 404},
		// Catches: visibility: an agent reading or applying another agent's contact's extraction.
		{Name: "agent cannot read another agent's", Key: keyA, Method: "GET", Path: "/extractions/" + ofAgentB.ID, Status: 404},
		{Name: "agent cannot apply another agent's", Key: keyA, Method: "POST", Path: apply(ofAgentB.ID), Body: all, Status: 404},
		{Name: "the owning agent reads it", Key: keyB, Method: "GET", Path: "/extractions/" + ofAgentB.ID, Status: 200},
		{Name: "unknown extraction is 404", Key: a.Secret, Method: "GET", Path: "/extractions/" + uuid.NewString(), Status: 404},
		{Name: "malformed id is 400", Key: a.Secret, Method: "GET", Path: "/extractions/nope", Status: 400},
	})

	// Catches: apply overwriting a contract someone changed after the extraction read the
	// document (its version is compared, not ignored).
	env.InCompany(t, a.ID, func(ctx context.Context, db *ent.Client) error {
		return db.Contract.UpdateOneID(uuid.MustParse(target.ID)).SetPolicyNumber("GEAENDERT-1").Exec(ctx)
	})
	r := env.Do(t, apitest.Request{Method: "POST", Path: apply(toTarget.ID), Key: a.Secret,
		Body: map[string]any{"fields": []string{"premium"}}})
	if r.Status != 409 || r.Problem(t).Code != "contract_changed" {
		t.Errorf("apply after a change: %d %s, want 409 contract_changed", r.Status, r.Body)
	}
}

// TestExtraction_AutoApply: autoApply writes a new contract from the confident fields once the
// extraction completed. Catches autoApply stored but never acted on, or the contract not
// recorded on the extraction.
func TestExtraction_AutoApply(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co, contact := company(t, env, 5)
	doc := upload(t, env, co.Secret, contact, "hausrat.pdf", "application/pdf", Policies[1].Render(t))
	e := await(t, env, co.Secret, start(t, env, co.Secret, doc, map[string]any{"autoApply": true}).ID)
	if e.Status != "completed" || e.ContractID == nil {
		t.Fatalf("extraction %+v, want completed with a contract (error %v)", e, e.Error)
	}
	c := apitest.Get[contract](t, env, co.Secret, "/contracts/"+*e.ContractID)
	if c.PolicyNumber != "HR-55123456" || c.Type != "130" || c.ContactID != contact || c.Premium != "45.30" {
		t.Errorf("contract %+v", c)
	}
}

// TestExtraction_ContactDeleted: deleting the contact deletes its extractions with what they
// read (the tenant foreign key's cascade). Catches a contact's personal data (holder, policy
// number) left in extraction rows after the contact was deleted.
func TestExtraction_ContactDeleted(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co, contact := company(t, env, 5)
	doc := upload(t, env, co.Secret, contact, "police.pdf", "application/pdf", Policies[0].Render(t))
	e := await(t, env, co.Secret, start(t, env, co.Secret, doc, map[string]any{}).ID)
	if e.Status != "completed" || e.value("holder.name") == nil {
		t.Fatalf("extraction %+v, want completed with a holder", e)
	}
	etag := env.Do(t, apitest.Request{Path: "/contacts/" + contact, Key: co.Secret}).Header.Get("ETag")
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + contact, Key: co.Secret,
		Header: map[string]string{"If-Match": etag}}); r.Status != 204 {
		t.Fatalf("delete contact: %d %s", r.Status, r.Body)
	}
	// Read below the API as the owner role: the API cannot show a row of a deleted contact.
	var n int
	ctx := context.Background()
	if err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM contract_extractions WHERE id = $1`, e.ID).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d extraction rows after the contact's deletion, want 0", n)
	}
}

// TestExtraction_ContractDeleted: apply of an extraction whose target contract was deleted is
// 409 contract_gone. Catches apply quietly creating a new contract when the named one went
// (its foreign key sets contract_id to null).
func TestExtraction_ContractDeleted(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co, contact := company(t, env, 5)
	ins := insurerID(t, env, co, "HanseMerkur Allgemeine Versicherung AG")
	target := apitest.Create[contract](t, env, co.Secret, "/contracts", map[string]any{"contactId": contact,
		"insurerId": ins, "policyNumber": "WEG-1", "type": "130", "status": "active"})
	doc := upload(t, env, co.Secret, contact, "hausrat.pdf", "application/pdf", Policies[1].Render(t))
	e := await(t, env, co.Secret, start(t, env, co.Secret, doc, map[string]any{"contractId": target.ID}).ID)
	etag := env.Do(t, apitest.Request{Path: "/contracts/" + target.ID, Key: co.Secret}).Header.Get("ETag")
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contracts/" + target.ID, Key: co.Secret,
		Header: map[string]string{"If-Match": etag}}); r.Status != 204 {
		t.Fatalf("delete contract: %d %s", r.Status, r.Body)
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/extractions/" + e.ID + "/apply", Key: co.Secret,
		Body: map[string]any{"fields": []string{"policyNumber"}}})
	if r.Status != 409 || r.Problem(t).Code != "contract_gone" {
		t.Errorf("apply after the contract's deletion: %d %s, want 409 contract_gone", r.Status, r.Body)
	}
}
