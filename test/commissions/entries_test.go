package commissions

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestEntries_ListLinkAndVisibility: filters, linking by hand and unlinking (matchedCount
// follows), the 422s of a contract the caller cannot see or of another insurer, and an
// agent who sees the entries of its own contacts' contracts and the unmatched ones only.
func TestEntries_ListLinkAndVisibility(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	keyA, keyB := a.UserKey(t, agentA), a.UserKey(t, agentB)
	ins, other := mustInsurer(t, env, a.Secret, "5501"), mustInsurer(t, env, a.Secret, "4711")
	ofA, contactA := mustContract(t, env, a.Secret, ins.ID, "A-1", agentA.ID.String())
	spare, _ := mustContract(t, env, a.Secret, ins.ID, "A-2", agentA.ID.String())
	foreignInsurer, _ := mustContract(t, env, a.Secret, other.ID, "O-1", agentA.ID.String())
	ofB, _ := mustContract(t, env, a.Secret, ins.ID, "B-1", agentB.ID.String())
	bContract, _ := mustContract(t, env, b.Secret, mustInsurer(t, env, b.Secret, "5501").ID, "X-1", "")
	st := mustUpload(t, env, a.Secret, map[string]string{"format": "gdv_0400"}, gdvStatement(t, "5501",
		inkasso(t, "5501", "A-1", "40", "15012025", 10000),
		inkasso(t, "5501", "B-1", "41", "20012025", -2500),
		inkasso(t, "5501", "NIEMAND", "40", "25012025", 700)))
	if st.MatchedCount != 2 {
		t.Fatalf("statement %+v", st)
	}
	byPolicy := map[string]entry{}
	for _, e := range entries(t, env, a.Secret, "&statementId="+st.ID) {
		byPolicy[e.PolicyNumber] = e
	}
	unmatched, eB := byPolicy["NIEMAND"], byPolicy["B-1"]

	list := func(name, key, query string, want ...string) apitest.Case {
		return apitest.Case{Name: name, Key: key, Path: "/commission-entries?statementId=" + st.ID + query, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[entry]
				r.Decode(t, &p)
				var got []string
				for _, e := range p.Data {
					got = append(got, e.PolicyNumber)
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("listed %v, want %v", got, want)
				}
			}}
	}
	env.Run(t, []apitest.Case{
		list("all of the statement", a.Secret, "", "A-1", "B-1", "NIEMAND"),
		list("unmatched", a.Secret, "&matched=false", "NIEMAND"),
		list("matched", a.Secret, "&matched=true", "A-1", "B-1"),
		list("by type", a.Secret, "&type=cancellation", "B-1"),
		list("by contact", a.Secret, "&contactId="+contactA, "A-1"),
		list("by contract", a.Secret, "&contractId="+ofB, "B-1"),
		list("booked window inclusive", a.Secret, "&bookedFrom=2025-01-20&bookedTo=2025-01-25", "B-1", "NIEMAND"),
		// Visibility: the agent sees its contact's entry and the unmatched one, not B's.
		list("agent A sees its own and the unmatched", keyA, "", "A-1", "NIEMAND"),
		list("agent B sees its own and the unmatched", keyB, "", "B-1", "NIEMAND"),
		list("other company sees none", b.Secret, ""),
		{Name: "filters malformed", Key: a.Secret, Path: "/commission-entries?contactId=x&type=bonus&matched=yes&bookedFrom=2025-02-30",
			Status: 422, Check: apitest.FieldErrorSet("contactId:invalid_uuid", "type:invalid_enum", "matched:invalid_boolean",
				"bookedFrom:invalid_date")},
		{Name: "booked window reversed", Key: a.Secret, Path: "/commission-entries?bookedFrom=2025-02-01&bookedTo=2025-01-01",
			Status: 422, Check: apitest.FieldErrors("bookedTo:invalid_range")},
		{Name: "read scope missing", Key: a.KeyWithScopes(t, "contracts:read"), Path: "/commission-entries", Status: 403},
	})

	path := "/commission-entries/" + unmatched.ID
	patch := func(name, key, p, body string, status int, check func(*testing.T, *apitest.Response)) apitest.Case {
		return apitest.Case{Name: name, Key: key, Method: "PATCH", Path: p, Body: body, Status: status, Check: check}
	}
	linked := func(contract, by string) func(*testing.T, *apitest.Response) {
		return func(t *testing.T, r *apitest.Response) {
			var e entry
			r.Decode(t, &e)
			if contract == "" {
				if e.ContractID != nil || e.ContactID != nil || e.MatchedBy != nil {
					t.Errorf("still linked: %+v", e)
				}
				return
			}
			if e.ContractID == nil || *e.ContractID != contract || e.MatchedBy == nil || *e.MatchedBy != by || e.ContactID == nil {
				t.Errorf("entry %+v, want linked to %s by %s", e, contract, by)
			}
		}
	}
	env.Run(t, []apitest.Case{
		patch("contract id malformed", a.Secret, path, `{"contractId":"x"}`, 422, apitest.FieldErrors("contractId:invalid_uuid")),
		patch("contract unknown", a.Secret, path, `{"contractId":"`+uuid.NewString()+`"}`, 422, apitest.FieldErrors("contractId:unknown_contract")),
		patch("another company's contract", a.Secret, path, `{"contractId":"`+bContract+`"}`, 422, apitest.FieldErrors("contractId:unknown_contract")),
		patch("a contract of another insurer", a.Secret, path, `{"contractId":"`+foreignInsurer+`"}`, 422,
			apitest.FieldErrors("contractId:insurer_mismatch")),
		// The role model gives agents commissions:read only: linking is the office's work.
		patch("an agent may not link", keyA, path, `{"contractId":"`+ofA+`"}`, 403, nil),
		patch("other company", b.Secret, path, `{"note":"x"}`, 404, nil),
		patch("malformed id", a.Secret, "/commission-entries/x", `{"note":"x"}`, 400, nil),
		patch("note too long", a.Secret, path, `{"note":"`+strings.Repeat("x", 2001)+`"}`, 422, apitest.FieldErrors("note:too_long")),
		patch("server-owned field", a.Secret, path, `{"amount":"1.00"}`, 422, nil),
		patch("write scope missing", a.KeyWithScopes(t, "commissions:read"), path, `{"note":"x"}`, 403, nil),
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"note":"x"}`,
			Header: map[string]string{"If-Match": `"999"`}, Status: 412},
		patch("linked by hand", a.Secret, path, `{"contractId":"`+spare+`","note":"per Telefon geklärt"}`, 200, linked(spare, "manual")),
		list("agent B no longer sees the linked one", keyB, "", "B-1"),
		list("agent A sees it now", keyA, "", "A-1", "NIEMAND"),
	})
	if got := apitest.Get[statement](t, env, a.Secret, "/commission-statements/"+st.ID); got.MatchedCount != 3 {
		t.Errorf("matchedCount %d after linking, want 3", got.MatchedCount)
	}
	if apitest.EventsAbout(t, env, keyA, "commission_entry.updated", unmatched.ID) != 1 ||
		apitest.EventsAbout(t, env, keyB, "commission_entry.updated", unmatched.ID) != 0 {
		t.Error("commission_entry.updated: want it visible to agent A (the contact's owner) only")
	}
	env.Run(t, []apitest.Case{
		patch("unlink", a.Secret, path, `{"contractId":null}`, 200, linked("", "")),
		patch("same again changes nothing", a.Secret, path, `{"contractId":null}`, 200, linked("", "")),
		patch("relink the auto-matched one", a.Secret, "/commission-entries/"+eB.ID, `{"contractId":"`+spare+`"}`, 200, linked(spare, "manual")),
	})
	if got := apitest.Get[statement](t, env, a.Secret, "/commission-statements/"+st.ID); got.MatchedCount != 2 {
		t.Errorf("matchedCount %d after unlinking one and relinking another, want 2", got.MatchedCount)
	}
}
