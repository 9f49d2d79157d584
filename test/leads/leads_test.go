// Package leads tests the lead board of the Public API v1: /leads, /lead-stages, the external
// upsert, conversion into contacts and attachments.
package leads

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
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

type stage struct {
	ID       string `json:"id"`
	Key      string `json:"key"`
	Name     string `json:"name"`
	Color    string `json:"color"`
	Position int    `json:"position"`
	IsFinal  bool   `json:"isFinal"`
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

// addAttachment stores a file on a lead, as the multipart intake will.
func addAttachment(t *testing.T, env *apitest.Env, companyID uuid.UUID, leadID, name, contentType string, content []byte) string {
	t.Helper()
	var id string
	env.InCompany(t, companyID, func(ctx context.Context, db *ent.Client) error {
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
	env.InCompany(t, companyID, func(ctx context.Context, db *ent.Client) error {
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
	var page apitest.Page[struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}]
	r := env.Do(t, apitest.Request{Path: "/events?limit=200&types=" + types, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &page)
	return page.Data
}

func ptr[T any](v T) *T { return &v }
