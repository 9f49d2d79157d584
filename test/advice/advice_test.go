// Package advice tests the IDD advice records: create, read, list, patch, the protocol PDF,
// locking by a completed signature request, visibility and isolation.
package advice

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	advicepkg "github.com/brokerdesk/brokerdesk/app/advice"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type product struct {
	Insurer      string  `json:"insurer"`
	Product      string  `json:"product"`
	ContractType *string `json:"contractType"`
	Premium      *string `json:"premium"`
	Recommended  bool    `json:"recommended"`
	Chosen       bool    `json:"chosen"`
}

type record struct {
	ID             string    `json:"id"`
	ContactID      string    `json:"contactId"`
	ContractID     *string   `json:"contractId"`
	AdvisorID      *string   `json:"advisorId"`
	CreatorID      *string   `json:"creatorId"`
	ConsultedAt    time.Time `json:"consultedAt"`
	Channel        string    `json:"channel"`
	Subject        string    `json:"subject"`
	CustomerWishes string    `json:"customerWishes"`
	CustomerNeeds  string    `json:"customerNeeds"`
	Advice         string    `json:"advice"`
	Reasons        string    `json:"reasons"`
	Products       []product `json:"products"`
	AdviceWaived   bool      `json:"adviceWaived"`
	Notes          string    `json:"notes"`
	Status         string    `json:"status"`
	LockedAt       *string   `json:"lockedAt"`
	DocumentID     *string   `json:"documentId"`
}

// newCompany is a company licensing the advice feature.
func newCompany(t *testing.T, env *apitest.Env) *apitest.Company {
	t.Helper()
	return env.NewCompany(t, "leads", "advice")
}

// newContact stores a private contact with umlauts in its name (owner optional).
func newContact(t *testing.T, env *apitest.Env, company uuid.UUID, last string, owner *uuid.UUID) string {
	t.Helper()
	var id string
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName("Jürgen").SetLastName(last).SetNillableOwnerID(owner).
			SetGroups(schematype.ContactGroups{"address": {"street": "Große Straße", "houseNumber": "3", "zipCode": "10115", "city": "Berlin"}}).
			Save(ctx)
		if err == nil {
			id = c.ID.String()
		}
		return err
	})
	return id
}

// newContract creates a contract of contact through the API (insurer 5501 of the catalog).
func newContract(t *testing.T, env *apitest.Env, key, contact string) string {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: key})
	var cat struct{ Data []struct{ ID string } }
	r.Decode(t, &cat)
	if r.Status != 200 || len(cat.Data) != 1 {
		t.Fatalf("insurer 5501: %d %s", r.Status, r.Body)
	}
	c := apitest.Create[struct{ ID string }](t, env, key, "/contracts", map[string]any{"contactId": contact,
		"insurerId": cat.Data[0].ID, "policyNumber": "HR-" + uuid.NewString()[:8], "type": "130", "status": "active"})
	return c.ID
}

// body is a valid AdviceRecordInput for contact with extra fields on top.
func body(contact string, extra map[string]any) map[string]any {
	b := map[string]any{"contactId": contact, "consultedAt": "2026-11-30T14:30:00+01:00", "subject": "Hausrat nach Umzug"}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func create(t *testing.T, env *apitest.Env, key string, b map[string]any) record {
	t.Helper()
	return apitest.Create[record](t, env, key, "/advice-records", b)
}

func get(t *testing.T, env *apitest.Env, key, id string) record {
	t.Helper()
	return apitest.Get[record](t, env, key, "/advice-records/"+id)
}

func list(t *testing.T, env *apitest.Env, key, query string) []record {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/advice-records?" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("list advice records: %d %s", r.Status, r.Body)
	}
	var p apitest.Page[record]
	r.Decode(t, &p)
	return p.Data
}

func ids(rs []record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func patch(key, id string, b any) apitest.Request {
	return apitest.Request{Method: "PATCH", Path: "/advice-records/" + id, Key: key, Body: b,
		Header: map[string]string{"Content-Type": "application/merge-patch+json"}}
}

type event struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// setDocument makes doc the record's protocol as rendering would (a plain PDF upload stands in
// for a rendered protocol where the test is about the record, not the PDF).
func setDocument(t *testing.T, env *apitest.Env, company uuid.UUID, id, doc string) {
	t.Helper()
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		return db.AdviceRecord.UpdateOneID(uuid.MustParse(id)).SetDocumentID(uuid.MustParse(doc)).Exec(ctx)
	})
}

// completeSigning runs the advice area's LockSigned as the signatures module does when a
// request of contact over docs completes: in a company transaction.
func completeSigning(t *testing.T, env *apitest.Env, company uuid.UUID, contact string, docs ...string) {
	t.Helper()
	r := &ent.SignatureRequest{ID: uuid.New(), ContactID: uuid.MustParse(contact)}
	for _, d := range docs {
		id := uuid.MustParse(d)
		r.Documents = append(r.Documents, schematype.SignatureSource{DocumentID: &id, Filename: "p.pdf", Pages: 1})
	}
	// A standard document of the request (no DocumentID) is passed over.
	r.Documents = append(r.Documents, schematype.SignatureSource{StandardDocumentID: new(uuid.UUID), Filename: "s.pdf", Pages: 1})
	svc := advicepkg.NewService(events.NewService(), nil, time.Now)
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		return svc.LockSigned(tenancy.WithClient(ctx, db), r)
	})
}

func contains(xs []string, x string) bool { return slices.Contains(xs, x) }
