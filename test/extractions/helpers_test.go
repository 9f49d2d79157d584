package extractions

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/textproto"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/pointentry"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type idOnly struct {
	ID string `json:"id"`
}

type field struct {
	Key        string  `json:"key"`
	Value      any     `json:"value"`
	Confidence float64 `json:"confidence"`
	Page       int     `json:"page"`
	Evidence   string  `json:"evidence"`
	Rule       string  `json:"rule"`
}

type extraction struct {
	ID         string  `json:"id"`
	Status     string  `json:"status"`
	ContractID *string `json:"contractId"`
	Method     *string `json:"method"`
	Pages      int     `json:"pages"`
	Points     int64   `json:"points"`
	Fields     []field `json:"fields"`
	Error      *string `json:"error"`
}

func (e extraction) value(k string) any {
	for _, f := range e.Fields {
		if f.Key == k {
			return f.Value
		}
	}
	return nil
}

type contract struct {
	ID               string  `json:"id"`
	ContactID        string  `json:"contactId"`
	InsurerID        string  `json:"insurerId"`
	PolicyNumber     string  `json:"policyNumber"`
	Type             string  `json:"type"`
	Status           string  `json:"status"`
	StartDate        *string `json:"startDate"`
	EndDate          *string `json:"endDate"`
	Premium          any     `json:"premium"`
	PaymentFrequency *string `json:"paymentFrequency"`
	Version          int64   `json:"version"`
}

// company is a company with points (0: none granted) and a contact.
func company(t testing.TB, env *apitest.Env, points int64) (*apitest.Company, string) {
	t.Helper()
	co := env.NewCompany(t)
	if points > 0 {
		if _, err := env.Ops.GrantPoints(context.Background(), co.ID, points, "test"); err != nil {
			t.Fatalf("grant points: %v", err)
		}
	}
	ct := apitest.Create[idOnly](t, env, co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Erika", "lastName": "Mustermann"})
	return co, ct.ID
}

func balance(t testing.TB, env *apitest.Env, co *apitest.Company) int64 {
	t.Helper()
	b, err := env.Ops.PointsBalance(context.Background(), co.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upload stores content as a policy document of contact and returns its id.
func upload(t testing.TB, env *apitest.Env, key, contact, filename, contentType string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("type", "policy")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", contentType)
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(content)
	_ = w.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var d idOnly
	r.Decode(t, &d)
	return d.ID
}

// start starts an extraction of document and returns it (202 or the test fails).
func start(t testing.TB, env *apitest.Env, key, document string, body map[string]any) extraction {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/documents/" + document + "/extractions", Key: key, Body: body})
	if r.Status != 202 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	var e extraction
	r.Decode(t, &e)
	return e
}

// await polls the extraction until it completed or failed.
func await(t testing.TB, env *apitest.Env, key, id string) extraction {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		e := apitest.Get[extraction](t, env, key, "/extractions/"+id)
		if e.Status == "completed" || e.Status == "failed" {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("extraction %s is %s after 3 min", id, e.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// insurerID is the catalog insurer named name.
func insurerID(t testing.TB, env *apitest.Env, co *apitest.Company, name string) string {
	t.Helper()
	var id uuid.UUID
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		id, err = db.Insurer.Query().Where(insurer.Name(name)).OnlyID(ctx)
		return err
	})
	return id.String()
}

// ledger is the company's points ledger as (reason, delta, extraction id) lines.
func ledger(t testing.TB, env *apitest.Env, co *apitest.Company) []*ent.PointEntry {
	t.Helper()
	var out []*ent.PointEntry
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		out, err = db.PointEntry.Query().Where(pointentry.ReasonNEQ("test")).Order(ent.Asc(pointentry.FieldCreatedAt)).All(ctx)
		return err
	})
	return out
}

// countExtractions is how many extractions the company has (every one, through RLS as the app).
func countExtractions(t testing.TB, env *apitest.Env, co *apitest.Company) int {
	t.Helper()
	var n int
	env.InCompany(t, co.ID, func(ctx context.Context, db *ent.Client) error {
		var err error
		n, err = db.ContractExtraction.Query().Count(ctx)
		return err
	})
	return n
}
