package webhooks

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestWebhooks_UserVisibilityAtDelivery: an endpoint registered with a user-bound key receives
// only events about leads that user may see, decided at delivery from the user's role now: a
// manager (sees all) who becomes an agent (own and delegated) stops receiving colleagues' leads.
func TestWebhooks_UserVisibilityAtDelivery(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	u := env.NewUser(t, co, "manager")
	other := env.NewUser(t, co, "agent")
	userKey := co.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, UserID: &u.ID,
		Scopes: []string{"webhooks:write", "leads:read"}})
	rcv := newReceiver(t)
	apitest.Create[endpoint](t, env, userKey.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"lead.created"}})
	// A company-level endpoint proves every event below was dispatched.
	all := newReceiver(t)
	apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": all.URL, "events": []string{"lead.created"}})

	lead := func(last, owner string) { t.Helper(); ownedLead(t, env, co.Secret, last, owner) }
	lead("Kollege", other.ID.String()) // the manager sees it
	rcv.waitFor(t, 30*time.Second, "the colleague's lead while a manager", atLeast(1))

	if err := env.Operator(context.Background(), co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET role = 'agent' WHERE id = $1`, u.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lead("Fremd", other.ID.String()) // no longer visible
	lead("Eigen", u.ID.String())     // the user's own
	all.waitFor(t, 30*time.Second, "all three leads at the company endpoint", atLeast(3))
	rcv.waitFor(t, 30*time.Second, "the user's own lead", atLeast(2))
	time.Sleep(time.Second) // room for a wrong delivery to arrive

	if names := lastNames(t, rcv.requests()); len(names) != 2 || names[0] != "Kollege" || names[1] != "Eigen" {
		t.Fatalf("the user's endpoint got leads %v, want [Kollege Eigen]", names)
	}
}
