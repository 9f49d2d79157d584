// Package leads tests the lead board of the Public API v1: /leads, /lead-stages, the external
// upsert, conversion into contacts and attachments.
package leads

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// lead is the Lead resource as tests read it.
type lead struct {
	ID               string            `json:"id"`
	FirstName        string            `json:"firstName"`
	LastName         string            `json:"lastName"`
	Email            *string           `json:"email"`
	Phone            *string           `json:"phone"`
	Source           *string           `json:"source"`
	Notes            string            `json:"notes"`
	AdditionalFields map[string]string `json:"additionalFields"`
	StageID          string            `json:"stageId"`
	OwnerID          *string           `json:"ownerId"`
	Converted        bool              `json:"converted"`
	ConvertedAt      *time.Time        `json:"convertedAt"`
	ContactID        *string           `json:"contactId"`
	Test             bool              `json:"test"`
	Attachments      []struct {
		ID          string `json:"id"`
		Filename    string `json:"filename"`
		ContentType string `json:"contentType"`
		Size        int64  `json:"size"`
	} `json:"attachments"`
	ExternalReferences []struct {
		Source     string `json:"source"`
		ExternalID string `json:"externalId"`
	} `json:"externalReferences"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

type leadPage struct {
	Data       []lead `json:"data"`
	Pagination struct {
		NextCursor string `json:"nextCursor"`
		HasMore    bool   `json:"hasMore"`
	} `json:"pagination"`
}

type stage struct {
	ID       string `json:"id"`
	Key      string `json:"key"`
	Name     string `json:"name"`
	Color    string `json:"color"`
	Position int    `json:"position"`
	IsFinal  bool   `json:"isFinal"`
}

// mustCreateLead creates a lead through POST /leads.
func mustCreateLead(t *testing.T, env *apitest.Env, key string, body any) lead {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("create lead: %d %s", r.Status, r.Body)
	}
	var l lead
	r.Decode(t, &l)
	return l
}

func mustGetLead(t *testing.T, env *apitest.Env, key, id string) lead {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/leads/" + id, Key: key})
	if r.Status != 200 {
		t.Fatalf("get lead %s: %d %s", id, r.Status, r.Body)
	}
	var l lead
	r.Decode(t, &l)
	return l
}

func mustStages(t *testing.T, env *apitest.Env, key string) map[string]stage {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/lead-stages", Key: key})
	if r.Status != 200 {
		t.Fatalf("lead stages: %d %s", r.Status, r.Body)
	}
	var body struct {
		Data []stage `json:"data"`
	}
	r.Decode(t, &body)
	out := map[string]stage{}
	for _, s := range body.Data {
		out[s.Key] = s
	}
	return out
}

// fields checks that a 422 lists exactly want ("field:code"), in order.
func fields(want ...string) func(t *testing.T, r *apitest.Response) {
	return func(t *testing.T, r *apitest.Response) {
		t.Helper()
		var got []string
		for _, e := range r.Problem(t).Errors {
			got = append(got, e.Field+":"+e.Code)
		}
		if !slices.Equal(got, want) {
			t.Errorf("errors %v, want %v", got, want)
		}
	}
}

// inCompany runs f in one transaction pinned to companyID as the app role, so RLS applies:
// the way tests create rows no endpoint creates yet (attachments, test leads).
func inCompany(t *testing.T, env *apitest.Env, companyID uuid.UUID, f func(ctx context.Context, db *ent.Client) error) {
	t.Helper()
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(env.AppDB)))
	ctx := tenancy.WithCompany(context.Background(), companyID)
	tx, err := client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f(ctx, tx.Client()); err != nil {
		_ = tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// addAttachment stores a file on a lead, as the multipart intake will.
func addAttachment(t *testing.T, env *apitest.Env, companyID uuid.UUID, leadID, name, contentType string, content []byte) string {
	t.Helper()
	var id string
	inCompany(t, env, companyID, func(ctx context.Context, db *ent.Client) error {
		a, err := db.LeadAttachment.Create().SetLeadID(uuid.MustParse(leadID)).SetFilename(name).
			SetContentType(contentType).SetSize(int64(len(content))).SetContent(content).Save(ctx)
		if err == nil {
			id = a.ID.String()
		}
		return err
	})
	return id
}

// addTestLeads stores n test leads, as intake submissions with _test do.
func addTestLeads(t *testing.T, env *apitest.Env, companyID uuid.UUID, n int) []string {
	t.Helper()
	var ids []string
	inCompany(t, env, companyID, func(ctx context.Context, db *ent.Client) error {
		st, err := db.LeadStage.Query().Where(leadstage.Key("new")).Only(ctx)
		if err != nil {
			return err
		}
		for i := range n {
			email := fmt.Sprintf("test%d@example.com", i)
			l, err := db.Lead.Create().SetStageID(st.ID).SetTest(true).SetFirstName("Test").SetLastName(fmt.Sprint(i)).
				SetEmail(email).SetEmailKey(email).Save(ctx)
			if err != nil {
				return err
			}
			ids = append(ids, l.ID.String())
		}
		return nil
	})
	return ids
}

// events returns the events of types the key sees, oldest first.
func events(t *testing.T, env *apitest.Env, key, types string) []struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
} {
	t.Helper()
	var page struct {
		Data []struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=" + types, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &page)
	return page.Data
}

func ptr[T any](v T) *T { return &v }
