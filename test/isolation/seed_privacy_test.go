package isolation

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedPrivacyTables gives company c a privacy request (a data export of contact, through the
// API; its job does not run here) and a retained record of it. retained_records is closed to
// the app role (only the job role writes it, in an erasure), so its row is written as the
// owner: the isolation checks then prove that no request transaction reads either company's.
func seedPrivacyTables(t *testing.T, env *apitest.Env, c *apitest.Company, contact string) {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/privacy/data-export", Key: c.Secret})
	if r.Status != 202 {
		t.Fatalf("seed privacy request: %d %s", r.Status, r.Body)
	}
	var req struct{ ID uuid.UUID }
	r.Decode(t, &req)
	ctx := context.Background()
	if _, err := env.OwnerDB.ExecContext(ctx, `INSERT INTO retained_records (id, company_id, request_id, contact_id,
		record_type, record_id, basis, data, retain_until, created_at) VALUES ($1, $2, $3, $4, 'contract', $5,
		'HGB §257 (1) Nr. 2, (4)', '{}', $6, now())`, uuid.Must(uuid.NewV7()), c.ID, req.ID, contact,
		uuid.Must(uuid.NewV7()), time.Now().AddDate(6, 0, 0)); err != nil {
		t.Fatalf("seed retained record: %v", err)
	}
}
