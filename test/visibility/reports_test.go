package visibility

import (
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestVisibility_ReportsAndSearch: the reports and the search (issue 24) cover what each
// credential of the matrix may see, no more: agent A's customer and contract count in the
// portfolio totals, appear in the cross-selling list and are found by GET /search exactly for
// the credentials that see A's rows; the admin's unowned customer exactly for those that see
// unowned rows; another company and the sandbox see neither. Catches a report or search that
// lifts the visibility (a company-wide aggregate leaks counts and premiums of colleagues'
// customers) or runs outside the pinned transaction.
func TestVisibility_ReportsAndSearch(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ofA := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Berichtsfall",
		"ownerId": w.agentA.ID})
	ofAdmin := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Chef", "lastName": "Berichtsfall"})
	ctA := w.createContract(t, w.co.Secret, ofA.ID, "GEHEIMRPT-1")
	ctAdmin := w.createContract(t, w.co.Secret, ofAdmin.ID, "CHEFRPT-1")
	seesAdmins := map[string]bool{"admin user key": true, "manager key": true, "company key": true,
		"admin user token": true, "company token": true}

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			var port struct {
				Totals struct {
					Contracts int `json:"contracts"`
					Contacts  int `json:"contacts"`
				} `json:"totals"`
			}
			r := w.env.Do(t, apitest.Request{Path: "/reports/portfolio", Key: key})
			if r.Status != 200 {
				t.Fatalf("portfolio: %d %s", r.Status, r.Body)
			}
			r.Decode(t, &port)
			want := 0
			if w.seesA[name] {
				want++
			}
			if seesAdmins[name] {
				want++
			}
			if port.Totals.Contracts != want || port.Totals.Contacts != want {
				t.Errorf("portfolio totals: %d contracts, %d contacts; want %d", port.Totals.Contracts, port.Totals.Contacts, want)
			}

			r = w.env.Do(t, apitest.Request{Path: "/reports/cross-selling?limit=50", Key: key})
			if r.Status != 200 {
				t.Fatalf("cross-selling: %d %s", r.Status, r.Body)
			}
			if got := strings.Contains(string(r.Body), ofA.ID); got != w.seesA[name] {
				t.Errorf("cross-selling lists A's customer: %v, want %v", got, w.seesA[name])
			}
			if got := strings.Contains(string(r.Body), ofAdmin.ID); got != seesAdmins[name] {
				t.Errorf("cross-selling lists the admin's customer: %v, want %v", got, seesAdmins[name])
			}

			for _, q := range []struct{ query, id string }{{"GEHEIMRPT-1", ctA.ID}, {"Geheim Berichtsfall", ofA.ID}} {
				r = w.env.Do(t, apitest.Request{Path: "/search?q=" + strings.ReplaceAll(q.query, " ", "+"), Key: key})
				if r.Status != 200 {
					t.Fatalf("search %q: %d %s", q.query, r.Status, r.Body)
				}
				if got := strings.Contains(string(r.Body), q.id); got != w.seesA[name] {
					t.Errorf("search %q finds A's record: %v, want %v", q.query, got, w.seesA[name])
				}
				if !w.seesA[name] && strings.Contains(string(r.Body), "GEHEIM") {
					t.Errorf("search %q names A's record: %s", q.query, r.Body)
				}
			}
			r = w.env.Do(t, apitest.Request{Path: "/search?q=CHEFRPT-1", Key: key})
			if got := strings.Contains(string(r.Body), ctAdmin.ID); r.Status != 200 || got != seesAdmins[name] {
				t.Errorf("search finds the admin's contract: %d %v, want %v", r.Status, got, seesAdmins[name])
			}
		})
	}
}
