package portfolio

import (
	"os"
	"path/filepath"
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
