package isolation

import (
	"context"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedExtractionTables gives company c a contract extraction through the API (issue 25): points
// granted by the operator, the start on the contact's first document, which writes the
// extraction and its ledger line (point_entries.extraction_id); its job does not run here.
func seedExtractionTables(t *testing.T, env *apitest.Env, c *apitest.Company, contact string) {
	t.Helper()
	if _, err := env.Ops.GrantPoints(context.Background(), c.ID, 1, "seed"); err != nil {
		t.Fatalf("seed points: %v", err)
	}
	docs := apitest.Get[apitest.Page[struct{ ID string }]](t, env, c.Secret, "/documents?contactId="+contact)
	if len(docs.Data) == 0 {
		t.Fatal("seed: the contact has no document to extract")
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/documents/" + docs.Data[0].ID + "/extractions", Key: c.Secret,
		Body: map[string]any{}})
	if r.Status != 202 {
		t.Fatalf("seed extraction: %d %s", r.Status, r.Body)
	}
}
