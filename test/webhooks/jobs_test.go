package webhooks

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestJobs_PeriodicPurges: the purges are river periodic jobs, run by the process river elected
// leader (RunOnStart: right after it starts); the delivery log purge removes what is older than
// 30 days and nothing younger.
func TestJobs_PeriodicPurges(t *testing.T) {
	t.Parallel()
	env := setup(t)
	owner, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	deadline := time.Now().Add(60 * time.Second)
	for _, kind := range []string{"maintenance_purge", "webhook_purge", "webhook_sweep"} {
		for {
			var n int
			if err := owner.QueryRow(`SELECT count(*) FROM river.river_job WHERE kind = $1 AND state = 'completed'`, kind).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no completed %s job", kind)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	co := env.NewCompany(t)
	rcv := newReceiver(t)
	ep := apitest.Create[endpoint](t, env, co.Secret, "/webhook-endpoints", map[string]any{"url": rcv.URL, "events": []string{"*"}})
	ctx := context.Background()
	insert := func(age time.Duration) uuid.UUID {
		id := uuid.New()
		if _, err := owner.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, company_id, created_at, updated_at,
			endpoint_id, event_id, event_type, attempt, status) VALUES ($1, $2, now() - $3::interval, now(), $4, gen_random_uuid(),
			'lead.created', 1, 'succeeded')`, id, co.ID, age.String(), ep.ID); err != nil {
			t.Fatal(err)
		}
		return id
	}
	old, young := insert(31*24*time.Hour), insert(29*24*time.Hour)
	var purged int64
	if err := env.AppDB.QueryRowContext(ctx, "SELECT webhook_purge()").Scan(&purged); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uuid.UUID]bool{old: false, young: true} {
		var n int
		if err := owner.QueryRow(`SELECT count(*) FROM webhook_deliveries WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != want {
			t.Errorf("delivery %s kept=%v, want %v (purged %d)", id, n == 1, want, purged)
		}
	}
	// The log lists 30 days only.
	if d := deliveries(t, env, co.Secret, ep.ID, ""); len(d) != 1 {
		t.Errorf("log lists %d rows, want the young one", len(d))
	}
}
