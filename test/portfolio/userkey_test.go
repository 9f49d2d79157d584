package portfolio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestPortfolio_UserBoundKeys: the admin's and a manager's own keys (visibility all) upload
// and commit a transfer as a company key does (the transfer's transactions pin their user, as
// requests do; they answered 500 before); an agent is refused with the documented 403.
func TestPortfolio_UserBoundKeys(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	content, err := os.ReadFile(filepath.Join(samples, "musterdatei_041222.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{"format": "gdv_vu_vermittler", "source": "bestand"}
	manager := env.NewUser(t, co, "manager")
	keys := []struct{ name, key string }{{"admin", co.UserKey(t, co.Admin)}, {"manager", co.UserKey(t, manager)}}
	for i, k := range keys {
		t.Run(k.name, func(t *testing.T) {
			r := upload(t, env, k.key, fields, "m.txt", content)
			if r.Status != 202 {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			var tr transfer
			r.Decode(t, &tr)
			tr = await(t, env, k.key, tr.ID, "validated", "failed")
			if tr.Status != "validated" {
				t.Fatalf("validation: %+v", tr)
			}
			r = env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers/" + tr.ID + "/commit", Key: k.key})
			if r.Status != 202 {
				t.Fatalf("commit: %d %s", r.Status, r.Body)
			}
			tr = await(t, env, k.key, tr.ID, "committed")
			// The second import of the same file changes nothing.
			if want := int64(14); i == 0 && tr.Progress.Created != want {
				t.Errorf("created %d contracts, want %d", tr.Progress.Created, want)
			}
		})
	}
	agent := env.NewUser(t, co, "agent")
	r := upload(t, env, co.UserKey(t, agent), fields, "m.txt", content)
	if r.Status != 403 {
		t.Fatalf("agent upload: %d %s, want 403", r.Status, r.Body)
	}
}

// TestPortfolio_ImportedContactsAreSearchable: the policyholders a transfer creates are found by
// q, with the company key, the admin's key and the key of the agent the transfer assigned them to, and
// sort=name orders them by name. Bug (issue 20, C): the import created its contacts without
// search_text and sort_name, so GET /contacts?q=<their name> found none of them; the database
// now derives both from every contact row (trigger contacts_search_columns).
func TestPortfolio_ImportedContactsAreSearchable(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	agent, other := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	content, err := os.ReadFile(filepath.Join(samples, "musterdatei_041222.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := upload(t, env, co.Secret, map[string]string{"format": "gdv_vu_vermittler", "source": "bestand", "autoCommit": "true",
		"ownerId": agent.ID.String()}, "m.txt", content)
	if r.Status != 202 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var tr transfer
	r.Decode(t, &tr)
	if tr = await(t, env, co.Secret, tr.ID, "committed", "failed"); tr.Status != "committed" || tr.Progress.Contacts != 10 {
		t.Fatalf("transfer: %+v", tr)
	}
	type contact struct {
		ID, FirstName, LastName string
		OwnerID                 *string
	}
	list := func(key, query string) []contact {
		t.Helper()
		r := env.Do(t, apitest.Request{Path: "/contacts?limit=100&" + query, Key: key})
		if r.Status != 200 {
			t.Fatalf("GET /contacts?%s: %d %s", query, r.Status, r.Body)
		}
		var p struct{ Data []contact }
		r.Decode(t, &p)
		return p.Data
	}
	for _, k := range []struct{ name, key string }{{"company key", co.Secret}, {"admin's key", co.UserKey(t, co.Admin)},
		{"owning agent", co.UserKey(t, agent)}} {
		// Kitzelpfütze is Latin-1 in the file: the term in capitals finds the folded row.
		for _, q := range []string{"POLLSMANN", "KITZELPF%C3%9CTZE", "pooosmann"} {
			got := list(k.key, "q="+q)
			if len(got) != 1 || got[0].OwnerID == nil || *got[0].OwnerID != agent.ID.String() {
				t.Errorf("%s, q=%s: %+v, want the one imported contact of the agent", k.name, q, got)
			}
		}
	}
	if got := list(co.UserKey(t, other), "q=pollsmann"); len(got) != 0 {
		t.Errorf("another agent finds %+v", got)
	}
	all := list(co.Secret, "sort=name")
	if len(all) != 10 {
		t.Fatalf("%d contacts, want the 10 imported", len(all))
	}
	for i := 1; i < len(all); i++ {
		prev, cur := strings.ToLower(all[i-1].LastName), strings.ToLower(all[i].LastName)
		if prev > cur {
			t.Errorf("sort=name: %q before %q", all[i-1].LastName, all[i].LastName)
		}
	}
}
