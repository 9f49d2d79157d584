package commissions

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestEntries_DeletingABookedContract: DELETE /contracts/{id} and DELETE /contacts/{id} of a
// contract with matched commission entries answer 204 and leave the entries on their statement,
// unmatched, with the statement's matched count lowered. Catches the bug where the foreign
// key's ON DELETE SET NULL cleared contract and contact but not matched_by, the check
// tenant_commission_entries_matched refused the delete, and both deletions answered 409 conflict
// (an erasure retried for ever).
func TestEntries_DeletingABookedContract(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	ins := mustInsurer(t, env, co.Secret, "5501")
	byContract, _ := mustContract(t, env, co.Secret, ins.ID, "D-1", "")
	_, byContact := mustContract(t, env, co.Secret, ins.ID, "D-2", "")
	st := mustUpload(t, env, co.Secret, map[string]string{"format": "gdv_0400"}, gdvStatement(t, "5501",
		inkasso(t, "5501", "D-1", "40", "15012025", 10000),
		inkasso(t, "5501", "D-2", "40", "16012025", 5000)))
	if st.MatchedCount != 2 {
		t.Fatalf("statement %+v, want both entries matched", st)
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contracts/" + byContract, Key: co.Secret}); r.Status != 204 {
		t.Fatalf("delete contract: %d %s", r.Status, r.Body)
	}
	// Contacts are deleted with If-Match (their ETag from a GET).
	tag := env.Do(t, apitest.Request{Path: "/contacts/" + byContact, Key: co.Secret}).Header.Get("ETag")
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + byContact, Key: co.Secret,
		Header: map[string]string{"If-Match": tag}}); r.Status != 204 {
		t.Fatalf("delete contact: %d %s", r.Status, r.Body)
	}
	es := entries(t, env, co.Secret, "&statementId="+st.ID)
	if len(es) != 2 {
		t.Fatalf("entries after the deletes: %+v, want both still on the statement", es)
	}
	for _, e := range es {
		if e.ContractID != nil || e.ContactID != nil || e.MatchedBy != nil {
			t.Errorf("entry %s still matched: contract %v contact %v by %v", e.PolicyNumber, e.ContractID, e.ContactID, e.MatchedBy)
		}
	}
	got := apitest.Get[statement](t, env, co.Secret, "/commission-statements/"+st.ID)
	if got.MatchedCount != 0 || got.EntryCount != 2 {
		t.Errorf("statement after the deletes: entries %d matched %d, want 2 and 0", got.EntryCount, got.MatchedCount)
	}
}
