package visibility

import (
	"bytes"
	"mime/multipart"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// commissionSteps are the commission area's scenarios of TestVisibility_EventsFollowResources
// (issue 24, docs/decisions/commissions.md): statements are the company's, so their events
// (created, processed, updated) reach every credential with commissions:read; an entry is as
// visible as its contract's contact, an unmatched one as its statement. The company key uploads
// a CSV statement of insurer 5501 with one entry of agent A's customer's contract and one that
// matches nothing; the river job parses it (the test's server works jobs); the statement is
// disputed; the unmatched entry gets a note (commission_entry.updated, company-wide) and is
// then linked to a contract of agent B's customer (commission_entry.updated, B's and not A's).
func (w *world) commissionSteps(t *testing.T, l *eventLedger) []differ {
	t.Helper()
	co := w.co.Secret
	insurer := w.insurer(t, co)
	tag := uuid.NewString()[:8]
	polA, polB, polNone := "PA"+tag, "PB"+tag, "PX"+tag
	var cA, cB, ctB, st string
	l.step(t, nil, func() { // contacts and contracts of A's and B's customers
		cA = idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Karl", "lastName": "Kurtage",
			"ownerId": w.agentA.ID.String()}, 201))
		cB = idOf(t, w.do(t, co, "POST", "/contacts", map[string]any{"type": "private", "firstName": "Klara", "lastName": "Kurtage",
			"ownerId": w.agentB.ID.String()}, 201))
		w.createContract(t, co, cA, polA)
		ctB = w.createContract(t, co, cB, polB).ID
	})
	l.step(t, nil, func() { // commission_statement.created, .processed (the job's)
		csv := "Vertragsnummer;Buchungsdatum;Buchungsart;Provision;Buchungstext\n" +
			polA + ";31.01.2026;Abschlussprovision;120,00;AP\n" +
			polNone + ";31.01.2026;Bestandsprovision;7,50;BP\n"
		body, ct := commissionUpload(t, map[string]string{"format": "csv", "insurerId": insurer}, []byte(csv))
		r := w.env.Do(t, apitest.Request{Method: "POST", Path: "/commission-statements", Key: co, Body: body,
			Header: map[string]string{"Content-Type": ct}})
		if r.Status != 202 {
			t.Fatalf("upload the statement: %d %s", r.Status, r.Body)
		}
		st = idOf(t, r)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			var s struct {
				ImportStatus string
				EntryCount   int
				MatchedCount int
			}
			w.do(t, co, "GET", "/commission-statements/"+st, nil, 200).Decode(t, &s)
			if s.ImportStatus == "processed" {
				if s.EntryCount != 2 || s.MatchedCount != 1 {
					t.Fatalf("the statement: %+v, want 2 entries, 1 matched", s)
				}
				break
			}
			if s.ImportStatus == "failed" || time.Now().After(deadline) {
				t.Fatalf("the statement is %s", s.ImportStatus)
			}
		}
	})
	var es struct {
		Data []struct {
			ID, PolicyNumber string
			ContractID       *string
		}
	}
	w.do(t, co, "GET", "/commission-entries?limit=100&statementId="+st, nil, 200).Decode(t, &es)
	var matched, open string
	for _, e := range es.Data {
		switch {
		case e.PolicyNumber == polA && e.ContractID != nil:
			matched = e.ID
		case e.PolicyNumber == polNone && e.ContractID == nil:
			open = e.ID
		}
	}
	if matched == "" || open == "" {
		t.Fatalf("the statement's entries: %+v", es.Data)
	}
	l.step(t, nil, func() { // commission_statement.updated; commission_entry.updated of the unmatched entry
		w.do(t, co, "PATCH", "/commission-statements/"+st, map[string]any{"status": "disputed", "note": "BP fehlt"}, 200)
		w.do(t, co, "PATCH", "/commission-entries/"+open, map[string]any{"note": "Vertrag suchen"}, 200)
	})
	l.step(t, nil, func() { // commission_entry.updated: linked to B's customer's contract
		w.do(t, co, "PATCH", "/commission-entries/"+open, map[string]any{"contractId": ctB, "note": "Vertrag gefunden"}, 200)
	})
	// The entry's two events share its id, and a differ holds for every event of the id: the
	// events are told apart by their data's contactId here.
	want := map[bool]map[string]bool{ // linked -> credential -> reads the entry
		false: {"agent A key": true, "agent B key": true, "agent A token": true, "other company's key": false},
		true:  {"agent B key": true, "agent B token": true, "manager key": true, "agent A key": false, "agent A token": false},
	}
	found := map[bool]bool{}
	for id, e := range l.seen {
		if e.Type != "commission_entry.updated" || e.Data["id"] != open {
			continue
		}
		linked := e.Data["contactId"] == cB
		found[linked] = true
		for cred, sees := range want[linked] {
			if l.sees[id][cred] != sees {
				t.Errorf("commission_entry.updated of %s (linked %v): %s reads the entry: %v, the scenario wants %v", open, linked, cred, l.sees[id][cred], sees)
			}
		}
	}
	if !found[false] || !found[true] {
		t.Errorf("commission_entry.updated of %s: the unlinked and the linked event, got %v", open, found)
	}
	return []differ{
		{"commission_statement.created", st, "agent A key", true}, {"commission_statement.created", st, "agent B token", true},
		{"commission_statement.created", st, "other company's key", false}, {"commission_statement.created", st, "sandbox key", false},
		{"commission_statement.processed", st, "agent B key", true}, {"commission_statement.processed", st, "company token", true},
		{"commission_statement.updated", st, "agent A token", true}, {"commission_statement.updated", st, "agent A's sandbox key", false},
	}
}

// commissionUpload is a multipart body of fields and the statement file.
func commissionUpload(t *testing.T, fields map[string]string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("file", "abrechnung.csv")
	if err == nil {
		_, err = fw.Write(content)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}
